import { expect } from 'chai';
import { HDKey } from '@scure/bip32';
import { HdKeys } from './hd';
import { HARDENED, parsePath } from './path';

/**
 * BIP-32 test vectors 1 and 2: bitcoin/bips bip-0032.mediawiki, section "Test Vectors"
 * (commit 01c5e719d37db378ed25fc2e6b46cd437c230004). "H" is written as "'".
 */
const VECTORS: ReadonlyArray<{ seed: string; chains: ReadonlyArray<readonly [string, string, string]> }> = [
  {
    seed: '000102030405060708090a0b0c0d0e0f',
    chains: [
      [
        'm',
        'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8',
        'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi',
      ],
      [
        "m/0'",
        'xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw',
        'xprv9uHRZZhk6KAJC1avXpDAp4MDc3sQKNxDiPvvkX8Br5ngLNv1TxvUxt4cV1rGL5hj6KCesnDYUhd7oWgT11eZG7XnxHrnYeSvkzY7d2bhkJ7',
      ],
      [
        "m/0'/1",
        'xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ',
        'xprv9wTYmMFdV23N2TdNG573QoEsfRrWKQgWeibmLntzniatZvR9BmLnvSxqu53Kw1UmYPxLgboyZQaXwTCg8MSY3H2EU4pWcQDnRnrVA1xe8fs',
      ],
      [
        "m/0'/1/2'",
        'xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5',
        'xprv9z4pot5VBttmtdRTWfWQmoH1taj2axGVzFqSb8C9xaxKymcFzXBDptWmT7FwuEzG3ryjH4ktypQSAewRiNMjANTtpgP4mLTj34bhnZX7UiM',
      ],
      [
        "m/0'/1/2'/2",
        'xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV',
        'xprvA2JDeKCSNNZky6uBCviVfJSKyQ1mDYahRjijr5idH2WwLsEd4Hsb2Tyh8RfQMuPh7f7RtyzTtdrbdqqsunu5Mm3wDvUAKRHSC34sJ7in334',
      ],
      [
        "m/0'/1/2'/2/1000000000",
        'xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy',
        'xprvA41z7zogVVwxVSgdKUHDy1SKmdb533PjDz7J6N6mV6uS3ze1ai8FHa8kmHScGpWmj4WggLyQjgPie1rFSruoUihUZREPSL39UNdE3BBDu76',
      ],
    ],
  },
  {
    seed: 'fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542',
    chains: [
      [
        'm',
        'xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB',
        'xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5e2DtALGdso3pGz6ssrdK4PFmM8NSpSBHNqPqm55Qn3LqFtT2emdEXVYsCzC2U',
      ],
      [
        'm/0',
        'xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH',
        'xprv9vHkqa6EV4sPZHYqZznhT2NPtPCjKuDKGY38FBWLvgaDx45zo9WQRUT3dKYnjwih2yJD9mkrocEZXo1ex8G81dwSM1fwqWpWkeS3v86pgKt',
      ],
      [
        "m/0/2147483647'",
        'xpub6ASAVgeehLbnwdqV6UKMHVzgqAG8Gr6riv3Fxxpj8ksbH9ebxaEyBLZ85ySDhKiLDBrQSARLq1uNRts8RuJiHjaDMBU4Zn9h8LZNnBC5y4a',
        'xprv9wSp6B7kry3Vj9m1zSnLvN3xH8RdsPP1Mh7fAaR7aRLcQMKTR2vidYEeEg2mUCTAwCd6vnxVrcjfy2kRgVsFawNzmjuHc2YmYRmagcEPdU9',
      ],
      [
        "m/0/2147483647'/1",
        'xpub6DF8uhdarytz3FWdA8TvFSvvAh8dP3283MY7p2V4SeE2wyWmG5mg5EwVvmdMVCQcoNJxGoWaU9DCWh89LojfZ537wTfunKau47EL2dhHKon',
        'xprv9zFnWC6h2cLgpmSA46vutJzBcfJ8yaJGg8cX1e5StJh45BBciYTRXSd25UEPVuesF9yog62tGAQtHjXajPPdbRCHuWS6T8XA2ECKADdw4Ef',
      ],
      [
        "m/0/2147483647'/1/2147483646'",
        'xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL',
        'xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJXXWYpDPS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2VbFWc',
      ],
      [
        "m/0/2147483647'/1/2147483646'/2",
        'xpub6FnCn6nSzZAw5Tw7cgR9bi15UV96gLZhjDstkXXxvCLsUXBGXPdSnLFbdpq8p9HmGsApME5hQTZ3emM2rnY5agb9rXpVGyy3bdW6EEgAtqt',
        'xprvA2nrNbFZABcdryreWet9Ea4LvTJcGsqrMzxHx98MMrotbir7yrKCEXw7nadnHM8Dq38EGfSh6dqA9QWTyefMLEcBYJUuekgW4BYPJcr9E7j',
      ],
    ],
  },
];

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

