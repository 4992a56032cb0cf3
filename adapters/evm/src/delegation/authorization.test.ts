import { expect } from 'chai';
import { Wallet, getBytes, hashAuthorization, hexlify, verifyAuthorization } from 'ethers';
import { authorizationDigest, codeAtAccount } from './authorization';

describe('delegation: EIP-7702 authorization digest and code (pure)', () => {
  it('authorizationDigest matches ethers hashAuthorization', () => {
    const cases: Array<{ chainId: bigint; nonce: bigint }> = [
      { chainId: 1n, nonce: 0n },
      { chainId: 31337n, nonce: 1n },
      { chainId: 8453n, nonce: 127n },
      { chainId: 56n, nonce: 128n },
      { chainId: 0xffffffffn, nonce: 0x1_0000_0000n },
      { chainId: (1n << 256n) - 1n, nonce: (1n << 64n) - 2n },
    ];
    for (const c of cases) {
      const address = Wallet.createRandom().address;
      const a = { ...c, address };
      expect(hexlify(authorizationDigest(a)), `${c.chainId}/${c.nonce}`).to.equal(hashAuthorization(a));
      expect(hexlify(authorizationDigest({ ...a, address: address.toLowerCase() }))).to.equal(hashAuthorization(a));
    }
  });

  it('a signature over the digest recovers to the signer (what the chain checks)', () => {
    const key = Wallet.createRandom();
    const a = { chainId: 31337n, address: Wallet.createRandom().address, nonce: 0n };
    const signature = key.signingKey.sign(authorizationDigest(a));
    expect(verifyAuthorization(a, signature)).to.equal(key.address);
  });

  it('refuses chain id 0, out-of-range values and malformed addresses', () => {
    const address = Wallet.createRandom().address;
    expect(() => authorizationDigest({ chainId: 0n, address, nonce: 0n })).to.throw(RangeError, /chain id 0/);
    expect(() => authorizationDigest({ chainId: -1n, address, nonce: 0n })).to.throw(RangeError);
    expect(() => authorizationDigest({ chainId: 1n << 256n, address, nonce: 0n })).to.throw(RangeError);
    expect(() => authorizationDigest({ chainId: 1n, address, nonce: -1n })).to.throw(RangeError);
    expect(() => authorizationDigest({ chainId: 1n, address, nonce: (1n << 64n) - 1n })).to.throw(RangeError);
    expect(() => authorizationDigest({ chainId: 1n, address: '0x1234', nonce: 0n })).to.throw(TypeError);
    expect(() => authorizationDigest({ chainId: 1 as unknown as bigint, address, nonce: 0n })).to.throw(TypeError);
    expect(getBytes(authorizationDigest({ chainId: 1n, address, nonce: 0n })).length).to.equal(32);
  });

  it('codeAtAccount: empty, delegated (EIP-55 delegate), contract', () => {
    const delegate = Wallet.createRandom().address;
    const designator = `0xef0100${delegate.slice(2).toLowerCase()}`;
    expect(codeAtAccount('0x')).to.deep.equal({ kind: 'EMPTY' });
    expect(codeAtAccount(designator)).to.deep.equal({ kind: 'DELEGATED', delegate });
    expect(codeAtAccount(`0x${designator.slice(2).toUpperCase()}`)).to.deep.equal({ kind: 'DELEGATED', delegate });
    expect(codeAtAccount(designator.slice(0, -2))).to.deep.equal({ kind: 'CONTRACT' });
    expect(codeAtAccount(`${designator}00`)).to.deep.equal({ kind: 'CONTRACT' });
    expect(codeAtAccount(`0xef0000${delegate.slice(2)}`)).to.deep.equal({ kind: 'CONTRACT' });
    expect(codeAtAccount('0x6080604052')).to.deep.equal({ kind: 'CONTRACT' });
    for (const bad of ['', '0x0', 'ef0100', '0xzz']) expect(() => codeAtAccount(bad), bad).to.throw(TypeError);
  });
});
