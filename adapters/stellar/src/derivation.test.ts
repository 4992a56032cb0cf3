import { expect } from 'chai';
import { AdapterConfigError } from '@wcs/core';
import { KEY_PURPOSES, expectWalletCoreAddresses, fillPath, layoutPaths, testChain, testPublicKey } from '@wcs/core/testing';
import { STELLAR_KEY_SPECS, memoIdCodec, plugin, stellarAddressFromPublicKey, withdrawalMemoType } from './index';

const XLM_LIVE = testChain({ id: 7, code: 'XLM', name: 'Stellar', family: 'stellar', environment: 'live', network: 'pubnet', nativeSymbol: 'XLM', decimals: 7, confirmations: 1 });

// stellar-protocol ecosystem/sep-0005.md, Test 1 (12 words): m/44'/148'/x' for x = 0..9.
const SEP5_TEST1 = {
  mnemonic: 'illness spike retreat truth genius clock brain pass fit cave bargain toe',
  addresses: [
    'GDRXE2BQUC3AZNPVFSCEZ76NJ3WWL25FYFK6RGZGIEKWE4SOOHSUJUJ6', 'GBAW5XGWORWVFE2XTJYDTLDHXTY2Q2MO73HYCGB3XMFMQ562Q2W2GJQX',
    'GAY5PRAHJ2HIYBYCLZXTHID6SPVELOOYH2LBPH3LD4RUMXUW3DOYTLXW', 'GAOD5NRAEORFE34G5D4EOSKIJB6V4Z2FGPBCJNQI6MNICVITE6CSYIAE',
    'GBCUXLFLSL2JE3NWLHAWXQZN6SQC6577YMAU3M3BEMWKYPFWXBSRCWV4', 'GBRQY5JFN5UBG5PGOSUOL4M6D7VRMAYU6WW2ZWXBMCKB7GPT3YCBU2XZ',
    'GBY27SJVFEWR3DUACNBSMJB6T4ZPR4C7ZXSTHT6GMZUDL23LAM5S2PQX', 'GAY7T23Z34DWLSTEAUKVBPHHBUE4E3EMZBAQSLV6ZHS764U3TKUSNJOF',
    'GDJTCF62UUYSAFAVIXHPRBR4AUZV6NYJR75INVDXLLRZLZQ62S44443R', 'GBTVYYDIYWGUQUTKX6ZMLGSZGMTESJYJKJWAATGZGITA25ZB6T5REF44',
  ],
};

describe('stellar derivation', () => {
  const adapter = plugin.create(XLM_LIVE);

  it("reproduces all SEP-0005 Test 1 accounts m/44'/148'/x' (x = 0..9)", () => {
    SEP5_TEST1.addresses.forEach((address, x) => {
      const pub = testPublicKey('ed25519', `m/44'/148'/${x}'`, SEP5_TEST1.mnemonic);
      expect(adapter.address.addressFromPublicKey({ curve: 'ed25519', bytes: pub }), `x = ${x}`).to.equal(address);
    });
  });

  it("puts the shared deposit account one level below SEP-0005's account: m/44'/148'/{account}'/0'", () => {
    expect(fillPath(adapter.keySpec('deposit').pathTemplate, 3, 0)).to.equal("m/44'/148'/3'/0'");
  });

  it('matches Trust Wallet wallet-core for accounts 1..3, indices 0..4 on the deposit, hot and fee templates', async () => {
    // Each vector's SLIP-10 key is checked against wallet-core's key, then the adapter's address against wallet-core's.
    expect(await expectWalletCoreAddresses(adapter, 'stellar')).to.have.length(45);
  });

  it('keeps deposit, hot and fee paths apart', () => {
    for (const purpose of KEY_PURPOSES) expect(adapter.keySpec(purpose)).to.equal(STELLAR_KEY_SPECS[purpose]).and.have.property('namespace', 'xlm');
    expect(new Set(layoutPaths(adapter, 7, 20)).size).to.equal(60);
  });

  it('refuses keys that are not 32-byte ed25519 keys', () => {
    const good = testPublicKey('ed25519', "m/44'/148'/0'/0'");
    expect(() => stellarAddressFromPublicKey({ curve: 'secp256k1', bytes: good })).to.throw(TypeError, /ed25519/);
    expect(() => stellarAddressFromPublicKey({ curve: 'ed25519', bytes: good.slice(1) })).to.throw(TypeError, /32 bytes/);
    expect(() => stellarAddressFromPublicKey({ curve: 'ed25519', bytes: new Uint8Array(32) })).to.throw(TypeError, /burn/);
  });

  it('classifies withdrawal memos and writes memo ids only in range', () => {
    expect(withdrawalMemoType('12345')).to.equal('id');
    expect(withdrawalMemoType('0123')).to.equal('text');
    expect(withdrawalMemoType('18446744073709551616')).to.equal('text'); // 20 bytes: too big for an id, fits a text
    expect(withdrawalMemoType('x'.repeat(29))).to.equal(null);
    expect(() => memoIdCodec.format(memoIdCodec.maxIndex + 1n)).to.throw(RangeError);
    expect(() => memoIdCodec.format(-1n)).to.throw(RangeError);
  });

  it('gives specific reasons without echoing the input', () => {
    const seedText = 'SBGWSG6BTNCKCOB3DIFBGCVMUPQFYPA2G4O34RMTB343OYPXU5DJDVMN';
    const r = adapter.address.validate(seedText);
    expect(r.valid).to.equal(false);
    if (!r.valid) {
      expect(r.reason).to.match(/secret seed/);
      expect(r.reason).to.not.contain(seedText);
    }
    const lower = adapter.address.validate('GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ'.toLowerCase());
    expect(lower.valid === false && lower.reason).to.match(/upper case/);
    const contract = adapter.address.validate('CA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUWDA');
    expect(contract.valid === false && contract.reason).to.match(/contract/);
  });

  it('refuses chains of another family or kind', () => {
    expect(() => plugin.create({ ...XLM_LIVE, family: 'solana' })).to.throw(AdapterConfigError);
    expect(() => plugin.create({ ...XLM_LIVE, addressing: 'hd' })).to.throw(AdapterConfigError);
    expect(() => plugin.create({ ...XLM_LIVE, curve: 'secp256k1' })).to.throw(AdapterConfigError);
  });
});
