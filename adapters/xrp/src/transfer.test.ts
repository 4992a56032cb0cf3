import { expect } from 'chai';
import { secp256k1 } from '@noble/curves/secp256k1';
import { decode, hashes, verifyKeypairSignature, verifySignature, xrpToDrops } from 'xrpl';
import type { SequenceTransferRequest, TransferInput, UnsignedTransfer } from '@wcs/core';
import { MAX_XRP_DROPS, XrpTransferCrafter, derSignature, type XrpTransferInput } from './transfer';
import { hotKey, intent, keyFromPrivate, request, signAndCombine } from './transfer.test-helper';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('XrpTransferCrafter', () => {
  const live = new XrpTransferCrafter(false);
  const test = new XrpTransferCrafter(true);

  describe('published vectors (Trust Wallet wallet-core, transactions validated on the ledger)', () => {
    // trustwallet/wallet-core tests/chains/XRP/TWAnySignerTests.cpp, commit
    // 51d4c11b366191071dc2b89d2cc741886265816a: SignXrpPayment (testnet transaction
    // A202034796F37F38D1D20F2025DECECB1623FC801F041FC694199C0D0E49A739) and SignXrpPaymentMain
    // (mainnet transaction 4B9D022E8C77D798B7D11C41FDFDCF468F03A5564151C520EECA1E96FF1A1610).
    // The transaction ids are the ledger's: hashSignedTx of our blob must give them.
    const vectors = [
      {
        name: 'SignXrpPayment (testnet)', crafter: test,
        key: 'a5576c0f63da10e584568c8d134569ff44017b0a249eb70657127ae04f38cc77',
        account: 'rfxdLwsZnoespnTDDb1Xhvbc8EFNdztaoq', to: 'rU893viamSnsfP3zjzM2KPxjqZjXSXK6VF',
        amount: 10n, fee: '10', sequence: 32268248n, lastLedgerSequence: 32268269,
        encoded: '12000022000000002401ec5fd8201b01ec5fed61400000000000000a68400000000000000a732103d13e1152965a51a4a9fd9a8b4ea3dd82a4eba6b25fcad5f460a2342bb650333f74463044022037d32835c9394f39b2cfd4eaf5b0a80e0db397ace06630fa2b099ff73e425dbc02205288f780330b7a88a1980fa83c647b5908502ad7de9a44500c08f0750b0d9e8481144c55f5a78067206507580be7bb2686c8460adff983148132e4e20aecf29090ac428a9c43f230a829220d',
        txHash: 'A202034796F37F38D1D20F2025DECECB1623FC801F041FC694199C0D0E49A739',
      },
      {
        name: 'SignXrpPaymentMain (mainnet)', crafter: live,
        key: 'acf1bbf6264e699da0cc65d17ac03fcca6ded1522d19529df7762db46097ff9f',
        account: 'rGV1v1xw23PHcRn4Km4tF8R2mfh6yTZkcP', to: 'rNLpgsBTCwiaZAnHe2ZViAN1GcXZtYW6rg',
        amount: 1_000_000n, fee: '10', sequence: 75674534n, lastLedgerSequence: 75674797,
        encoded: '1200002200000000240482b3a6201b0482b4ad6140000000000f424068400000000000000a7321027efc5f15071d2ae5e73ee09a0c17456c5d9170a41d67e3297c554829199be80b74473045022100e1c746c3aeebc8278c627ee4c2ce5cae97e3856292c7fe5388f803920230a37b02207d2eccb76cd35dd379d6b24c2cabd786e62d34a564cf083e863176109c5b6bb48114aa000c09c692ef1f82787e51e22833149941ea2083149232ef60695add51f0f84534cc4084e4fdfc698e',
        txHash: '4B9D022E8C77D798B7D11C41FDFDCF468F03A5564151C520EECA1E96FF1A1610',
      },
    ];
    for (const v of vectors) {
      it(`reproduces ${v.name} byte for byte, with the ledger's transaction id`, () => {
        const key = keyFromPrivate(Uint8Array.from(Buffer.from(v.key, 'hex')));
        expect(key.address).to.equal(v.account);
        const unsigned = v.crafter.craft(request(key, v.to, v.amount, v.sequence), { fee: v.fee, lastLedgerSequence: v.lastLedgerSequence });
        expect(unsigned.maxFee).to.equal(BigInt(v.fee));
        expect(unsigned.txHash).to.equal(null);
        const signed = signAndCombine(v.crafter, unsigned, key);
        expect(hex(signed.raw)).to.equal(v.encoded);
        expect(signed.txHash).to.equal(v.txHash);
      });
    }
  });

  describe('crafting', () => {
    const from = hotKey(0);
    const to = hotKey(1).address;
    const input: XrpTransferInput = { fee: '12', lastLedgerSequence: 95_000_020 };

    it('writes every field of the Payment, signs the signing hash, and hashes like xrpl.js', () => {
      const unsigned = live.craft(request(from, to, 123_456_789n, 42n, '4294967295'), { ...input });
      // the payload is SHA-512Half("STX\0" || signing encoding), what ripple-keypairs signs too
      const signed = signAndCombine(live, unsigned, from);
      const blob = hex(signed.raw).toUpperCase();
      const decoded = decode(blob) as Record<string, unknown>;
      const txnSignature = decoded.TxnSignature as string;
      expect(decoded).to.deep.equal({
        TransactionType: 'Payment',
        Flags: 0,
        Sequence: 42,
        DestinationTag: 4294967295,
        LastLedgerSequence: 95_000_020,
        Amount: '123456789',
        Fee: '12',
        SigningPubKey: hex(from.publicKey).toUpperCase(),
        TxnSignature: txnSignature,
        Account: from.address,
        Destination: to,
      });
      expect(signed.txHash).to.equal(hashes.hashSignedTx(blob));
      // ripple-keypairs: verify(message = signing data, DER signature, key) hashes with SHA-512Half itself
      const { TxnSignature: _omit, ...unsignedTx } = decoded;
      void _omit;
      const signingData = require('xrpl').encodeForSigning(unsignedTx) as string;
      expect(verifyKeypairSignature(signingData, txnSignature, hex(from.publicKey))).to.equal(true);
      expect(verifySignature(blob)).to.equal(true);
      expect(verifyKeypairSignature(signingData, txnSignature, hex(hotKey(1).publicKey))).to.equal(false);
    });

    it('carries tag 0 and no tag at all differently', () => {
      const zero = decode(hex(signAndCombine(live, live.craft(request(from, to, 1n, 1n, '0'), { ...input }), from).raw)) as Record<string, unknown>;
      const none = decode(hex(signAndCombine(live, live.craft(request(from, to, 1n, 1n, null), { ...input }), from).raw)) as Record<string, unknown>;
      expect(zero.DestinationTag).to.equal(0);
      expect(none).to.not.have.property('DestinationTag');
    });

    it('moves the whole supply and exact drops (no JS number rounding)', () => {
      const all = live.craft(request(from, to, MAX_XRP_DROPS, 7n), { ...input });
      expect((decode(hex(signAndCombine(live, all, from).raw)) as Record<string, unknown>).Amount).to.equal(xrpToDrops('100000000000'));
      const odd = live.craft(request(from, to, 9_007_199_254_740_993n, 7n), { fee: '9007199254740993', lastLedgerSequence: 1 });
      const decoded = decode(hex(signAndCombine(live, odd, from).raw)) as Record<string, unknown>;
      expect(decoded.Amount).to.equal('9007199254740993');
      expect(decoded.Fee).to.equal('9007199254740993');
      expect(odd.maxFee).to.equal(9_007_199_254_740_993n);
    });

    it('writes NetworkID only for networks above 1024', () => {
      const side = test.craft(request(from, to, 5n, 3n), { ...input, networkId: 21338 });
      expect((decode(hex(signAndCombine(test, side, from).raw)) as Record<string, unknown>).NetworkID).to.equal(21338);
      for (const networkId of [0, 1, 1024]) expect(() => test.craft(request(from, to, 5n, 3n), { ...input, networkId })).to.throw(/networkId/);
    });

    it('is deterministic and survives a JSON round trip of input and state (re-signing after a crash)', () => {
      const a = live.craft(request(from, to, 10n ** 12n, 9n, '77'), { ...input });
      const b = live.craft(request(from, to, 10n ** 12n, 9n, '77'), JSON.parse(JSON.stringify(input)) as TransferInput);
      expect(hex(a.payloads[0]!)).to.equal(hex(b.payloads[0]!));
      const restored: UnsignedTransfer = { payloads: [Uint8Array.from(Buffer.from(hex(a.payloads[0]!), 'hex'))], maxFee: a.maxFee, txHash: null, state: JSON.parse(JSON.stringify(a.state)) };
      expect(hex(signAndCombine(live, restored, from).raw)).to.equal(hex(signAndCombine(live, a, from).raw));
    });

    it('refuses malformed requests and inputs', () => {
      const bad: Array<[string, () => unknown]> = [
        ['an issued currency', () => live.craft(request(from, to, 1n, 1n, null, 'USD.rf1BiGeXwwQoi8Z2ueFYTEXSwuJYfV2Jpn'), { ...input })],
        // a plain JS caller's request without its sequence
        ['no sequence', () => live.craft(intent(from, to, 1n) as SequenceTransferRequest, { ...input })],
        ['negative sequence', () => live.craft(request(from, to, 1n, -1n), { ...input })],
        ['sequence over uint32', () => live.craft(request(from, to, 1n, 4294967296n), { ...input })],
        ['zero amount', () => live.craft(request(from, to, 0n, 1n), { ...input })],
        ['more than all XRP', () => live.craft(request(from, to, MAX_XRP_DROPS + 1n, 1n), { ...input })],
        ['to self', () => live.craft(request(from, from.address, 1n, 1n), { ...input })],
        ['from is not the key', () => live.craft({ ...request(from, to, 1n, 1n), from: to }, { ...input })],
        ['ed25519 key', () => live.craft({ ...request(from, to, 1n, 1n), fromPublicKey: { curve: 'ed25519', bytes: new Uint8Array(32) } }, { ...input })],
        ['tag with leading zero', () => live.craft(request(from, to, 1n, 1n, '042'), { ...input })],
        ['tag over uint32', () => live.craft(request(from, to, 1n, 1n, '4294967296'), { ...input })],
        ['X-address target', () => live.craft(request(from, 'XV5sbjUmgPpvXv4ixFWZ5ptAYZ6PD28Sq49uo34VyjnmK5H', 1n, 1n), { ...input })],
        ['black hole', () => live.craft(request(from, 'rrrrrrrrrrrrrrrrrrrrrhoLvTp', 1n, 1n), { ...input })],
        ['fee as a number', () => live.craft(request(from, to, 1n, 1n), { ...input, fee: 12 })],
        ['zero fee', () => live.craft(request(from, to, 1n, 1n), { ...input, fee: '0' })],
        ['fractional fee', () => live.craft(request(from, to, 1n, 1n), { ...input, fee: '1.2' })],
        ['no last ledger', () => live.craft(request(from, to, 1n, 1n), { fee: '12' })],
        ['last ledger as text', () => live.craft(request(from, to, 1n, 1n), { ...input, lastLedgerSequence: '95000020' })],
      ];
      for (const [why, f] of bad) expect(f, why).to.throw(/XRP transfer/);
    });

    it('crafts the service\'s fee quote (sequence 0, to the hot wallet itself) for its maxFee, and never combines it', () => {
      // server/src/withdrawals/hot-wallets.ts quoteRequest: to = the hot wallet, memo null, amount 1, sequence 0
      const quote = live.craft(request(from, from.address, 1n, 0n), { ...input });
      expect(quote.maxFee).to.equal(12n);
      expect((quote.state as { tx: Record<string, unknown> }).tx).to.deep.include({ Account: from.address, Destination: from.address, Sequence: 0, Fee: '12' });
      expect(() => signAndCombine(live, quote, from)).to.throw(/fee quote/);
      // a self-payment with a real sequence is still refused (the ledger would: temREDUNDANT)
      expect(() => live.craft(request(from, from.address, 1n, 1n), { ...input })).to.throw(/temREDUNDANT/);
    });

    it('combine refuses a wrong, foreign, high-S or malformed signature, and a tampered state', () => {
      const unsigned = live.craft(request(from, to, 5n, 5n), { ...input });
      const good = from.sign(unsigned.payloads[0]!);
      const flipped = Uint8Array.from(good.bytes);
      flipped[5]! ^= 0x01;
      expect(() => live.combine(unsigned, [{ ...good, bytes: flipped }])).to.throw(/does not verify/);
      expect(() => live.combine(unsigned, [hotKey(1).sign(unsigned.payloads[0]!)])).to.throw(/does not verify/);
      // the same signature with s' = n - s (high S) verifies mathematically but the ledger refuses it
      const n = secp256k1.CURVE.n;
      const s = BigInt('0x' + hex(good.bytes.subarray(32)));
      const high = Uint8Array.from([...good.bytes.subarray(0, 32), ...Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex')]);
      expect(() => live.combine(unsigned, [{ ...good, bytes: high }])).to.throw(/low-S/);
      expect(() => live.combine(unsigned, [{ curve: 'ed25519', bytes: good.bytes, recovery: null }])).to.throw(/secp256k1/);
      expect(() => live.combine(unsigned, [good, good])).to.throw(/one signature/);
      const tampered = { ...unsigned, state: { tx: { ...(unsigned.state as { tx: Record<string, unknown> }).tx, Amount: '5000000' } } } as UnsignedTransfer;
      expect(() => live.combine(tampered, [good])).to.throw(/signing hash/);
    });
  });

  describe('derSignature', () => {
    it('encodes r || s as minimal DER, as @noble/curves does', () => {
      const cases = [
        '00'.repeat(31) + '01' + '00'.repeat(31) + '02', // tiny integers
        '80' + '11'.repeat(31) + '7f' + '22'.repeat(31), // r with its high bit set: a 00 pad
        '0000ff' + '33'.repeat(29) + '0080' + '44'.repeat(30), // leading zeros to strip, then a pad
      ];
      for (const c of cases) {
        const compact = Uint8Array.from(Buffer.from(c, 'hex'));
        expect(hex(derSignature(compact)), c).to.equal(secp256k1.Signature.fromCompact(c).toDERHex());
      }
      for (let i = 0; i < 50; i++) {
        const sig = hotKey(0).sign(Uint8Array.from(Buffer.alloc(32, i)));
        expect(hex(derSignature(sig.bytes))).to.equal(secp256k1.Signature.fromCompact(hex(sig.bytes)).toDERHex());
      }
    });
  });
});
