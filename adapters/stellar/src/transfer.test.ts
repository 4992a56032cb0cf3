import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { Keypair, Networks, StrKey, type Transaction } from '@stellar/stellar-sdk';
import type { SequenceTransferRequest, TransferInput, UnsignedTransfer } from '@wcs/core';
import { testChain } from '@wcs/core/testing';
import { StellarTransferCrafter, stellarChainPassphrase, stellarNetworkPassphrase, type StellarTransferInput } from './transfer';
import { decoded, hotKey, intent, keyFromSeed, request, signAndCombine } from './transfer.test-helper';

/** The transaction hash written out from the protocol: SHA-256(SHA-256(passphrase) || ENVELOPE_TYPE_TX || Transaction XDR). */
function protocolHash(tx: Transaction, passphrase: string): string {
  const networkId = createHash('sha256').update(passphrase).digest();
  const body = tx.toEnvelope().v1().tx().toXDR();
  return createHash('sha256').update(Buffer.concat([networkId, Buffer.from([0, 0, 0, 2]), body])).digest('hex');
}

describe('StellarTransferCrafter', () => {
  const pubnet = new StellarTransferCrafter(Networks.PUBLIC);
  const testnet = new StellarTransferCrafter(Networks.TESTNET);

  it('takes the passphrase of the catalogue networks', () => {
    expect(stellarNetworkPassphrase('pubnet')).to.equal('Public Global Stellar Network ; September 2015');
    expect(stellarNetworkPassphrase('testnet')).to.equal('Test SDF Network ; September 2015');
    expect(stellarNetworkPassphrase('somewhere')).to.equal(null);
    const chain = testChain({ id: 107, code: 'XLM', name: 'Stellar Testnet', family: 'stellar', environment: 'test', network: 'testnet', nativeSymbol: 'XLM', decimals: 7, confirmations: 1 });
    expect(stellarChainPassphrase(chain)).to.equal(Networks.TESTNET);
    expect(stellarChainPassphrase({ ...chain, network: 'local', options: { networkPassphrase: 'Standalone Network ; February 2017' } })).to.equal(Networks.STANDALONE);
  });

  it('reproduces py-stellar-base\'s signed v1 envelope byte for byte', () => {
    // StellarCN/py-stellar-base tests/test_transaction_envelope.py (test_to_xdr_v1), commit
    // f70b9cf8e02a67b7e4c598dd77d78bc322cb15e2: 1000 XLM payment, sequence 1, fee 200, MEMO_ID 100,
    // time bounds 12345..56789, public network, signed by SCCS5ZBI….
    const key = keyFromSeed(StrKey.decodeEd25519SecretSeed('SCCS5ZBI7WVIJ4SW36WGOQQIWJYCL3VOAULSXX3FB57USIO25EDOYQHH'));
    expect(key.address).to.equal('GDF5O4OWEMVBY5FLDHWA5RZTYSV2U276XGKZZ6VSHDDR3THSQ6OQS7UM');
    const unsigned = pubnet.craft(
      request(key, 'GDJJRRMBK4IWLEPJGIE6SXD2LP7REGZODU7WDC3I2D6MR37F4XSHBKX2', 10_000_000_000n, 1n, '100'),
      { baseFee: '200', minTime: '12345', maxTime: '56789', destinationExists: true },
    );
    expect(unsigned.maxFee).to.equal(200n);
    const signed = signAndCombine(pubnet, unsigned, key);
    expect(Buffer.from(signed.raw).toString('base64')).to.equal(
      'AAAAAgAAAADL13HWIyocdKsZ7A7HM8Srqmv+uZWc+rI4xx3M8oedCQAAAMgAAAAAAAAAAQAAAAEAAAAAAAAwOQAAAAAAAN3VAAAAAgAAAAAAAABkAAAAAQAAAAAAAAABAAAAANKYxYFXEWWR6TIJ6Vx6W/8SGy4dP2GLaND8yO/l5eRwAAAAAAAAAAJUC+QAAAAAAAAAAAHyh50JAAAAQCXOQnmno3he687bKRtDc6+BXRUf8t+RnTuHy+sKf35UjfFiQbIge+txehmg0N61JsFWfwbL0JtgOjzyeZw5JAs=',
    );
    expect(signed.txHash).to.equal(unsigned.txHash);
    expect(signed.txHash).to.equal(protocolHash(decoded(signed.raw, Networks.PUBLIC), Networks.PUBLIC));
  });

  describe('crafting', () => {
    const from = hotKey(0);
    const to = hotKey(1).address;
    const input: StellarTransferInput = { baseFee: '100', minTime: '0', maxTime: '1767225600', destinationExists: true };

    it('pays XLM: every field decoded back, the payload is the hash, the signature verifies', () => {
      const unsigned = testnet.craft(request(from, to, 123_456_789n, 987_654_321_012n, '18446744073709551615'), { ...input, baseFee: '250', minTime: '1767225000' });
      expect(unsigned.payloads[0]!.length).to.equal(32);
      expect(Buffer.from(unsigned.payloads[0]!).toString('hex')).to.equal(unsigned.txHash);
      const signed = signAndCombine(testnet, unsigned, from);
      expect(signed.txHash).to.equal(unsigned.txHash);
      const tx = decoded(signed.raw, Networks.TESTNET);
      expect(tx.source).to.equal(from.address);
      expect(tx.fee).to.equal('250');
      expect(tx.sequence).to.equal('987654321012');
      expect(tx.timeBounds).to.deep.equal({ minTime: '1767225000', maxTime: '1767225600' });
      expect(tx.memo.type).to.equal('id');
      expect(tx.memo.value).to.equal('18446744073709551615');
      expect(tx.operations).to.have.length(1);
      expect(tx.operations[0]).to.deep.include({ type: 'payment', destination: to, amount: '12.3456789' });
      expect((tx.operations[0] as { asset: { isNative(): boolean } }).asset.isNative()).to.equal(true);
      expect(tx.signatures).to.have.length(1);
      const ds = tx.signatures[0]!;
      expect(Buffer.from(ds.hint()).equals(Buffer.from(from.publicKey.subarray(28)))).to.equal(true);
      expect(Keypair.fromPublicKey(from.address).verify(tx.hash(), ds.signature())).to.equal(true);
      expect(tx.hash().toString('hex')).to.equal(signed.txHash);
      expect(protocolHash(tx, Networks.TESTNET)).to.equal(signed.txHash);
    });

    it('creates the destination account when the input says it does not exist', () => {
      const signed = signAndCombine(pubnet, pubnet.craft(request(from, to, 20_000_000n, 5n), { ...input, destinationExists: false }), from);
      const tx = decoded(signed.raw, Networks.PUBLIC);
      expect(tx.operations[0]).to.deep.include({ type: 'createAccount', destination: to, startingBalance: '2.0000000' });
      expect(tx.memo.type).to.equal('none');
    });

    it('pays a credit asset "CODE:ISSUER", and a muxed account', () => {
      const usdc = 'USDC:GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN';
      const tx = decoded(signAndCombine(pubnet, pubnet.craft(request(from, to, 9_223_372_036_854_775_807n, 6n, null, usdc), { ...input }), from).raw, Networks.PUBLIC);
      const op = tx.operations[0] as { type: string; amount: string; asset: { getCode(): string; getIssuer(): string } };
      expect(op.type).to.equal('payment');
      expect(op.amount).to.equal('922337203685.4775807'); // int64 max stroops, exact
      expect(op.asset.getCode()).to.equal('USDC');
      expect(op.asset.getIssuer()).to.equal('GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN');
      // SEP-23 muxed account of `to` with id 7: the destination keeps its id, no memo
      const muxed = StrKey.encodeMed25519PublicKey(Buffer.concat([Buffer.from(StrKey.decodeEd25519PublicKey(to)), Buffer.from('0000000000000007', 'hex')]));
      const mtx = decoded(signAndCombine(pubnet, pubnet.craft(request(from, muxed, 1n, 7n), { ...input }), from).raw, Networks.PUBLIC);
      expect(mtx.operations[0]).to.deep.include({ type: 'payment', destination: muxed, amount: '0.0000001' });
    });

    it('opens the sender\'s own trustline (changeTrust, the largest limit) for a trustline request, and refuses one that is not to itself, to XLM or with a memo', () => {
      const usdc = 'USDC:GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN';
      const trust = { ...request(from, from.address, 1n, 41n, null, usdc), trustline: true as const };
      const unsigned = pubnet.craft(trust, { ...input, baseFee: '100' });
      expect(unsigned.maxFee).to.equal(100n);
      const signed = signAndCombine(pubnet, unsigned, from);
      const tx = decoded(signed.raw, Networks.PUBLIC);
      expect(tx.source).to.equal(from.address);
      expect(tx.sequence).to.equal('41');
      expect(tx.fee, 'one operation at the input\'s base fee: what the hot wallet pays').to.equal('100');
      expect(tx.memo.type).to.equal('none');
      expect(tx.operations).to.have.length(1);
      expect(tx.operations[0]!.source, 'the operation has no source of its own: the transaction\'s, the hot wallet').to.equal(undefined);
      const op = tx.operations[0] as { type: string; limit: string; line: { getCode(): string; getIssuer(): string } };
      expect(op.type).to.equal('changeTrust');
      expect(op.limit).to.equal('922337203685.4775807');
      expect([op.line.getCode(), op.line.getIssuer()]).to.deep.equal(['USDC', 'GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN']);
      expect(Keypair.fromPublicKey(from.address).verify(tx.hash(), tx.signatures[0]!.signature())).to.equal(true);
      expect(() => pubnet.craft({ ...trust, to }, { ...input })).to.throw(/to must be from/);
      expect(() => pubnet.craft({ ...trust, contract: null }, { ...input })).to.throw(/not to XLM/);
      expect(() => pubnet.craft({ ...trust, memo: "7" }, { ...input })).to.throw(/no memo/);
    });

    it('writes MEMO_TEXT for any other valid memo (the MemoCodec rule)', () => {
      for (const memo of ['hello', '0042', '-1', '18446744073709551616', 'ünïcödé ✓' + 'x'.repeat(13)]) {
        expect(Buffer.byteLength(memo, 'utf8')).to.be.at.most(28);
        if (memo.startsWith('ü')) expect(Buffer.byteLength(memo, 'utf8')).to.equal(28);
        const tx = decoded(signAndCombine(pubnet, pubnet.craft(request(from, to, 1n, 1n, memo), { ...input }), from).raw, Networks.PUBLIC);
        expect(tx.memo.type, memo).to.equal('text');
        expect(Buffer.from(tx.memo.value as Buffer).toString('utf8')).to.equal(memo);
      }
      const zero = decoded(signAndCombine(pubnet, pubnet.craft(request(from, to, 1n, 1n, '0'), { ...input }), from).raw, Networks.PUBLIC);
      expect(zero.memo.type).to.equal('id');
    });

    it('signs for one network: the same transfer has another hash on testnet, and combine refuses a mix-up', () => {
      const a = pubnet.craft(request(from, to, 1n, 1n), { ...input });
      const b = testnet.craft(request(from, to, 1n, 1n), { ...input });
      expect(a.txHash).to.not.equal(b.txHash);
      expect(() => testnet.combine(a, [from.sign(a.payloads[0]!)])).to.throw(/another network/);
    });

    it('is deterministic and survives a JSON round trip of input and state (re-signing after a crash)', () => {
      const a = pubnet.craft(request(from, to, 10n ** 12n, 9n, 'x'), { ...input });
      const b = pubnet.craft(request(from, to, 10n ** 12n, 9n, 'x'), JSON.parse(JSON.stringify(input)) as TransferInput);
      expect(a.txHash).to.equal(b.txHash);
      const restored: UnsignedTransfer = { payloads: [Uint8Array.from(a.payloads[0]!)], maxFee: a.maxFee, txHash: a.txHash, state: JSON.parse(JSON.stringify(a.state)) };
      expect(Buffer.from(signAndCombine(pubnet, restored, from).raw).equals(Buffer.from(signAndCombine(pubnet, a, from).raw))).to.equal(true);
    });

    it('refuses malformed requests and inputs', () => {
      const muxedFrom = StrKey.encodeMed25519PublicKey(Buffer.concat([Buffer.from(from.publicKey), Buffer.alloc(8)]));
      const muxedTo = StrKey.encodeMed25519PublicKey(Buffer.concat([Buffer.from(StrKey.decodeEd25519PublicKey(to)), Buffer.alloc(8, 1)]));
      const bad: Array<[string, () => unknown]> = [
        // a plain JS caller's request without its sequence
        ['no sequence', () => pubnet.craft(intent(from, to, 1n) as SequenceTransferRequest, { ...input })],
        ['negative sequence', () => pubnet.craft(request(from, to, 1n, -1n), { ...input })],
        ['sequence over int64', () => pubnet.craft(request(from, to, 1n, 1n << 63n), { ...input })],
        ['zero amount', () => pubnet.craft(request(from, to, 0n, 1n), { ...input })],
        ['amount over int64', () => pubnet.craft(request(from, to, 1n << 63n, 1n), { ...input })],
        ['to self', () => pubnet.craft(request(from, from.address, 1n, 1n), { ...input })],
        ['to own muxed account', () => pubnet.craft(request(from, muxedFrom, 1n, 1n), { ...input })],
        ['from is not the key', () => pubnet.craft({ ...request(from, to, 1n, 1n), from: to }, { ...input })],
        ['memo with a muxed target', () => pubnet.craft(request(from, muxedTo, 1n, 1n, '5'), { ...input })],
        ['memo too long', () => pubnet.craft(request(from, to, 1n, 1n, 'x'.repeat(29)), { ...input })],
        ['create a muxed account', () => pubnet.craft(request(from, muxedTo, 1n, 1n), { ...input, destinationExists: false })],
        ['token to a missing account', () => pubnet.craft(request(from, to, 1n, 1n, null, `USD:${to}`), { ...input, destinationExists: false })],
        ['malformed contract', () => pubnet.craft(request(from, to, 1n, 1n, null, 'USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN'), { ...input })],
        ['code too long', () => pubnet.craft(request(from, to, 1n, 1n, null, `ABCDEFGHIJKLM:${to}`), { ...input })],
        ['fee below the minimum', () => pubnet.craft(request(from, to, 1n, 1n), { ...input, baseFee: '99' })],
        ['fee as a number', () => pubnet.craft(request(from, to, 1n, 1n), { ...input, baseFee: 100 })],
        ['no maxTime', () => pubnet.craft(request(from, to, 1n, 1n), { baseFee: '100', destinationExists: true })],
        ['maxTime 0 (never expires)', () => pubnet.craft(request(from, to, 1n, 1n), { ...input, maxTime: '0' })],
        ['maxTime before minTime', () => pubnet.craft(request(from, to, 1n, 1n), { ...input, minTime: '1767225600' })],
        ['no existence flag', () => pubnet.craft(request(from, to, 1n, 1n), { baseFee: '100', maxTime: '1767225600' })],
      ];
      for (const [why, f] of bad) expect(f, why).to.throw(/Stellar transfer/);
    });

    it('crafts the service\'s fee quote (sequence 0, to the hot wallet itself) for its maxFee, and never combines it', () => {
      // server/src/withdrawals/hot-wallets.ts quoteRequest: to = the hot wallet, memo null, amount 1, sequence 0
      for (const [contract, exists] of [[null, true], [null, false], [`USDC:${to}`, true]] as const) {
        const quote = pubnet.craft(request(from, from.address, 1n, 0n, null, contract), { ...input, baseFee: '300', destinationExists: exists });
        expect(quote.maxFee).to.equal(300n);
        expect(() => signAndCombine(pubnet, quote, from)).to.throw(/fee quote/);
      }
      // with a real sequence a transfer to the hot wallet itself is still refused
      expect(() => pubnet.craft(request(from, from.address, 1n, 1n), { ...input })).to.throw(/hot wallet itself/);
    });

    it('combine refuses a wrong, foreign or malformed signature', () => {
      const unsigned = pubnet.craft(request(from, to, 5n, 5n), { ...input });
      const good = from.sign(unsigned.payloads[0]!);
      const flipped = Uint8Array.from(good.bytes);
      flipped[63]! ^= 0x01;
      expect(() => pubnet.combine(unsigned, [{ ...good, bytes: flipped }])).to.throw(/does not verify/);
      expect(() => pubnet.combine(unsigned, [hotKey(1).sign(unsigned.payloads[0]!)])).to.throw(/does not verify/);
      // a signature over the envelope bytes instead of the hash: not what the network checks
      const envelopeBytes = Buffer.from((unsigned.state as { envelope: string }).envelope, 'base64');
      expect(() => pubnet.combine(unsigned, [from.sign(envelopeBytes)])).to.throw(/does not verify/);
      expect(() => pubnet.combine(unsigned, [{ curve: 'secp256k1', bytes: good.bytes, recovery: 0 }])).to.throw(/ed25519/);
      expect(() => pubnet.combine(unsigned, [good, good])).to.throw(/one signature/);
      expect(() => pubnet.combine({ ...unsigned, payloads: [new Uint8Array(32)] }, [good])).to.throw(/payload/);
    });
  });
});
