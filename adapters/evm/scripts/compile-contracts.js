#!/usr/bin/env node
'use strict';
/**
 * Compiles adapters/evm/contracts/{DepositForwarder,BatchSweeper}.sol with the installed npm
 * `solc` (solc-js) and `@openzeppelin/contracts`, and writes src/delegation/artifacts.ts: ABI,
 * creation and runtime bytecode, the compiler version, settings and a SHA-256 of every source
 * fed to the compiler (ours and OpenZeppelin's). The adapter's runtime reads only that file, so
 * it needs neither solc nor OpenZeppelin.
 *
 *   node adapters/evm/scripts/compile-contracts.js           # (re)write artifacts.ts
 *   node adapters/evm/scripts/compile-contracts.js --check   # exit 1 if artifacts.ts is stale
 *
 * Also a module: src/delegation/artifacts.test.ts recompiles through compileProduction() and
 * compares, and the anvil tests compile the test-only contracts (contracts/test/) through
 * compileSources(). The settings are fixed here; changing them changes every address.
 */
const { createHash } = require('node:crypto');
const { readFileSync, writeFileSync, readdirSync } = require('node:fs');
const { join, posix } = require('node:path');

const PACKAGE_DIR = join(__dirname, '..');
const CONTRACTS_DIR = join(PACKAGE_DIR, 'contracts');
const ARTIFACTS_FILE = join(PACKAGE_DIR, 'src', 'delegation', 'artifacts.ts');

/** The production contracts: source unit (path under contracts/) and contract name. */
const PRODUCTION = [
  { unit: 'DepositForwarder.sol', name: 'DepositForwarder' },
  { unit: 'BatchSweeper.sol', name: 'BatchSweeper' },
];

/**
 * Compiler settings. Optimizer runs 1,000,000: the code runs once per swept entry for ever and is
 * deployed once per chain. evmVersion prague: what solc 0.8.28 knows as the newest (EIP-7702
 * needs Prague on the chain anyway). Metadata left as solc's default (IPFS hash appended), so the
 * deployed code can be verified with the sources.
 */
const SETTINGS = Object.freeze({
  optimizer: { enabled: true, runs: 1_000_000 },
  evmVersion: 'prague',
});

const OUTPUT = ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'evm.deployedBytecode.immutableReferences'];

function loadSolc() {
  return require('solc');
}

/** Where a source unit's text lives: under contracts/ or in the @openzeppelin/contracts package. */
function readUnit(unit) {
  if (unit.startsWith('@openzeppelin/contracts/')) {
    return readFileSync(require.resolve(unit, { paths: [PACKAGE_DIR] }), 'utf8');
  }
  return readFileSync(join(CONTRACTS_DIR, ...unit.split('/')), 'utf8');
}

