import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { schnorr } from '@noble/curves/secp256k1';
import { crypto as btcCrypto, networks, payments, type Payment, type Signer } from 'bitcoinjs-lib';
import { encodeInputAddress, inputAddress, InputAddressIndex, inputHash, inputPreimage } from './input-address';
import { outputAddress } from './scanner';
import { resolveNetwork } from './network';
import { BTC_MAINNET, BTC_REGTEST_RB, BTC_TESTNET } from './fixtures.test-helper';
import { bjsNetwork, derSignature, key, rawInput, spend } from './inputs.test-helper';

const REGTEST = resolveNetwork(BTC_REGTEST_RB);
const NET = bjsNetwork(REGTEST);
const [k1, k2, k3] = [key('one'), key('two'), key('three')];

const bytes = (...parts: Array<number[] | Uint8Array>) => Uint8Array.from(Buffer.concat(parts.map((p) => Buffer.from(p))));
/** A minimal push of data (as a scriptSig item). */
const push = (data: Uint8Array) => (data.length <= 75 ? bytes([data.length], data) : data.length <= 255 ? bytes([0x4c, data.length], data) : bytes([0x4d, data.length & 0xff, data.length >> 8], data));
const sig = derSignature;

describe('inputAddress: the address an input spends from, from its scriptSig and witness', () => {
  const multisig = (m: number) => payments.p2ms({ m, pubkeys: [k1.publicKey, k2.publicKey, k3.publicKey], network: NET });

  const cases: Array<{ name: string; payment: Payment; kind: string; signers: Signer[]; redeemScript?: Uint8Array; witnessScript?: Uint8Array; segwit: boolean; scriptSig: 'empty' | 'pushes'; witnessItems: number }> = [
    { name: 'P2WPKH', payment: payments.p2wpkh({ pubkey: k1.publicKey, network: NET }), kind: 'p2wpkh', signers: [k1], segwit: true, scriptSig: 'empty', witnessItems: 2 },
    (() => {
      const redeem = payments.p2wpkh({ pubkey: k1.publicKey, network: NET });
      return { name: 'P2SH-P2WPKH', payment: payments.p2sh({ redeem, network: NET }), kind: 'p2sh', signers: [k1], redeemScript: redeem.output!, segwit: true, scriptSig: 'pushes' as const, witnessItems: 2 };
    })(),
    { name: 'P2PKH (compressed key)', payment: payments.p2pkh({ pubkey: k2.publicKey, network: NET }), kind: 'p2pkh', signers: [k2], segwit: false, scriptSig: 'pushes', witnessItems: 0 },
    (() => {
      const u = key('uncompressed', false);
      return { name: 'P2PKH (uncompressed key)', payment: payments.p2pkh({ pubkey: u.publicKey, network: NET }), kind: 'p2pkh', signers: [u], segwit: false, scriptSig: 'pushes' as const, witnessItems: 0 };
    })(),
    (() => {
      const redeem = multisig(2);
      return { name: 'P2WSH 2-of-3 multisig', payment: payments.p2wsh({ redeem, network: NET }), kind: 'p2wsh', signers: [k1, k3], witnessScript: redeem.output!, segwit: true, scriptSig: 'empty' as const, witnessItems: 4 };
    })(),
    (() => {
      // [signature, script]: two items like P2WPKH, but the script (35 bytes: <key> OP_CHECKSIG) is no key.
      const redeem = payments.p2pk({ pubkey: k2.publicKey, network: NET });
      return { name: 'P2WSH of one key (P2PK script)', payment: payments.p2wsh({ redeem, network: NET }), kind: 'p2wsh', signers: [k2], witnessScript: redeem.output!, segwit: true, scriptSig: 'empty' as const, witnessItems: 2 };
    })(),
    (() => {
      const redeem = multisig(2);
      return { name: 'P2SH 2-of-3 multisig', payment: payments.p2sh({ redeem, network: NET }), kind: 'p2sh', signers: [k2, k3], redeemScript: redeem.output!, segwit: false, scriptSig: 'pushes' as const, witnessItems: 0 };
    })(),
    (() => {
      const ms = multisig(1);
      const redeem = payments.p2wsh({ redeem: ms, network: NET });
      return { name: 'P2SH-P2WSH 1-of-3 multisig', payment: payments.p2sh({ redeem, network: NET }), kind: 'p2sh', signers: [k3], redeemScript: redeem.output!, witnessScript: ms.output!, segwit: true, scriptSig: 'pushes' as const, witnessItems: 3 };
    })(),
  ];

  for (const c of cases) {
    it(`${c.name} → ${c.kind}: the previous output's address, in outputAddress's canonical form`, () => {
      const input = spend(c.payment, c.signers, c);
      expect(input.script.length === 0, 'scriptSig empty').to.equal(c.scriptSig === 'empty');
      expect(input.witness).to.have.length(c.witnessItems);
      const expected = c.payment.address!;
      expect(outputAddress(c.payment.output!, REGTEST)).to.equal(expected);
      expect(inputAddress(input.script, input.witness, REGTEST)).to.equal(expected);
      expect(inputHash(input.script, input.witness)!.kind).to.equal(c.kind);
      expect(inputPreimage(input.script, input.witness)!.kind).to.equal(c.kind);
      // The same input on the other networks: their encodings of the same hash.
      for (const chain of [BTC_MAINNET, BTC_TESTNET]) {
        const n = resolveNetwork(chain);
        const h = inputHash(input.script, input.witness)!;
        expect(inputAddress(input.script, input.witness, n)).to.equal(encodeInputAddress(h.kind, Buffer.from(h.hash, 'hex'), n));
      }
    });
  }

  it('encodes as bitcoinjs-lib payments do on mainnet and testnet', () => {
    const input = spend(payments.p2wpkh({ pubkey: k1.publicKey, network: NET }), [k1], { segwit: true });
    expect(inputAddress(input.script, input.witness, resolveNetwork(BTC_MAINNET))).to.equal(payments.p2wpkh({ pubkey: k1.publicKey, network: networks.bitcoin }).address);
    const legacy = spend(payments.p2pkh({ pubkey: k2.publicKey, network: NET }), [k2], { segwit: false });
    expect(inputAddress(legacy.script, legacy.witness, resolveNetwork(BTC_TESTNET))).to.equal(payments.p2pkh({ pubkey: k2.publicKey, network: networks.testnet }).address);
    expect(inputAddress(legacy.script, legacy.witness, resolveNetwork(BTC_MAINNET))).to.equal(payments.p2pkh({ pubkey: k2.publicKey, network: networks.bitcoin }).address);
  });

  it('hashes as bitcoinjs-lib does: hash160 of keys and redeem scripts, sha256 of witness scripts', () => {
    const w = spend(payments.p2wpkh({ pubkey: k1.publicKey, network: NET }), [k1], { segwit: true });
    expect(inputHash(w.script, w.witness)).to.deep.equal({ kind: 'p2wpkh', hash: Buffer.from(btcCrypto.hash160(k1.publicKey)).toString('hex') });
    const redeem = multisig(2);
    const ws = spend(payments.p2wsh({ redeem, network: NET }), [k1, k2], { segwit: true, witnessScript: redeem.output! });
    expect(inputHash(ws.script, ws.witness)).to.deep.equal({ kind: 'p2wsh', hash: Buffer.from(btcCrypto.sha256(redeem.output!)).toString('hex') });
  });

  it('cannot tell taproot spends: key path, key path with an annex, script path (tapscript and other BIP-341 leaf versions)', () => {
    const priv = createHash('sha256').update('taproot').digest();
    const schnorrSig = schnorr.sign(createHash('sha256').update('digest').digest(), priv);
    expect(schnorrSig).to.have.length(64);
    const leaf = bytes([0x20], schnorr.getPublicKey(priv), [0xac]); // <x-only key> OP_CHECKSIG
    const control = (v: number, depth: number) => bytes([v], Buffer.alloc(32, 2), Buffer.alloc(32 * depth, 3));
    const shapes: Array<[string, Uint8Array[]]> = [
      ['key path', [schnorrSig]],
      ['key path, SIGHASH_ALL byte', [bytes(schnorrSig, [0x01])]],
      ['key path with an annex', [schnorrSig, bytes([0x50, 1, 2, 3])]],
      ['script path, tapscript leaf (0xc0)', [schnorrSig, leaf, control(0xc0, 0)]],
      ['script path, odd parity (0xc1), depth 3', [schnorrSig, leaf, control(0xc1, 3)]],
      ['script path, with an annex', [schnorrSig, leaf, control(0xc0, 1), bytes([0x50])]],
      ['script path, future leaf version 0x66', [schnorrSig, leaf, control(0x66, 2)]],
      ['script path, future leaf version 0xfe, depth 128', [schnorrSig, leaf, control(0xfe, 128)]],
      // an inscription-like envelope: a big leaf script, well past the P2WSH size limit
      ['script path, 50 000-byte leaf', [schnorrSig, bytes([0x00, 0x63], Buffer.alloc(49_996, 0x01), [0x68, 0xac]), control(0xc0, 0)]],
    ];
    for (const [name, witness] of shapes) {
      const input = rawInput(new Uint8Array(0), witness);
      expect(inputAddress(input.script, input.witness, REGTEST), name).to.equal(null);
      expect(inputPreimage(input.script, input.witness), name).to.equal(null);
    }
  });

  it('returns null for spends of outputs without an address and for shapes it cannot tell', () => {
    const none: Array<[string, Uint8Array, Uint8Array[]]> = [
      ['no scriptSig, no witness', bytes([]), []],
      ['P2PK: [signature]', push(sig(k1)), []],
      ['bare multisig: OP_0 [signature] [signature]', bytes([0x00], push(sig(k1)), push(sig(k2, 2))), []],
      ['OP_TRUE', bytes([0x51]), []],
      ['a push running past the end', bytes([0x10, 1, 2, 3]), []],
      ['PUSHDATA1 without its length', bytes([0x4c]), []],
      ['a non-push opcode (OP_DUP)', bytes([0x76], push(k1.publicKey)), []],
      ['an empty last push', bytes(push(sig(k1)), [0x00]), []],
      ['a redeem script over 520 bytes', push(Buffer.alloc(521, 0x51)), []],
      ['a redeem script whose push runs past its end', push(bytes([0x51, 0x20, 1, 2])), []],
      ['[not a signature, key]', bytes(push(bytes([1, 2, 3])), push(k1.publicKey)), []],
      ['[signature, key] with a witness (invalid)', bytes(push(sig(k1)), push(k1.publicKey)), [sig(k1), k1.publicKey]],
      ['a lone key', push(k1.publicKey), []],
      ['witness: one item (a witness script alone)', bytes([]), [bytes([0x51])]],
      ['witness: a script over 10 000 bytes', bytes([]), [bytes([0x01]), Buffer.alloc(10_001, 0x51)]],
      ['witness: a script whose push runs past its end', bytes([]), [bytes([0x01]), bytes([0x51, 0x4d, 0xff])]],
    ];
    for (const [name, scriptSig, witness] of none) {
      const input = rawInput(scriptSig, witness);
      expect(inputAddress(input.script, input.witness, REGTEST), name).to.equal(null);
    }
  });

  it('reads the last push of any push-only scriptSig as a P2SH redeem script (PUSHDATA1 / PUSHDATA2, small-integer pushes before it)', () => {
    const redeem = payments.p2ms({ m: 1, pubkeys: [k1.publicKey, k2.publicKey, k3.publicKey], network: NET }).output!; // 105 bytes: PUSHDATA1
    const big = bytes([0x4c, 0xff], Buffer.alloc(255, 7), [0x75], Buffer.alloc(41, 0x61), [0x51]); // 300 bytes (<255 bytes> OP_DROP, OP_NOPs, OP_1): PUSHDATA2
    for (const r of [redeem, big]) {
      const input = rawInput(bytes([0x00, 0x51], push(sig(k1)), push(r)), []);
      expect(inputAddress(input.script, input.witness, REGTEST)).to.equal(payments.p2sh({ hash: btcCrypto.hash160(r), network: NET }).address);
    }
  });
});

