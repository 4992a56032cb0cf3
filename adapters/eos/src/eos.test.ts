import { expect } from 'chai';
import { AdapterConfigError } from '@wcs/core';
import { KEY_PURPOSES, fromHex, layoutPaths, testChain, walletCoreVectors } from '@wcs/core/testing';
import { EOS_KEY_SPECS, eosMemoCodec, eosPublicKeyToLegacyString, eosPublicKeyToString, isEosAccountName, plugin } from './index';

// As in server/src/catalogue/default-catalogue.ts: no options.
const EOS_LIVE = testChain({ id: 8, code: 'EOS', name: 'EOS', family: 'eos', environment: 'live', network: 'mainnet', nativeSymbol: 'EOS', decimals: 4, confirmations: 1 });
const EOS_JUNGLE = testChain({ ...EOS_LIVE, id: 108, name: 'EOS Jungle Testnet', environment: 'test', network: 'jungle4' });

// The EOSIO development key, as AntelopeIO tests and docs write it in both forms.
const DEV_KEY_HEX = '02c0ded2bc1f1305fb0faac5e6c03ee3a1924234985427b6167ca569d13df435cf';

describe('eos adapter', () => {
  describe('deposit account configuration', () => {
    const key = { curve: 'secp256k1' as const, bytes: fromHex(DEV_KEY_HEX) };

    it('creates the adapter without depositAccount (as the default catalogue lists EOS), and fails only when the address is needed', () => {
      for (const chain of [EOS_LIVE, EOS_JUNGLE]) {
        const adapter = plugin.create(chain);
        expect(() => adapter.address.addressFromPublicKey(key)).to.throw(
          AdapterConfigError,
          `EOS chain EOS has no depositAccount option: create the account on chain and set chains[].options.depositAccount`,
        );
        // Everything else still works.
        expect(adapter.address.validate('eosio.token', '42')).to.deep.equal({ valid: true, normalized: 'eosio.token', memo: '42' });
        expect(adapter.memo?.format(7n)).to.equal('7');
        expect(adapter.keySpec('deposit')).to.equal(EOS_KEY_SPECS.deposit);
      }
    });

    it('refuses a malformed depositAccount at create()', () => {
      for (const bad of ['', 'WCSDEPOSIT', 'wcsdeposit.', 'wcsdeposit123', 'wcs-deposit', ' wcsdeposit']) {
        expect(() => plugin.create({ ...EOS_LIVE, options: { depositAccount: bad } }), JSON.stringify(bad)).to.throw(AdapterConfigError, /depositAccount/);
      }
    });

    it('returns the configured account for any valid key, and still checks the key', () => {
      const adapter = plugin.create({ ...EOS_LIVE, options: { depositAccount: 'wcsdeposit11' } });
      expect(adapter.address.addressFromPublicKey(key)).to.equal('wcsdeposit11');
      expect(() => adapter.address.addressFromPublicKey({ curve: 'ed25519', bytes: key.bytes })).to.throw(TypeError, /secp256k1/);
      expect(() => adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: key.bytes.slice(1) })).to.throw(TypeError, /33-byte/);
      expect(() => adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: Uint8Array.from([2, ...new Uint8Array(32)]) })).to.throw(TypeError, /not a point/);
    });

    it('refuses chains of another family or kind', () => {
      expect(() => plugin.create({ ...EOS_LIVE, family: 'xrp' })).to.throw(AdapterConfigError);
      expect(() => plugin.create({ ...EOS_LIVE, addressing: 'hd' })).to.throw(AdapterConfigError);
      expect(() => plugin.create({ ...EOS_LIVE, curve: 'ed25519' })).to.throw(AdapterConfigError);
    });
  });

  describe('operator key formatting', () => {
    it('writes the EOSIO development key in both published forms', () => {
      expect(eosPublicKeyToString(fromHex(DEV_KEY_HEX))).to.equal('PUB_K1_6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5BoDq63');
      expect(eosPublicKeyToLegacyString({ curve: 'secp256k1', bytes: fromHex(DEV_KEY_HEX) })).to.equal('EOS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV');
    });

    it('matches Trust Wallet wallet-core (EOS… form) for accounts 1..3, indices 0..4 on the deposit, hot and fee templates', async () => {
      // Each vector's @scure/bip32 key is checked against wallet-core's key at its path.
      const vectors = await walletCoreVectors({ keys: EOS_KEY_SPECS, coin: 'eos' });
      for (const v of vectors) {
        expect(eosPublicKeyToLegacyString(v.publicKey), v.path).to.equal(v.address);
        expect(eosPublicKeyToString(v.publicKey)).to.match(/^PUB_K1_[1-9A-HJ-NP-Za-km-z]{50}$/);
      }
      expect(vectors.length).to.equal(45);
    });

    it('keeps deposit, hot and fee paths apart', () => {
      for (const purpose of KEY_PURPOSES) expect(EOS_KEY_SPECS[purpose].namespace).to.equal('eos');
      expect(new Set(layoutPaths(EOS_KEY_SPECS, 7, 20)).size).to.equal(60);
    });
  });

  describe('names and memos', () => {
    it('agrees with the name encoding: a valid account name survives the 64-bit round trip', () => {
      // Independent of eosjs: encode as in eosio::name (5 bits per char, 4 for a 13th), decode, compare.
      const chars = '.12345abcdefghijklmnopqrstuvwxyz';
      const encode = (s: string): bigint => {
        let v = 0n;
        for (let i = 0; i < 13; i++) {
          const c = i < s.length ? BigInt(chars.indexOf(s[i]!)) : 0n;
          v |= i < 12 ? (c & 0x1fn) << BigInt(64 - 5 * (i + 1)) : c & 0x0fn;
        }
        return v;
      };
      const decode = (v: bigint): string => {
        let out = '';
        for (let i = 0; i < 13; i++) {
          const c = i < 12 ? (v >> BigInt(64 - 5 * (i + 1))) & 0x1fn : v & 0x0fn;
          out += chars[Number(c)];
        }
        return out.replace(/\.+$/, '');
      };
      for (const name of ['eosio', 'eosio.token', 'tethertether', 'a', 'b1', '1.a', 'zzzzzzzzzzzz', '.abc', 'a..b']) {
        expect(isEosAccountName(name), name).to.equal(true);
        expect(decode(encode(name)), name).to.equal(name);
      }
      for (const name of ['abc.', 'eosio.', '.']) {
        expect(isEosAccountName(name), name).to.equal(false);
        expect(decode(encode(name)), name).to.not.equal(name);
      }
    });

    it('writes memo indices only in range', () => {
      expect(() => eosMemoCodec.format(eosMemoCodec.maxIndex + 1n)).to.throw(RangeError);
      expect(() => eosMemoCodec.format(-1n)).to.throw(RangeError);
      expect(String(Number(eosMemoCodec.format(eosMemoCodec.maxIndex)))).to.equal('9007199254740991');
    });
  });
});
