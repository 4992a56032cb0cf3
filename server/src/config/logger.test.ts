import { expect } from 'chai';
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
});
