import { expect } from 'chai';
import { Address, beginCell, type Cell } from '@ton/core';
import { OP_JETTON_EXCESSES, OP_JETTON_NOTIFICATION, bodyFacts, bodyFactsByCore, bodyFactsLight, commentCell, type BodyFacts } from './index';

/** bodyFacts reads bodies without building cells; @ton/core's cells and readers are the reference. */
describe('TON message bodies read without @ton/core cells', () => {
  const sender = Address.parseRaw(`0:${'ab'.repeat(32)}`);
  const master = Address.parseRaw(`-1:${'0c'.repeat(32)}`);
  const notification = (amount: bigint, from: Address | null, payload: (b: ReturnType<typeof beginCell>) => void) => {
    const b = beginCell().storeUint(OP_JETTON_NOTIFICATION, 32).storeUint(0xfedcba9876543210n, 64).storeCoins(amount).storeAddress(from);
    payload(b);
    return b.endCell();
  };
  // a comment of 200 bytes: two cells (snake), a 3-byte character split across them
  const long = beginCell().storeUint(0, 32).storeBuffer(Buffer.from('x'.repeat(122) + '€', 'utf8').subarray(0, 123))
    .storeRef(beginCell().storeBuffer(Buffer.from('€', 'utf8').subarray(1)).storeBuffer(Buffer.from('y'.repeat(50))).endCell()).endCell();
  const bodies: Record<string, Cell> = {
    'notification, comment in a ref': notification(25_000_000n, sender, (b) => b.storeBit(true).storeRef(commentCell('42'))),
    'notification, comment in the cell': notification(1n, sender, (b) => b.storeBit(false).storeUint(0, 32).storeStringTail('  77 ')),
    'notification, no forward payload': notification(10n ** 30n, sender, () => {}),
    'notification, empty payload bit': notification(5n, sender, (b) => b.storeBit(false)),
    'notification, no sender': notification(7n, null, (b) => b.storeBit(true).storeRef(commentCell('9'))),
    'notification, masterchain sender': notification(7n, master, (b) => b.storeBit(true).storeRef(commentCell('9'))),
    'notification, zero amount': notification(0n, sender, (b) => b.storeBit(false)),
    'notification, payload not a comment': notification(3n, sender, (b) => b.storeBit(true).storeRef(beginCell().storeUint(0x12345678, 32).endCell())),
    'notification, long snake comment': notification(3n, sender, (b) => b.storeBit(true).storeRef(long)),
    'notification, comment of invalid UTF-8': notification(3n, sender, (b) => b.storeBit(true).storeRef(beginCell().storeUint(0, 32).storeBuffer(Buffer.from([0xff, 0xfe])).endCell())),
    'notification, comment of odd bits': notification(3n, sender, (b) => b.storeBit(true).storeRef(beginCell().storeUint(0, 32).storeUint(1, 7).endCell())),
    'notification, cut short': beginCell().storeUint(OP_JETTON_NOTIFICATION, 32).storeUint(1, 40).endCell(),
    'notification, anycast sender': beginCell().storeUint(OP_JETTON_NOTIFICATION, 32).storeUint(0, 64).storeCoins(9n)
      .storeUint(2, 2).storeBit(true).storeUint(3, 5).storeUint(5, 3).storeInt(0, 8).storeBuffer(Buffer.alloc(32, 1)).storeBit(false).endCell(),
    'notification, external sender': beginCell().storeUint(OP_JETTON_NOTIFICATION, 32).storeUint(0, 64).storeCoins(9n).storeUint(1, 2).storeUint(0, 9).endCell(),
    'comment': commentCell('123456'),
    'long comment': long,
    'comment with two refs': beginCell().storeUint(0, 32).storeRef(commentCell('a')).storeRef(commentCell('b')).endCell(),
    'empty body': beginCell().endCell(),
    'excesses': beginCell().storeUint(OP_JETTON_EXCESSES, 32).storeUint(0, 64).endCell(),
    'short body': beginCell().storeUint(5, 20).endCell(),
  };

  // Address objects compare by their raw form (chai's deep equality sees their buffers' pools)
  const plain = (f: BodyFacts) => ({ ...f, notification: f.notification && { ...f.notification, sender: f.notification.sender?.toRawString() ?? null } });

  const LEFT_TO_CORE = new Set(['notification, cut short', 'notification, anycast sender', 'notification, external sender']);

  for (const [name, cell] of Object.entries(bodies)) {
    it(`reads as @ton/core does: ${name}`, () => {
      for (const boc of [cell.toBoc(), cell.toBoc({ idx: true, crc32: false }), cell.toBoc({ idx: false, crc32: false })]) {
        const b64 = boc.toString('base64');
        expect(plain(bodyFacts(b64))).to.deep.equal(plain(bodyFactsByCore(b64)));
        // the forms of real bodies are read without @ton/core; the odd ones are left to it
        expect(bodyFactsLight(b64) === undefined, 'left to @ton/core').to.equal(LEFT_TO_CORE.has(name) || boc[0] !== 0xb5);
      }
    });
  }

  it('gives the notification\'s exact amount, sender and memo text', () => {
    const f = bodyFacts(bodies['notification, comment in a ref']!.toBoc().toString('base64'));
    expect(f.op).to.equal(OP_JETTON_NOTIFICATION);
    expect(f.notification).to.deep.include({ queryId: 0xfedcba9876543210n, amount: 25_000_000n, comment: '42' });
    expect(f.notification!.sender!.equals(sender)).to.equal(true);
    expect(bodyFacts(bodies['notification, no forward payload']!.toBoc().toString('base64')).notification!.amount).to.equal(10n ** 30n);
    expect(bodyFacts(bodies['long comment']!.toBoc().toString('base64')).comment).to.equal(`${'x'.repeat(122)}€${'y'.repeat(50)}`);
  });

  it('refuses what is not a BOC, and a BOC whose CRC32C is wrong, as @ton/core does', () => {
    expect(() => bodyFacts(Buffer.from('not a boc').toString('base64'))).to.throw();
    const boc = commentCell('1').toBoc();
    boc[boc.length - 1] ^= 1;
    expect(() => bodyFacts(boc.toString('base64'))).to.throw(/CRC32C/);
  });
});