const IMPORT = /^\s*import\s+(?:[^'"]*?\bfrom\s+)?["']([^"']+)["']\s*;/gm;

/** The units and every unit they import, recursively (solc's own path resolution: relative to the importing unit). */
function collectSources(roots) {
  const sources = {};
  const pending = [...roots];
  while (pending.length > 0) {
    const unit = pending.pop();
    if (sources[unit]) continue;
    const content = readUnit(unit);
    sources[unit] = { content };
    for (const m of content.matchAll(IMPORT)) {
      const target = m[1].startsWith('.') ? posix.normalize(posix.join(posix.dirname(unit), m[1])) : m[1];
      pending.push(target);
    }
  }
  return Object.fromEntries(Object.keys(sources).sort().map((k) => [k, sources[k]]));
}

/** SHA-256 over the sorted units, each as unit NUL content NUL: any edit, ours or OpenZeppelin's, changes it. */
function sourcesHash(sources) {
  const h = createHash('sha256');
  for (const unit of Object.keys(sources).sort()) h.update(unit).update('\0').update(sources[unit].content).update('\0');
  return `0x${h.digest('hex')}`;
}

/** Compiles the given root units (paths under contracts/) with SETTINGS; throws with solc's errors. */
function compileSources(roots) {
  const solc = loadSolc();
  const sources = collectSources(roots);
  const input = {
    language: 'Solidity',
    sources,
    settings: { ...SETTINGS, outputSelection: { '*': { '*': OUTPUT } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors || []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  // Warnings about our own units (OpenZeppelin's are not ours to fix).
  const warnings = (out.errors || []).filter((e) => e.severity !== 'error' && (!e.sourceLocation || roots.includes(e.sourceLocation.file)));
  return { solcVersion: solc.version(), sources, sourcesHash: sourcesHash(sources), contracts: out.contracts, warnings };
}

/** One compiled contract in the shape artifacts.ts holds. */
function artifactOf(compiled, unit, name) {
  const c = compiled.contracts[unit] && compiled.contracts[unit][name];
  if (!c) throw new Error(`solc produced no ${unit}:${name}`);
  return {
    abi: c.abi,
    bytecode: `0x${c.evm.bytecode.object}`,
    runtimeBytecode: `0x${c.evm.deployedBytecode.object}`,
    immutableReferences: c.evm.deployedBytecode.immutableReferences || {},
  };
}

/** The production contracts compiled now: what artifacts.ts must hold. */
function compileProduction() {
  const compiled = compileSources(PRODUCTION.map((p) => p.unit));
  const artifacts = {};
  for (const p of PRODUCTION) artifacts[p.name] = artifactOf(compiled, p.unit, p.name);
  return { solcVersion: compiled.solcVersion, settings: SETTINGS, sourcesHash: compiled.sourcesHash, units: Object.keys(compiled.sources), artifacts, warnings: compiled.warnings };
}

/** The test-only contracts (contracts/test/*.sol) compiled now, by contract name. */
function compileTestContracts() {
  const units = readdirSync(join(CONTRACTS_DIR, 'test')).filter((f) => f.endsWith('.sol')).sort().map((f) => `test/${f}`);
  const compiled = compileSources(units);
  const byName = {};
  for (const unit of units) {
    for (const name of Object.keys(compiled.contracts[unit] || {})) byName[name] = artifactOf(compiled, unit, name);
  }
  return byName;
}

function openZeppelinVersion() {
  return JSON.parse(readFileSync(require.resolve('@openzeppelin/contracts/package.json', { paths: [PACKAGE_DIR] }), 'utf8')).version;
}

/** artifacts.ts text for a compileProduction() result. */
function renderArtifacts(result) {
  const json = (v) => JSON.stringify(v);
  const lines = [
    '// GENERATED by adapters/evm/scripts/compile-contracts.js: do not edit. Run `node adapters/evm/scripts/compile-contracts.js`',
    '// after changing adapters/evm/contracts/*.sol; artifacts.test.ts recompiles and fails when this file is stale.',
    '/* eslint-disable */',
    '',
    '/** The compiler (npm solc, solc-js) and the exact settings the bytecode below came from. */',
    `export const COMPILER = { version: ${json(result.solcVersion)}, settings: ${json(result.settings)} } as const;`,
    '',
    `/** @openzeppelin/contracts version whose sources were compiled in (SafeERC20, Address, IERC20, IERC20Permit). */`,
    `export const OPENZEPPELIN_VERSION = ${json(openZeppelinVersion())};`,
    '',
    '/** Every source unit fed to solc (ours under adapters/evm/contracts/, then OpenZeppelin\'s). */',
    `export const SOURCE_UNITS: readonly string[] = ${json(result.units)};`,
    '',
    '/** SHA-256 over the sorted units, each as `unit NUL content NUL` (scripts/compile-contracts.js sourcesHash). */',
    `export const SOURCES_SHA256 = ${json(result.sourcesHash)};`,
    '',
    '/** A compiled contract: ABI, creation code (without constructor arguments), runtime code (immutables zeroed, at immutableReferences). */',
    'export interface ContractArtifact {',
    '  readonly abi: readonly unknown[];',
    '  readonly bytecode: string;',
    '  readonly runtimeBytecode: string;',
    '  readonly immutableReferences: Readonly<Record<string, ReadonlyArray<{ readonly start: number; readonly length: number }>>>;',
    '}',
    '',
  ];
  for (const p of PRODUCTION) {
    const a = result.artifacts[p.name];
    lines.push(
      `/** contracts/${p.unit} */`,
      `export const ${p.name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}_ARTIFACT: ContractArtifact = {`,
      `  abi: ${json(a.abi)},`,
      `  bytecode: ${json(a.bytecode)},`,
      `  runtimeBytecode: ${json(a.runtimeBytecode)},`,
      `  immutableReferences: ${json(a.immutableReferences)},`,
      '};',
      '',
    );
  }
  return lines.join('\n');
}

module.exports = { SETTINGS, PRODUCTION, CONTRACTS_DIR, ARTIFACTS_FILE, collectSources, sourcesHash, compileSources, compileProduction, compileTestContracts, renderArtifacts };

if (require.main === module) {
  const result = compileProduction();
  for (const w of result.warnings) process.stderr.write(`${w.formattedMessage}\n`);
  const text = renderArtifacts(result);
  if (process.argv.includes('--check')) {
    const current = readFileSync(ARTIFACTS_FILE, 'utf8');
    if (current !== text) {
      process.stderr.write(`${ARTIFACTS_FILE} is stale: run node adapters/evm/scripts/compile-contracts.js\n`);
      process.exit(1);
    }
    process.stdout.write(`${ARTIFACTS_FILE} is up to date (${result.solcVersion}, sources ${result.sourcesHash})\n`);
  } else {
    writeFileSync(ARTIFACTS_FILE, text);
    process.stdout.write(`wrote ${ARTIFACTS_FILE} (${result.solcVersion}, sources ${result.sourcesHash})\n`);
    for (const p of PRODUCTION) {
      const a = result.artifacts[p.name];
      process.stdout.write(`  ${p.name}: runtime ${(a.runtimeBytecode.length - 2) / 2} bytes, creation ${(a.bytecode.length - 2) / 2} bytes\n`);
    }
  }
}
