import { expect } from 'chai';
import { ChainRpcError } from '@wcs/core';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger } from './logger';

function capture(format: 'json' | 'pretty') {
  const stream = new PassThrough();
  let out = '';
  stream.on('data', (d: Buffer) => (out += d.toString()));
  const logger = createLogger({ level: 'debug', format, stream });
  return { logger, text: () => out };
}

describe('logger: masks secrets itself', () => {
  const secret = 'f4d148839a68814fecc7e31f302daad317cd902947ba112d4616d92ce492792f';
  const apiKey = 'pk_live_e731c410de81fc267813036415cffcff';

  for (const format of ['json', 'pretty'] as const) {
    it(`masks secret fields, signatures, keys and URL passwords (${format})`, async () => {
      const { logger, text } = capture(format);
      logger.info('created', {
        apiSecret: secret,
        headers: { 'x-signature': secret, 'X-Api-Key': apiKey, 'content-type': 'application/json' },
        url: 'postgres://postgres:hunter2pass@127.0.0.1:5432/wcs',
        note: `key ${apiKey} signed ${secret}`,
        nested: { deeper: { privateKey: 'abc', pin: '1234', passphrase: 'p' } },
        error: new Error(`boom with ${secret}`),
      });
      await new Promise((r) => setImmediate(r));
      const out = text();
      expect(out).to.contain('created');
      expect(out).not.to.contain(secret);
      expect(out).not.to.contain('hunter2pass');
      expect(out).not.to.contain('e731c410de81fc267813036415cf');
      expect(out).to.contain('pk_live_***fcff');
      expect(out).not.to.contain('"abc"');
      expect(out).not.to.contain('1234');
      expect(out).to.contain('application/json');
    });
  }

  it('a coded error (an expected condition) is logged with its code and message, no stack; an uncoded fault keeps its stack', async () => {
    const { logger, text } = capture('json');
    const rpc = Object.assign(new Error('ETH RPC http://127.0.0.1:8545 unavailable: ECONNREFUSED'), { name: 'EvmRpcError', code: 'RPC_UNAVAILABLE' });
    logger.warn('scan step failed', { error: rpc });
    logger.error('bug', { error: new TypeError('x is not a function') });
    await new Promise((r) => setImmediate(r));
    const [first, second] = text().trim().split('\n').map((l) => JSON.parse(l));
    expect(first.error).to.deep.equal({ name: 'EvmRpcError', code: 'RPC_UNAVAILABLE', message: 'ETH RPC http://127.0.0.1:8545 unavailable: ECONNREFUSED' });
    expect(second.error.stack).to.match(/^TypeError: x is not a function\n\s+at /);
  });

  it("an adapter's ChainRpcError is logged with its stable name as the code, no stack", async () => {
    const { logger, text } = capture('json');
    logger.warn('scan step failed', { error: new ChainRpcError('RPC_UNAVAILABLE', 'ETH RPC http://127.0.0.1:8545 unavailable: ECONNREFUSED') });
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(text().trim()).error).to.deep.equal({ name: 'ChainRpcError', code: 'RPC_UNAVAILABLE', message: 'ETH RPC http://127.0.0.1:8545 unavailable: ECONNREFUSED' });
  });

  it('loads winston with the first message at its level: below it nothing is written, before or after', () => {
    // a fresh process: this test process has loaded winston already
    const script = `
      const { PassThrough } = require('node:stream');
      const { createLogger } = require('./config/logger');
      const stream = new PassThrough(); let out = '';
      stream.on('data', (d) => (out += d));
      const logger = createLogger({ level: 'warn', format: 'json', stream });
      const loaded = () => Object.keys(require.cache).some((f) => /node_modules\\/winston\\//.test(f));
      logger.debug('d1'); logger.info('i1');
      const before = loaded();
      logger.warn('w1', { apiSecret: 'x' }); logger.info('i2'); logger.error('e1');
      setImmediate(() => process.stdout.write(JSON.stringify({ before, after: loaded(), lines: out.trim().split('\\n').map((l) => JSON.parse(l)).map(({ level, message, apiSecret }) => ({ level, message, apiSecret })) })));`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..'), encoding: 'utf8' }));
    expect(out).to.deep.equal({ before: false, after: true, lines: [{ level: 'warn', message: 'w1', apiSecret: '***' }, { level: 'error', message: 'e1' }] });
  });
});
