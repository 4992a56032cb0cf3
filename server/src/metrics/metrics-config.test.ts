import { expect } from 'chai';
import { ConfigError, loadConfig } from '../config/config';

describe('metrics: configuration (WCS_METRICS_PORT, WCS_METRICS_HOST, WCS_METRICS_TOKEN)', () => {
  const base = { DATABASE_URL: 'postgres://u@h/db', WCS_MASTER_KEY: 'k'.repeat(64) };
  const load = (env: Record<string, string>) => loadConfig({ ...base, ...env });

  it('is off when WCS_METRICS_PORT is unset or empty, whatever else is set', () => {
    expect(load({}).metrics).to.equal(null);
    expect(load({ WCS_METRICS_PORT: '', WCS_METRICS_HOST: '0.0.0.0', WCS_METRICS_TOKEN: 't'.repeat(32) }).metrics).to.equal(null);
  });

  it('defaults to 127.0.0.1 without a token; 0 is a free port; host and token are taken as given', () => {
    expect(load({ WCS_METRICS_PORT: '9464' }).metrics).to.deep.equal({ port: 9464, host: '127.0.0.1', token: null });
    expect(load({ WCS_METRICS_PORT: '0' }).metrics).to.deep.equal({ port: 0, host: '127.0.0.1', token: null });
    const token = 'Abc-123_xyz.~+/=!'.repeat(2);
    expect(load({ WCS_METRICS_PORT: '9464', WCS_METRICS_HOST: '::', WCS_METRICS_TOKEN: token }).metrics).to.deep.equal({ port: 9464, host: '::', token });
    expect(load({ WCS_METRICS_PORT: '9464', WCS_METRICS_HOST: 'metrics.internal' }).metrics?.host).to.equal('metrics.internal');
  });

  it('names the bad key, and never echoes the token', () => {
    expect(() => load({ WCS_METRICS_PORT: 'x' })).to.throw(ConfigError, /^WCS_METRICS_PORT: must be an integer/);
    expect(() => load({ WCS_METRICS_PORT: '70000' })).to.throw(ConfigError, /^WCS_METRICS_PORT: must be between 0 and 65535/);
    expect(() => load({ WCS_METRICS_PORT: '-1' })).to.throw(ConfigError, /^WCS_METRICS_PORT: must be between/);
    expect(() => load({ PORT: '9000', WCS_METRICS_PORT: '9000' })).to.throw(ConfigError, /^WCS_METRICS_PORT: must differ from PORT/);
    expect(() => load({ WCS_METRICS_PORT: '9464', WCS_METRICS_HOST: 'bad host!' })).to.throw(ConfigError, /^WCS_METRICS_HOST: must be an IP address or a host name/);
    expect(() => load({ WCS_METRICS_PORT: '9464', WCS_METRICS_HOST: 'http://x' })).to.throw(ConfigError, /^WCS_METRICS_HOST:/);
    for (const token of ['short-secret', 'has a space in it, long enough', 'ünïcode-token-long-enough']) {
      let err: unknown;
      try {
        load({ WCS_METRICS_PORT: '9464', WCS_METRICS_TOKEN: token });
      } catch (e) {
        err = e;
      }
      expect(err, token).to.be.instanceOf(ConfigError);
      expect((err as Error).message).to.match(/^WCS_METRICS_TOKEN: must be 16 to 512 printable ASCII characters/);
      expect((err as Error).message).not.to.include(token);
    }
  });

  it('PORT 0 (a free API port) and WCS_METRICS_PORT 0 go together', () => {
    expect(load({ PORT: '0', WCS_METRICS_PORT: '0' }).metrics?.port).to.equal(0);
  });
});