describe('BIP-32 (bitcoin/bips test vectors 1 and 2)', () => {
  VECTORS.forEach((v, n) => {
    describe(`test vector ${n + 1}`, () => {
      const seed = Buffer.from(v.seed, 'hex');

      it('master: xprv / xpub and fingerprint', () => {
        const [, xpub, xprv] = v.chains[0]!;
        const master = HDKey.fromMasterSeed(seed);
        expect(master.privateExtendedKey).to.equal(xprv);
        const keys = HdKeys.fromSeed(seed);
        expect(keys.secpPublicNode([]).publicExtendedKey).to.equal(xpub);
        expect(keys.secpPublicNode([]).privateKey).to.equal(null);
        expect(keys.fingerprint).to.equal(master.fingerprint.toString(16).padStart(8, '0'));
        keys.wipe();
      });

      for (const [path, xpub, xprv] of v.chains.slice(1)) {
        it(`${path}: private derivation gives xprv and xpub`, () => {
          const keys = HdKeys.fromSeed(seed);
          const node = keys.secpPrivateNode(parsePath(path));
          expect(node.privateExtendedKey).to.equal(xprv);
          expect(node.publicExtendedKey).to.equal(xpub);
          node.wipePrivateData();
          expect(node.privateKey).to.equal(null);
          keys.wipe();
        });

        it(`${path}: the cached-xpub public path gives the same xpub and public key`, () => {
          const keys = HdKeys.fromSeed(seed);
          const indices = parsePath(path);
          const expected = HDKey.fromExtendedKey(xpub).publicKey!;
          const node = keys.secpPublicNode(indices);
          expect(node.privateKey, 'cached nodes hold no private key').to.equal(null);
          expect(node.publicExtendedKey).to.equal(xpub);
          expect(hex(keys.secpPublicKey(indices))).to.equal(hex(expected));
          const [priv, pub] = keys.withSecpPrivateKey(indices, (k, p) => [hex(k), hex(p)]);
          expect(pub).to.equal(hex(expected));
          expect(priv, 'the signing key is the vector\'s private key').to.equal(hex(HDKey.fromExtendedKey(xprv).privateKey!));
          keys.wipe();
        });
      }
    });
  });

  it('derives unhardened leaves publicly: no private derivation after the account xpub is cached', () => {
    const keys = HdKeys.fromSeed(Buffer.from(VECTORS[0]!.seed, 'hex'));
    const account = [44 + HARDENED, 60 + HARDENED, 1 + HARDENED];
    keys.secpPublicKey([...account, 0, 0]);
    const privateBefore = keys.counters.secpPrivateDerivations;
    expect(privateBefore).to.equal(1);
    const reference = HDKey.fromMasterSeed(Buffer.from(VECTORS[0]!.seed, 'hex'));
    for (let i = 1; i <= 50; i++) {
      const pub = keys.secpPublicKey([...account, 0, i]);
      const [priv, viaPrivate] = keys.withSecpPrivateKey([...account, 0, i], (k, p) => [hex(k), hex(p)]);
      expect(hex(pub), `index ${i}`).to.equal(viaPrivate);
      // the one private step (libsecp256k1's tweak) gives @scure/bip32's key for the full path
      expect(priv, `index ${i}: private key`).to.equal(hex(reference.derive(`m/44'/60'/1'/0/${i}`).privateKey!));
    }
    // the 50 explicit cross-checks walked privately to their parent once, then took one private step each; none came from secpPublicKey
    expect(keys.counters.secpPrivateDerivations).to.equal(privateBefore + 1);
    expect(keys.counters.secpPrivateSteps).to.equal(50);
    expect(keys.counters.secpPublicDerivations).to.equal(1 + 51);
    // a hardened leaf falls back to private derivation
    keys.secpPublicKey([...account, 0, 7 + HARDENED]);
    expect(keys.counters.secpPrivateDerivations).to.equal(privateBefore + 2);
    // signing keys under another parent walk to it once
    keys.withSecpPrivateKey([...account, 1, 0], () => null);
    keys.withSecpPrivateKey([...account, 1, 1], () => null);
    expect(keys.counters.secpPrivateDerivations).to.equal(privateBefore + 3);
    keys.wipe();
    expect(() => keys.secpPublicKey([...account, 0, 99])).to.throw(/wiped/);
    expect(() => keys.withSecpPrivateKey([...account, 1, 0], () => null), 'the cached signing parent went with the masters').to.throw(/wiped/);
    expect(keys.cacheSizes.secpSigningParents).to.equal(0);
  });
});
