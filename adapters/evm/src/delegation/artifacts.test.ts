import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BATCH_SWEEPER_ARTIFACT, COMPILER, DEPOSIT_FORWARDER_ARTIFACT, SOURCES_SHA256, SOURCE_UNITS, type ContractArtifact } from './artifacts';

interface Compiled {
  solcVersion: string;
  settings: unknown;
  sourcesHash: string;
  units: string[];
  artifacts: Record<string, ContractArtifact>;
}
interface CompileScript {
  compileProduction(): Compiled;
  renderArtifacts(result: Compiled): string;
  ARTIFACTS_FILE: string;
}

/** scripts/compile-contracts.js, the generator of artifacts.ts (a plain script, outside the TypeScript project). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const script = require(join(__dirname, '..', '..', 'scripts', 'compile-contracts.js')) as CompileScript;

describe('delegation: committed artifacts = the sources compiled now', function () {
  this.timeout(120_000);
  let fresh: Compiled;

  before(function () {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const installed = (require('solc') as { version(): string }).version();
    expect(installed, `installed solc ${installed} is not the one artifacts.ts was compiled with (${COMPILER.version}): `
      + 'the bytecode, and so every deployed address, would change; install that solc or regenerate deliberately').to.equal(COMPILER.version);
    fresh = script.compileProduction();
  });

  it('the sources hash (ours and OpenZeppelin\'s) matches: no .sol was edited without regenerating', () => {
    expect(fresh.units).to.deep.equal(SOURCE_UNITS);
    expect(fresh.sourcesHash, 'run node adapters/evm/scripts/compile-contracts.js').to.equal(SOURCES_SHA256);
    expect(fresh.settings).to.deep.equal(COMPILER.settings);
  });

  it('creation and runtime bytecode, ABI and immutable references are byte-identical', () => {
    for (const [name, committed] of [['DepositForwarder', DEPOSIT_FORWARDER_ARTIFACT], ['BatchSweeper', BATCH_SWEEPER_ARTIFACT]] as const) {
      const now = fresh.artifacts[name]!;
      expect(now.bytecode, `${name} creation code`).to.equal(committed.bytecode);
      expect(now.runtimeBytecode, `${name} runtime code`).to.equal(committed.runtimeBytecode);
      expect(now.abi, `${name} ABI`).to.deep.equal(committed.abi);
      expect(now.immutableReferences, `${name} immutables`).to.deep.equal(committed.immutableReferences);
    }
  });

  it('artifacts.ts is exactly what the script writes (no hand edit)', () => {
    expect(readFileSync(script.ARTIFACTS_FILE, 'utf8') === script.renderArtifacts(fresh), 'artifacts.ts differs from the generated text').to.equal(true);
  });
});
