import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Address, toNano } from '@ton/core';
import { Blockchain } from '@ton/sandbox';
import { HttpJsonError } from '@wcs/core';
import { TonApi, commentCell, listedTransaction } from './index';
import { transactionJson } from './test-support/sandbox-server';

/** getTransactions' toncenter fields (in_msg, description, prev_transaction_id): parsed, checked for form, and the BOC only when read. */
describe('TON node API: getTransactions fields', function () {
  this.timeout(60_000);
  let items: Record<string, unknown>[];
  let to: Address;

  before(async () => {
    const bc = await Blockchain.create();
    const user = await bc.treasury('api user');
    to = Address.parseRaw(`0:${'35'.repeat(32)}`);
    const txs = [
      ...(await user.send({ to, value: toNano('1.5'), bounce: false, body: commentCell(' 42 ') })).transactions,
      ...(await user.send({ to, value: toNano('0.2'), bounce: true })).transactions,
    ].filter((t) => t.inMessage?.info.dest instanceof Address && t.inMessage.info.dest.equals(to));
    items = txs.map((t, i) => transactionJson(t, BigInt(i + 7)));
    expect(items).to.have.length(2);
  });

  it('reads in_msg: raw addresses, the exact value, the comment of msg.dataText, the body of msg.dataRaw', () => {
    const [a, b] = items.map(listedTransaction);
    expect(a!.inMsg).to.deep.include({ destination: to.toRawString(), value: 1_500_000_000n, bounce: false, bounced: false, text: ' 42 ', body: null });
    expect(a!.inMsg!.source).to.match(/^0:[0-9a-f]{64}$/);
    expect(a!.inMsg!.hash).to.match(/^[0-9a-f]{64}$/);
    expect(a!.mcBlockSeqno).to.equal(7n);
    expect(a!.description).to.deep.equal({ type: 'generic', aborted: true, bounce: null });
    // bounceable to an account with no code: the bounce phase sends it back
    expect(b!.inMsg).to.deep.include({ value: 200_000_000n, bounce: true, text: null });
    expect(b!.inMsg!.body).to.be.a('string');
    expect(b!.description.bounce).to.equal('ok');
    expect(b!.prev).to.deep.equal({ lt: a!.lt, hash: a!.hash });
    expect(a!.prev.lt).to.equal(0n);
  });

  it('agrees with the transaction BOC, which it decodes only when asked', () => {
    for (const item of items) {
      const t = listedTransaction(item);
      expect(t.tx.lt).to.equal(t.lt);
      expect(t.tx.prevTransactionLt).to.equal(t.prev.lt);
      const info = t.tx.inMessage!.info;
      if (info.type !== 'internal') throw new Error('internal expected');
      expect(info.value.coins).to.equal(t.inMsg!.value);
      expect(info.src.toRawString()).to.equal(t.inMsg!.source);
    }
    // the BOC of another transaction: refused when read, not before
    const swapped = listedTransaction({ ...items[0]!, data: items[1]!.data });
    expect(() => swapped.tx).to.throw(HttpJsonError, /does not match transaction/);
  });

  it('takes an external message (source "") and a comment that is not UTF-8 as no comment', () => {
    const inMsg = items[0]!.in_msg as Record<string, unknown>;
    const ext = listedTransaction({ ...items[0]!, in_msg: { ...inMsg, source: '' } });
    expect(ext.inMsg!.source).to.equal(null);
    const notUtf8 = listedTransaction({ ...items[0]!, in_msg: { ...inMsg, msg_data: { '@type': 'msg.dataText', text: Buffer.from([0xff, 0x31]).toString('base64') } } });
    expect(notUtf8.inMsg!.text).to.equal(null);
    expect(listedTransaction({ ...items[0]!, in_msg: null }).inMsg).to.equal(null);
  });

  it('refuses fields of the wrong form', () => {
    const inMsg = items[0]!.in_msg as Record<string, unknown>;
    const bad: Record<string, unknown>[] = [
      { ...items[0]!, transaction_id: { lt: '1', hash: 'AB'.repeat(32) } },
      { ...items[0]!, prev_transaction_id: undefined },
      { ...items[0]!, description: { type: 'generic', aborted: false, bounce: 'maybe' } },
      { ...items[0]!, in_msg: { ...inMsg, value: 1.5 } },
      { ...items[0]!, in_msg: { ...inMsg, value: '-1' } },
      { ...items[0]!, in_msg: { ...inMsg, source: 'EQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAM9c' } },
      { ...items[0]!, in_msg: { ...inMsg, bounced: 'false' } },
      { ...items[0]!, in_msg: { ...inMsg, msg_data: { '@type': 'msg.dataEncryptedText', text: '' } } },
      { ...items[0]!, in_msg: { ...inMsg, msg_data: { '@type': 'msg.dataText', text: 'not base64!' } } },
      { ...items[0]!, in_msg: { ...inMsg, msg_data: { '@type': 'msg.dataRaw' } } },
    ];
    for (const b of bad) expect(() => listedTransaction(b), JSON.stringify(b).slice(0, 200)).to.throw(HttpJsonError);
  });

  it('lists them over HTTP', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, result: [...items].reverse() }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const api = new TonApi({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
      const list = await api.transactions(to, 10);
      expect(list.map((t) => [t.inMsg!.value, t.inMsg!.text])).to.deep.equal([[200_000_000n, null], [1_500_000_000n, ' 42 ']]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
