import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig, ConfigError } from './config';

describe('config: environment and config file', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-cfg-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('has working defaults for a newcomer (embedded database, dev master key file)', () => {
    const c = loadConfig({}, tmp);
    expect(c.port).to.equal(8080);
    expect(c.databaseUrl).to.equal(null);
    expect(c.dataDir).to.equal(path.join(tmp, 'data'));
    expect(c.masterKey).to.deep.equal({ source: 'dev-file', value: null, file: path.join(tmp, 'data', 'master.key') });
    expect(c.bodyLimitBytes).to.equal(1048576);
  });

  it('names the bad key', () => {
    expect(() => loadConfig({ PORT: 'abc' }, tmp)).to.throw(ConfigError, /^PORT: must be an integer/);
    expect(() => loadConfig({ PORT: '70000' }, tmp)).to.throw(ConfigError, /^PORT: must be between/);
    expect(() => loadConfig({ WCS_LOG_LEVEL: 'loud' }, tmp)).to.throw(ConfigError, /^WCS_LOG_LEVEL: must be one of/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' }, tmp)).to.throw(ConfigError, /^DATABASE_URL:/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://x/y' }, tmp)).to.throw(ConfigError, /^WCS_MASTER_KEY: required/);
  });

  it('accepts the known key-store backends only, and names WCS_KEYSTORE_BACKEND otherwise', () => {
    expect(loadConfig({}, tmp).keystoreBackend).to.equal('software');
    expect(loadConfig({ WCS_KEYSTORE_BACKEND: '' }, tmp).keystoreBackend).to.equal('software');
    expect(loadConfig({ WCS_KEYSTORE_BACKEND: 'software' }, tmp).keystoreBackend).to.equal('software');
    expect(loadConfig({ WCS_KEYSTORE_BACKEND: 'pkcs11' }, tmp).keystoreBackend).to.equal('pkcs11');
    for (const bad of ['hsm', 'PKCS11', 'software ', 'constructor', 'toString']) {
      expect(() => loadConfig({ WCS_KEYSTORE_BACKEND: bad }, tmp), bad).to.throw(ConfigError, /^WCS_KEYSTORE_BACKEND: must be one of software, pkcs11, got "/);
    }
  });

  it('delegated sweeps: WCS_COLLECT_BATCH_MAX_ENTRIES (default 100, 1 to 500) and WCS_COLLECT_BATCH_MAX_GAS (default 8000000, 500000 to 30000000)', () => {
    const d = loadConfig({}, tmp).withdrawals;
    expect([d.collectBatchMaxEntries, d.collectBatchMaxGas]).to.deep.equal([100, 8_000_000]);
    const c = loadConfig({ WCS_COLLECT_BATCH_MAX_ENTRIES: '50', WCS_COLLECT_BATCH_MAX_GAS: '2000000' }, tmp).withdrawals;
    expect([c.collectBatchMaxEntries, c.collectBatchMaxGas]).to.deep.equal([50, 2_000_000]);
    expect(() => loadConfig({ WCS_COLLECT_BATCH_MAX_ENTRIES: '0' }, tmp)).to.throw(ConfigError, /^WCS_COLLECT_BATCH_MAX_ENTRIES: must be between 1 and 500/);
    expect(() => loadConfig({ WCS_COLLECT_BATCH_MAX_GAS: '100' }, tmp)).to.throw(ConfigError, /^WCS_COLLECT_BATCH_MAX_GAS: must be between/);
  });

  it('collection: WCS_COLLECT_MAX_INPUTS (default 200, 1 to 1400) and WCS_COLLECT_MAX_FEE_RATE_<ENV>_<CODE> (positive, at most 3 decimals, kept in thousandths)', () => {
    const d = loadConfig({}, tmp).withdrawals;
    expect(d.collectMaxInputs).to.equal(200);
    expect([...d.collectMaxFeeRates]).to.deep.equal([]);
    const c = loadConfig({ WCS_COLLECT_MAX_INPUTS: '20', WCS_COLLECT_MAX_FEE_RATE_TEST_BTCREG: '2.5', WCS_COLLECT_MAX_FEE_RATE_LIVE_BTC: '40', WCS_COLLECT_MAX_FEE_RATE_TEST_X: '' }, tmp).withdrawals;
    expect(c.collectMaxInputs).to.equal(20);
    expect([...c.collectMaxFeeRates].sort()).to.deep.equal([['live:BTC', 40_000n], ['test:BTCREG', 2_500n]]);
    expect(() => loadConfig({ WCS_COLLECT_MAX_INPUTS: '0' }, tmp)).to.throw(ConfigError, /^WCS_COLLECT_MAX_INPUTS: must be between 1 and 1400/);
    expect(() => loadConfig({ WCS_COLLECT_MAX_INPUTS: '1401' }, tmp)).to.throw(ConfigError, /^WCS_COLLECT_MAX_INPUTS: must be between/);
    expect(() => loadConfig({ WCS_COLLECT_MAX_INPUTS: 'x' }, tmp)).to.throw(ConfigError, /^WCS_COLLECT_MAX_INPUTS: must be an integer/);
    for (const bad of ['0', '0.000', '-1', '1.2345', 'abc', '1e3', '.5']) {
      expect(() => loadConfig({ WCS_COLLECT_MAX_FEE_RATE_TEST_BTCREG: bad }, tmp), bad).to.throw(ConfigError, /^WCS_COLLECT_MAX_FEE_RATE_TEST_BTCREG: must be a positive number/);
    }
  });

  it('validates the config file and names the offending entry', () => {
    const f = path.join(tmp, 'bad.json');
    fs.writeFileSync(f, JSON.stringify({ chains: [{ id: 9, code: 'BASE', name: 'Base', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'ETH', decimals: 'eighteen', confirmations: 12, evmChainId: 8453 }] }));
    expect(() => loadConfig({ WCS_CONFIG: f }, tmp)).to.throw(ConfigError, /chains\[0\]\.decimals/);
    fs.writeFileSync(f, JSON.stringify({ chainz: [] }));
    expect(() => loadConfig({ WCS_CONFIG: f }, tmp)).to.throw(ConfigError, /WCS_CONFIG: .*chainz|Unrecognized key/);
    fs.writeFileSync(f, '{ not json');
    expect(() => loadConfig({ WCS_CONFIG: f }, tmp)).to.throw(ConfigError, /not valid JSON/);
    expect(() => loadConfig({ WCS_CONFIG: path.join(tmp, 'missing.json') }, tmp)).to.throw(ConfigError, /cannot read/);
  });
});

