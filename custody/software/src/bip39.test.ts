import { expect } from 'chai';
import { entropyFromMnemonic, mnemonicBytesFromEntropy, seedFromEntropy, seedFromMnemonic, wordCount } from './bip39';
import { KeyStoreError } from './errors';

/**
 * BIP-39 English test vectors: trezor/python-mnemonic vectors.json (the reference vectors linked
 * from bip-0039.mediawiki), commit f5a975ab10c035596d65d854d21164266ffed284. All use the BIP-39
 * passphrase "TREZOR". Columns: entropy, mnemonic, seed.
 */
const TREZOR_VECTORS: ReadonlyArray<readonly [string, string, string]> = [
  [
    '00000000000000000000000000000000',
    'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about',
    'c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04',
  ],
  [
    '7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f',
    'legal winner thank year wave sausage worth useful legal winner thank yellow',
    '2e8905819b8723fe2c1d161860e5ee1830318dbf49a83bd451cfb8440c28bd6fa457fe1296106559a3c80937a1c1069be3a3a5bd381ee6260e8d9739fce1f607',
  ],
  [
    'ffffffffffffffffffffffffffffffff',
    'zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong',
    'ac27495480225222079d7be181583751e86f571027b0497b5b5d11218e0a8a13332572917f0f8e5a589620c6f15b11c61dee327651a14c34e18231052e48c069',
  ],
  [
    '000000000000000000000000000000000000000000000000',
    'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon agent',
    '035895f2f481b1b0f01fcf8c289c794660b289981a78f8106447707fdd9666ca06da5a9a565181599b79f53b844d8a71dd9f439c52a3d7b3e8a79c906ac845fa',
  ],
  [
    '0000000000000000000000000000000000000000000000000000000000000000',
    'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon art',
    'bda85446c68413707090a52022edd26a1c9462295029f2e60cd7c4f2bbd3097170af7a4d73245cafa9c3cca8d561a7c3de6f5d4a10be8ed2a5e608d68f92fcc8',
  ],
  [
    '8080808080808080808080808080808080808080808080808080808080808080',
    'letter advice cage absurd amount doctor acoustic avoid letter advice cage absurd amount doctor acoustic avoid letter advice cage absurd amount doctor acoustic bless',
    'c0c519bd0e91a2ed54357d9d1ebef6f5af218a153624cf4f2da911a0ed8f7a09e2ef61af0aca007096df430022f7a2b6fb91661a9589097069720d015e4e982f',
  ],
  [
    '9e885d952ad362caeb4efe34a8e91bd2',
    'ozone drill grab fiber curtain grace pudding thank cruise elder eight picnic',
    '274ddc525802f7c828d8ef7ddbcdc5304e87ac3535913611fbbfa986d0c9e5476c91689f9c8a54fd55bd38606aa6a8595ad213d4c9c9f9aca3fb217069a41028',
  ],
  [
    '6610b25967cdcca9d59875f5cb50b0ea75433311869e930b',
    'gravity machine north sort system female filter attitude volume fold club stay feature office ecology stable narrow fog',
    '628c3827a8823298ee685db84f55caa34b5cc195a778e52d45f59bcf75aba68e4d7590e101dc414bc1bbd5737666fbbef35d1f1903953b66624f910feef245ac',
  ],
  [
    '68a79eaca2324873eacc50cb9c6eca8cc68ea5d936f98787c60c7ebc74e6ce7c',
    'hamster diagram private dutch cause delay private meat slide toddler razor book happy fancy gospel tennis maple dilemma loan word shrug inflict delay length',
    '64c87cde7e12ecf6704ab95bb1408bef047c22db4cc7491c4271d170a1b213d20b385bc1588d9c7b38f1b39d415665b8a9030c9ec653d75e65f847d8fc1fc440',
  ],
  [
    'f585c11aec520db57dd353c69554b21a89b20fb0650966fa0a9d6f74fd989d8f',
    'void come effort suffer camp survey warrior heavy shoot primary clutch crush open amazing screen patrol group space point ten exist slush involve unfold',
    '01f5bced59dec48e362f2c45b5de68b9fd6c92c6634f44d6d40aab69056506f0e35524a518034ddc1192e1dacd32c1ed3eaa3c3b131c88ed8e7e54c49a5d0998',
  ],
];

describe('BIP-39 (trezor/python-mnemonic vectors, passphrase "TREZOR")', () => {
  for (const [entropyHex, mnemonic, seedHex] of TREZOR_VECTORS) {
    const words = mnemonic.split(' ').length;
    it(`${words} words: ${mnemonic.split(' ').slice(0, 3).join(' ')} ...`, () => {
      const entropy = entropyFromMnemonic(mnemonic);
      expect(entropy.toString('hex')).to.equal(entropyHex);
      expect(wordCount(entropy.length)).to.equal(words);
      expect(mnemonicBytesFromEntropy(Buffer.from(entropyHex, 'hex')).toString('utf8')).to.equal(mnemonic);
      expect(seedFromEntropy(Buffer.from(entropyHex, 'hex'), 'TREZOR').toString('hex')).to.equal(seedHex);
      expect(seedFromMnemonic(mnemonic, 'TREZOR').toString('hex')).to.equal(seedHex);
    });
  }

  it('normalises operator input (case, surrounding and repeated whitespace)', () => {
    const messy = '  Legal winner THANK year\twave sausage worth useful legal\n winner thank yellow ';
    expect(entropyFromMnemonic(messy).toString('hex')).to.equal('7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f');
  });

  it('refuses mnemonics with a bad checksum, unknown words or a wrong length', () => {
    for (const bad of [
      'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon',
      'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abou',
      'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about',
      '',
    ]) {
      expect(() => entropyFromMnemonic(bad), bad).to.throw(KeyStoreError, /not a valid English BIP-39 mnemonic/);
    }
  });

  it('refuses entropy of a length BIP-39 does not define', () => {
    expect(() => mnemonicBytesFromEntropy(new Uint8Array(15))).to.throw(KeyStoreError);
    expect(() => mnemonicBytesFromEntropy(new Uint8Array(33))).to.throw(KeyStoreError);
  });
});
