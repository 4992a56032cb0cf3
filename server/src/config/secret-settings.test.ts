import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError, loadConfig } from './config';
import { SECRET_SETTINGS, resolveSecretSettings, stripOneNewline } from './secret-settings';

describe('config: every secret setting has a _FILE form', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-secret-files-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const key = 'ab'.repeat(32);
  const write = (name: string, text: string): string => {
    const f = path.join(tmp, name);
    fs.writeFileSync(f, text, { mode: 0o600 });
    return f;
  };
  const thrown = (fn: () => unknown): Error => {
    try {
      fn();
    } catch (e) {
      return e as Error;
    }
    throw new Error('did not throw');
  };

  it('lists the service\'s own secret settings', () => {
    expect([...SECRET_SETTINGS]).to.deep.equal(['DATABASE_URL', 'WCS_MASTER_KEY', 'WCS_MASTER_KEY_NEXT', 'WCS_METRICS_TOKEN', 'WCS_METRICS_TOKEN_PREVIOUS', 'WCS_RATE_LIMIT_REDIS_URL']);
  });

  it('removes exactly one trailing newline (LF or CRLF), nothing else', () => {
    expect(stripOneNewline('abc\n')).to.equal('abc');
    expect(stripOneNewline('abc\r\n')).to.equal('abc');
    expect(stripOneNewline('abc\n\n')).to.equal('abc\n');
    expect(stripOneNewline(' abc ')).to.equal(' abc ');
    expect(stripOneNewline('abc')).to.equal('abc');
  });

  it('DATABASE_URL_FILE, WCS_MASTER_KEY_FILE, WCS_MASTER_KEY_NEXT_FILE, WCS_METRICS_TOKEN(_PREVIOUS)_FILE, WCS_RATE_LIMIT_REDIS_URL_FILE, WCS_RPC_*_FILE are read', () => {
    const metricsToken = 'm'.repeat(20) + '-current';
    const previousToken = 'p'.repeat(20) + '-previous';
    const c = loadConfig({
      DATABASE_URL_FILE: write('db', 'postgres://wcs:s3cret@db.internal:5432/wcs\n'),
      WCS_MASTER_KEY_FILE: write('mk', key + '\n'),
      WCS_MASTER_KEY_NEXT_FILE: write('mk-next', 'cd'.repeat(32) + '\n'),
      WCS_METRICS_PORT: '9464',
      WCS_METRICS_TOKEN_FILE: write('mt', metricsToken + '\n'),
      WCS_METRICS_TOKEN_PREVIOUS_FILE: write('mt-prev', previousToken),
      WCS_RATE_LIMIT_REDIS_URL_FILE: write('redis', 'redis://:pw@redis.internal:6379\r\n'),
      WCS_RPC_LIVE_ETH_FILE: write('rpc', 'https://eth.example/v3/apikey123\n'),
    }, tmp);
    expect(c.databaseUrl).to.equal('postgres://wcs:s3cret@db.internal:5432/wcs');
    expect(c.masterKey).to.deep.equal({ source: 'file', value: key, file: path.join(tmp, 'mk') });
    expect(c.masterKeyNext).to.deep.equal({ source: 'file', value: 'cd'.repeat(32), file: path.join(tmp, 'mk-next') });
    expect(c.metrics).to.deep.equal({ port: 9464, host: '127.0.0.1', token: metricsToken, previousToken, tokenFile: path.join(tmp, 'mt'), previousTokenFile: path.join(tmp, 'mt-prev') });
    expect(c.rateLimits.redisUrl).to.equal('redis://:pw@redis.internal:6379');
    expect(c.deposits.endpoints.get('live:ETH')?.url).to.equal('https://eth.example/v3/apikey123');
    expect(c.deposits.endpoints.size, 'the _FILE variable is not taken for a chain named ETH_FILE').to.equal(1);
    // the key-store backends get the environment with the values, not the file names of these settings
    expect(c.env.DATABASE_URL_FILE).to.equal(undefined);
    expect(c.env.WCS_RPC_LIVE_ETH).to.equal('https://eth.example/v3/apikey123');
  });

  it('a relative path is taken from the working directory', () => {
    write('rel-db', 'postgres://u@h/db\n');
    expect(loadConfig({ DATABASE_URL_FILE: 'rel-db', WCS_MASTER_KEY: key }, tmp).databaseUrl).to.equal('postgres://u@h/db');
  });

  it('refuses both forms of one setting at once, naming both', () => {
    const f = write('both', 'x\n');
    for (const [name, value] of [
      ['DATABASE_URL', 'postgres://u@h/db'], ['WCS_MASTER_KEY', key], ['WCS_MASTER_KEY_NEXT', key], ['WCS_METRICS_TOKEN', 't'.repeat(20)],
      ['WCS_METRICS_TOKEN_PREVIOUS', 't'.repeat(20)], ['WCS_RATE_LIMIT_REDIS_URL', 'redis://h'], ['WCS_RPC_TEST_BTC', 'http://127.0.0.1:1'],
    ] as const) {
      const e = thrown(() => loadConfig({ WCS_MASTER_KEY: key, [name]: value, [`${name}_FILE`]: f }, tmp));
      expect(e, name).to.be.instanceOf(ConfigError);
      expect(e.message).to.equal(`${name} and ${name}_FILE are both set: set only one of them`);
    }
  });

  it('names the _FILE setting and the path of a file it cannot read, and refuses an empty file; never echoes a secret', () => {
    const missing = path.join(tmp, 'missing');
    const e = thrown(() => loadConfig({ DATABASE_URL_FILE: missing, WCS_MASTER_KEY: key }, tmp));
    expect(e).to.be.instanceOf(ConfigError);
    expect(e.message).to.equal(`DATABASE_URL_FILE: cannot read ${missing}: ENOENT`);
    const empty = write('empty', '\n');
    for (const name of ['DATABASE_URL', 'WCS_MASTER_KEY', 'WCS_METRICS_TOKEN', 'WCS_RATE_LIMIT_REDIS_URL']) {
      expect(() => loadConfig({ DATABASE_URL: 'postgres://u@h/db', WCS_MASTER_KEY: key, WCS_METRICS_PORT: '9464', WCS_MASTER_KEY_FILE: undefined, [name]: undefined, [`${name}_FILE`]: empty }, tmp), name)
        .to.throw(ConfigError, new RegExp(`^${name}_FILE: .* is empty$`));
    }
    const bad = write('bad-token', 'short-token\n');
    const t = thrown(() => loadConfig({ DATABASE_URL: 'postgres://u@h/db', WCS_MASTER_KEY: key, WCS_METRICS_PORT: '9464', WCS_METRICS_TOKEN_FILE: bad }, tmp));
    expect(t.message).to.match(/^WCS_METRICS_TOKEN: must be 16 to 512 printable ASCII characters/);
    expect(t.message).not.to.include('short-token');
    const badUrl = write('bad-url', 'mysql://root:hunter2@db\n');
    const u = thrown(() => loadConfig({ DATABASE_URL_FILE: badUrl, WCS_MASTER_KEY: key }, tmp));
    expect(u.message).to.match(/^DATABASE_URL: must be a postgres/);
    expect(u.message).not.to.include('hunter2');
  });

  it('an empty WCS_MASTER_KEY_NEXT_FILE or WCS_METRICS_TOKEN_PREVIOUS_FILE means unset (a rotation ended by emptying the file)', () => {
    const empty = write('empty2', '');
    const c = loadConfig({ DATABASE_URL: 'postgres://u@h/db', WCS_MASTER_KEY: key, WCS_MASTER_KEY_NEXT_FILE: empty, WCS_METRICS_PORT: '9464', WCS_METRICS_TOKEN: 't'.repeat(20), WCS_METRICS_TOKEN_PREVIOUS_FILE: empty }, tmp);
    expect(c.masterKeyNext).to.equal(null);
    expect(c.metrics).to.deep.equal({ port: 9464, host: '127.0.0.1', token: 't'.repeat(20), previousTokenFile: empty });
  });

  it('WCS_METRICS_TOKEN_PREVIOUS needs WCS_METRICS_TOKEN and the same shape', () => {
    const base = { DATABASE_URL: 'postgres://u@h/db', WCS_MASTER_KEY: key, WCS_METRICS_PORT: '9464' };
    expect(() => loadConfig({ ...base, WCS_METRICS_TOKEN_PREVIOUS: 'p'.repeat(20) }, tmp)).to.throw(ConfigError, /^WCS_METRICS_TOKEN_PREVIOUS: set only during a rotation, together with WCS_METRICS_TOKEN/);
    expect(() => loadConfig({ ...base, WCS_METRICS_TOKEN: 't'.repeat(20), WCS_METRICS_TOKEN_PREVIOUS: 'short' }, tmp)).to.throw(ConfigError, /^WCS_METRICS_TOKEN_PREVIOUS: must be 16 to 512/);
    expect(loadConfig({ ...base, WCS_METRICS_TOKEN: 't'.repeat(20), WCS_METRICS_TOKEN_PREVIOUS: 'p'.repeat(20) }, tmp).metrics)
      .to.deep.equal({ port: 9464, host: '127.0.0.1', token: 't'.repeat(20), previousToken: 'p'.repeat(20) });
  });

  it('resolveSecretSettings leaves other settings (and the key store\'s own _FILE settings) alone', () => {
    const r = resolveSecretSettings({ WCS_KEYSTORE_PASSPHRASE_FILE: '/run/secrets/pp', WCS_PKCS11_PIN_FILE: '/run/secrets/pin', WCS_CONFIG: 'x.json', PORT: '1' }, tmp);
    expect(r.env).to.deep.equal({ WCS_KEYSTORE_PASSPHRASE_FILE: '/run/secrets/pp', WCS_PKCS11_PIN_FILE: '/run/secrets/pin', WCS_CONFIG: 'x.json', PORT: '1' });
    expect(r.files).to.deep.equal({});
  });
});