describe('InputAddressIndex: matching inputs to a set of addresses by hash', () => {
  const p2wpkh = payments.p2wpkh({ pubkey: k1.publicKey, network: NET });
  const p2pkh = payments.p2pkh({ pubkey: k1.publicKey, network: NET }); // the same hash160, another kind
  const ms = payments.p2ms({ m: 1, pubkeys: [k2.publicKey, k3.publicKey], network: NET });
  const p2wsh = payments.p2wsh({ redeem: ms, network: NET });
  const p2sh = payments.p2sh({ redeem: ms, network: NET });

  const inputs = {
    p2wpkh: spend(p2wpkh, [k1], { segwit: true }),
    p2pkh: spend(p2pkh, [k1], { segwit: false }),
    p2wsh: spend(p2wsh, [k2], { segwit: true, witnessScript: ms.output! }),
    p2sh: spend(p2sh, [k3], { segwit: false, redeemScript: ms.output! }),
  };

  it('matches each input to the address of its kind and hash, as the set spells it', () => {
    const index = new InputAddressIndex([p2wpkh.address!, p2pkh.address!, p2wsh.address!, p2sh.address!], REGTEST);
    expect(index.empty).to.equal(false);
    expect(index.match(inputs.p2wpkh.script, inputs.p2wpkh.witness)).to.equal(p2wpkh.address);
    expect(index.match(inputs.p2pkh.script, inputs.p2pkh.witness)).to.equal(p2pkh.address);
    expect(index.match(inputs.p2wsh.script, inputs.p2wsh.witness)).to.equal(p2wsh.address);
    expect(index.match(inputs.p2sh.script, inputs.p2sh.witness)).to.equal(p2sh.address);
  });

  it('does not match a key\'s P2PKH spend to its P2WPKH address (same hash160), nor other keys', () => {
    const index = new InputAddressIndex([p2wpkh.address!], REGTEST);
    expect(index.match(inputs.p2pkh.script, inputs.p2pkh.witness)).to.equal(null);
    expect(index.match(inputs.p2wsh.script, inputs.p2wsh.witness)).to.equal(null);
    const other = spend(payments.p2wpkh({ pubkey: k2.publicKey, network: NET }), [k2], { segwit: true });
    expect(index.match(other.script, other.witness)).to.equal(null);
  });

  it('ignores what no input can be told to spend from: P2TR, other networks\' addresses, invalid text', () => {
    const mainnetP2wpkh = payments.p2wpkh({ pubkey: k1.publicKey, network: networks.bitcoin }).address!;
    const p2tr = outputAddress(bytes([0x51, 0x20], Buffer.alloc(32, 4)), REGTEST)!;
    const index = new InputAddressIndex([mainnetP2wpkh, p2tr, 'not an address', '', payments.p2pkh({ pubkey: k1.publicKey, network: networks.bitcoin }).address!], REGTEST);
    expect(index.empty).to.equal(true);
    expect(index.match(inputs.p2wpkh.script, inputs.p2wpkh.witness)).to.equal(null);
    expect(index.match(inputs.p2pkh.script, inputs.p2pkh.witness)).to.equal(null);
  });
});