describe('config: the operator console', () => {
  const base = { WCS_MASTER_KEY: 'a'.repeat(64), DATABASE_URL: 'postgres://u@127.0.0.1/db' };
  it('defaults to loopback on 8090 without Secure cookies; each setting is read and checked', () => {
    expect(loadConfig(base).console).to.deep.equal({ port: 8090, host: '127.0.0.1', secureCookies: false });
    expect(loadConfig({ ...base, WCS_CONSOLE_PORT: '0', WCS_CONSOLE_HOST: '0.0.0.0', WCS_CONSOLE_SECURE_COOKIES: 'true' }).console).to.deep.equal({ port: 0, host: '0.0.0.0', secureCookies: true });
    expect(() => loadConfig({ ...base, WCS_CONSOLE_PORT: '8080' })).to.throw(ConfigError, /WCS_CONSOLE_PORT: must differ from PORT/);
    expect(() => loadConfig({ ...base, WCS_CONSOLE_PORT: 'abc' })).to.throw(ConfigError, /WCS_CONSOLE_PORT/);
    expect(() => loadConfig({ ...base, WCS_CONSOLE_HOST: 'not a host!' })).to.throw(ConfigError, /WCS_CONSOLE_HOST/);
    expect(() => loadConfig({ ...base, WCS_CONSOLE_SECURE_COOKIES: 'yes' })).to.throw(ConfigError, /WCS_CONSOLE_SECURE_COOKIES: must be true or false/);
  });
});
