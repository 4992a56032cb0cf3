import { expect } from 'chai';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../config/config';
import { MasterKeyMissingError, SecretBox, masterKeyId, parseMasterKey } from './secret-box';

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

describe('secret box: key ids and two keys during a rotation', () => {
  const oldKey = Buffer.alloc(32, 0x11);
  const newKey = Buffer.alloc(32, 0x33);

  it('records the id of the sealing key: 16 hex of SHA-256("wcs-master-key-id" || key)', () => {
    expect(masterKeyId(oldKey)).to.equal(crypto.createHash('sha256').update('wcs-master-key-id').update(oldKey).digest('hex').slice(0, 16));
    expect(masterKeyId(oldKey)).to.equal('79020fe75edbf024');
    expect(new SecretBox(oldKey).seal('x', 1).keyId).to.equal('79020fe75edbf024');
    expect(masterKeyId(newKey)).to.match(/^[0-9a-f]{16}$/).and.not.equal(masterKeyId(oldKey));
  });

  it('opens values sealed before key rotation existed (a fixed vector of the first release)', () => {
    // sealed by the first release's SecretBox: key 0x11 x 32, iv 0x22 x 12
    const iv = Buffer.alloc(12, 0x22);
    const appSecret = { ciphertext: Buffer.from('7b926028a3b6b23e9556f34f2dc59bb06b', 'hex'), iv, authTag: Buffer.from('17ea1ba0a0c49aefde9d29fafbdc60a4', 'hex'), keyId: '79020fe75edbf024' };
    const totp = { ciphertext: Buffer.from('17e6257a849af9286da6', 'hex'), iv, authTag: Buffer.from('76fdcc6b840b6fc1c48f6d178f1f5a6c', 'hex'), keyId: '79020fe75edbf024' };
    for (const box of [new SecretBox(oldKey), new SecretBox(oldKey, newKey), new SecretBox(newKey, oldKey)]) {
      expect(box.open(appSecret, 7).toString()).to.equal('legacy-api-secret');
      expect(box.openBound(totp, 'wcs-operator-totp:3').toString('hex')).to.equal('00112233445566778899');
    }
    expect(() => new SecretBox(newKey).open(appSecret, 7)).to.throw(MasterKeyMissingError, /sealed under master key 79020fe75edbf024, which this process does not hold/);
  });

  it('holds WCS_MASTER_KEY and WCS_MASTER_KEY_NEXT: opens what either sealed, seals with the one asked for', () => {
    const both = new SecretBox(oldKey, newKey);
    expect(both.keyId).to.equal(masterKeyId(oldKey));
    expect(both.nextKeyId).to.equal(masterKeyId(newKey));
    expect(both.keyIds).to.deep.equal([masterKeyId(oldKey), masterKeyId(newKey)]);
    expect(both.holds(masterKeyId(newKey))).to.equal(true);
    expect(both.holds('0000000000000000')).to.equal(false);

    const underOld = new SecretBox(oldKey).seal('s-old', 5);
    const underNew = new SecretBox(newKey).seal('s-new', 5);
    expect(both.open(underOld, 5).toString()).to.equal('s-old');
    expect(both.open(underNew, 5).toString()).to.equal('s-new');

    expect(both.seal('d', 5).keyId, 'default: WCS_MASTER_KEY').to.equal(masterKeyId(oldKey));
    const moved = both.seal('m', 5, both.nextKeyId!);
    expect(moved.keyId).to.equal(masterKeyId(newKey));
    expect(new SecretBox(newKey).open(moved, 5).toString(), 'opens with the new key alone').to.equal('m');
    expect(() => new SecretBox(oldKey).open(moved, 5)).to.throw(MasterKeyMissingError);
    expect(() => both.seal('x', 5, '0123456789abcdef')).to.throw(MasterKeyMissingError);

    // a value whose recorded key id was changed does not open under the other key either
    expect(() => both.open({ ...underOld, keyId: masterKeyId(newKey) }, 5)).to.throw(/unable to authenticate|auth/i);
  });

  it('fromConfig: WCS_MASTER_KEY(_FILE) and WCS_MASTER_KEY_NEXT(_FILE), naming the setting of a bad key', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-box-'));
    try {
      const base = { DATABASE_URL: 'postgres://u@h/db' };
      const fromEnv = SecretBox.fromConfig(loadConfig({ ...base, WCS_MASTER_KEY: oldKey.toString('hex'), WCS_MASTER_KEY_NEXT: newKey.toString('base64') }, tmp));
      expect([fromEnv.keyId, fromEnv.nextKeyId]).to.deep.equal([masterKeyId(oldKey), masterKeyId(newKey)]);
      fs.writeFileSync(path.join(tmp, 'mk'), oldKey.toString('hex') + '\n');
      fs.writeFileSync(path.join(tmp, 'next'), newKey.toString('hex') + '\n');
      const fromFiles = SecretBox.fromConfig(loadConfig({ ...base, WCS_MASTER_KEY_FILE: 'mk', WCS_MASTER_KEY_NEXT_FILE: 'next' }, tmp));
      expect([fromFiles.keyId, fromFiles.nextKeyId]).to.deep.equal([masterKeyId(oldKey), masterKeyId(newKey)]);
      expect(SecretBox.fromConfig(loadConfig({ ...base, WCS_MASTER_KEY: oldKey.toString('hex') }, tmp)).nextKeyId).to.equal(null);
      expect(() => SecretBox.fromConfig(loadConfig({ ...base, WCS_MASTER_KEY: oldKey.toString('hex'), WCS_MASTER_KEY_NEXT: 'nope' }, tmp))).to.throw(/^WCS_MASTER_KEY_NEXT: must be 32 bytes/);
      fs.writeFileSync(path.join(tmp, 'bad'), 'nope\n');
      expect(() => SecretBox.fromConfig(loadConfig({ ...base, WCS_MASTER_KEY_FILE: 'bad' }, tmp))).to.throw(/^WCS_MASTER_KEY_FILE: must be 32 bytes/);
      expect(() => SecretBox.fromConfig(loadConfig({ ...base, WCS_MASTER_KEY: oldKey.toString('hex'), WCS_MASTER_KEY_NEXT_FILE: 'bad' }, tmp))).to.throw(/^WCS_MASTER_KEY_NEXT_FILE: must be 32 bytes/);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
