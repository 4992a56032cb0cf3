import { expect } from 'chai';
import * as crypto from 'node:crypto';
import { SecretBox, parseMasterKey } from './secret-box';

describe('secret box: AES-256-GCM under the master key', () => {
  const key = crypto.randomBytes(32);
  const box = new SecretBox(key);

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.seal('my-api-secret', 7);
    expect(sealed.ciphertext.toString('utf8')).not.to.contain('my-api-secret');
    expect(sealed.iv).to.have.length(12);
    expect(box.open(sealed, 7).toString()).to.equal('my-api-secret');
    expect(box.seal('my-api-secret', 7).ciphertext.equals(sealed.ciphertext)).to.equal(false); // fresh IV
  });

  it('binds the ciphertext to its application and key, and detects tampering', () => {
    const sealed = box.seal('s', 7);
    expect(() => box.open(sealed, 8)).to.throw();
    const tampered = { ...sealed, ciphertext: Buffer.from(sealed.ciphertext) };
    tampered.ciphertext[0]! ^= 1;
    expect(() => box.open(tampered, 7)).to.throw();
    expect(() => new SecretBox(crypto.randomBytes(32)).open(sealed, 7)).to.throw(/master key/);
  });

  it('accepts 64 hex or base64 keys only', () => {
    expect(parseMasterKey(key.toString('hex'), 'K').equals(key)).to.equal(true);
    expect(parseMasterKey(key.toString('base64'), 'K').equals(key)).to.equal(true);
    expect(() => parseMasterKey('short', 'WCS_MASTER_KEY')).to.throw(/^WCS_MASTER_KEY: must be 32 bytes/);
  });
});
