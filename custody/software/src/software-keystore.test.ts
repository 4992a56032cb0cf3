import { expect } from 'chai';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { HDKey } from '@scure/bip32';
import { PLUGIN_API_VERSION, type KeyRef, type KeySpec } from '@wcs/core';
import { entropyFromMnemonic, seedFromMnemonic } from './bip39';
import { KeyStoreError, type KeyStoreErrorCode } from './errors';
import { plugin } from './plugin';
import { initializeSoftwareKeystore, SoftwareKeyStore } from './software-keystore';
import { ABANDON, FAST, options, removeTempDirs, storeWithMnemonic, tempDir } from './test-support';

const PASS = 'correct horse battery staple';
/** trezor/python-mnemonic vectors.json, 24 words (entropy 68a79eac...). */
const HAMSTER =
  'hamster diagram private dutch cause delay private meat slide toddler razor book happy fancy gospel tennis maple dilemma loan word shrug inflict delay length';
const EVM: KeySpec = { namespace: 'evm', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0/{index}" };
const SOL: KeySpec = { namespace: 'solana', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}'" };

function ref(spec: KeySpec, applicationId = 1, index = 0): KeyRef {
  return { applicationId, spec, purpose: 'deposit', index };
}

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

async function failure(what: () => Promise<unknown>): Promise<KeyStoreError> {
  try {
    await what();
  } catch (e) {
    expect(e).to.be.instanceOf(KeyStoreError);
    return e as KeyStoreError;
  }
  return expect.fail('expected a KeyStoreError');
}

async function expectCode(what: () => Promise<unknown>, code: KeyStoreErrorCode, message?: RegExp): Promise<KeyStoreError> {
  const e = await failure(what);
  expect(e.code, e.message).to.equal(code);
  if (message) expect(e.message).to.match(message);
  return e;
}

/** Every secret derived from a mnemonic, as hex/text, that must never show up in files or status. */
function secretsOf(mnemonic: string, passphrase: string): string[] {
  const seed = seedFromMnemonic(mnemonic);
  const master = HDKey.fromMasterSeed(seed);
  const words = mnemonic.split(' ').filter((w) => w.length >= 5);
  return [
    mnemonic,
    ...words,
    entropyFromMnemonic(mnemonic).toString('hex'),
    seed.toString('hex'),
    hex(master.privateKey!),
    hex(master.chainCode!),
    master.privateExtendedKey,
    passphrase,
  ];
}

describe('SoftwareKeyStore: keystore file and configuration', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  describe('keystore file', () => {
    it('round-trips with production scrypt parameters and writes the documented format', async () => {
      const dir = await tempDir();
      const opts = options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS });
      const facts = await initializeSoftwareKeystore(opts, { mnemonic: ABANDON });
      // BIP-32 master fingerprint of "abandon ... about" (empty BIP-39 passphrase) is 73c5da0a
      // (e.g. the key origin [73c5da0a/84'/0'/0'] in BIP-84 / descriptor examples for this mnemonic).
      expect(facts).to.deep.include({ backend: 'software', file: path.join(dir, 'keystore.json'), fingerprint: '73c5da0a', words: 12, mnemonic: 'provided' });
      const file = JSON.parse(await fs.readFile(path.join(dir, 'keystore.json'), 'utf8'));
      expect(Object.keys(file).sort()).to.deep.equal(['cipher', 'ciphertext', 'createdAt', 'fingerprint', 'iv', 'kdf', 'kdfParams', 'tag', 'version']);
      expect(file).to.deep.include({ version: 1, kdf: 'scrypt', cipher: 'aes-256-gcm', fingerprint: '73c5da0a' });
      expect(file.kdfParams).to.include({ N: 2 ** 15, r: 8, p: 1 });
      expect(file.kdfParams.salt).to.match(/^[0-9a-f]{64}$/);
      expect(file.iv).to.match(/^[0-9a-f]{24}$/);
      expect(file.tag).to.match(/^[0-9a-f]{32}$/);
      expect(file.ciphertext).to.match(/^[0-9a-f]{32}$/);
      expect(Date.parse(file.createdAt)).to.be.closeTo(Date.now(), 60_000);

      const store = new SoftwareKeyStore(opts);
      await store.init();
      const fast = await storeWithMnemonic(ABANDON);
      for (const r of [ref(EVM, 1, 0), ref(EVM, 3, 9), ref(SOL, 2, 4)]) {
        expect(hex((await store.getPublicKey(r)).bytes)).to.equal(hex((await fast.getPublicKey(r)).bytes));
      }
      expect(await store.status()).to.deep.include({ backend: 'software', fingerprint: '73c5da0a', unlocked: true, initialized: true });
      await store.destroy();
      await fast.destroy();
    });

    it('writes mode 0600, leaves no temporary files and never the mnemonic, entropy or seed', async () => {
      const dir = await tempDir();
      await initializeSoftwareKeystore(options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS }), { mnemonic: HAMSTER }, FAST);
      const stat = await fs.stat(path.join(dir, 'keystore.json'));
      expect(stat.mode & 0o777).to.equal(0o600);
      expect(await fs.readdir(dir)).to.deep.equal(['keystore.json']);
      const text = await fs.readFile(path.join(dir, 'keystore.json'), 'utf8');
      for (const secret of secretsOf(HAMSTER, PASS)) expect(text, secret).to.not.include(secret);
      expect(JSON.parse(text).ciphertext).to.have.length(64);
    });

    it('refuses to overwrite an existing keystore file', async () => {
      const dir = await tempDir();
      const opts = options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS });
      await initializeSoftwareKeystore(opts, { mnemonic: ABANDON }, FAST);
      const before = await fs.readFile(path.join(dir, 'keystore.json'), 'utf8');
      await expectCode(() => initializeSoftwareKeystore(opts, {}, FAST), 'KEYSTORE_EXISTS', /already exists; refusing to overwrite/);
      await expectCode(() => initializeSoftwareKeystore(opts, { mnemonic: HAMSTER }, FAST), 'KEYSTORE_EXISTS');
      expect(await fs.readFile(path.join(dir, 'keystore.json'), 'utf8')).to.equal(before);
    });

    it('generates a 24-word (256-bit) seed when no mnemonic is given, and reports no secret', async () => {
      const dir = await tempDir();
      const facts = await initializeSoftwareKeystore(options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS }), {}, FAST);
      expect(facts).to.deep.include({ words: 24, mnemonic: 'generated', passphraseSource: 'environment variable WCS_KEYSTORE_PASSPHRASE' });
      expect(facts.fingerprint).to.match(/^[0-9a-f]{8}$/);
      expect(JSON.stringify(facts)).to.not.include(PASS);
      const file = JSON.parse(await fs.readFile(path.join(dir, 'keystore.json'), 'utf8'));
      expect(file.ciphertext).to.have.length(64);
      const other = await tempDir();
      const facts2 = await initializeSoftwareKeystore(options(other, { WCS_KEYSTORE_PASSPHRASE: PASS }), {}, FAST);
      expect(facts2.fingerprint).to.not.equal(facts.fingerprint);
    });

    it('refuses an invalid mnemonic and writes nothing', async () => {
      const dir = await tempDir();
      const opts = options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS });
      await expectCode(() => initializeSoftwareKeystore(opts, { mnemonic: 'abandon '.repeat(12).trim() }, FAST), 'KEYSTORE_MNEMONIC_INVALID');
      await expectCode(() => initializeSoftwareKeystore(opts, { mnemonic: 'correct horse battery staple' }, FAST), 'KEYSTORE_MNEMONIC_INVALID');
      expect(await fs.readdir(dir)).to.deep.equal([]);
    });

    it('reports a wrong passphrase clearly, without crypto internals', async () => {
      const dir = await tempDir();
      await initializeSoftwareKeystore(options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS }), { mnemonic: ABANDON }, FAST);
      const store = new SoftwareKeyStore(options(dir, { WCS_KEYSTORE_PASSPHRASE: 'wrong' }), FAST);
      const e = await expectCode(() => store.init(), 'KEYSTORE_DECRYPT', /^keystore passphrase is wrong or the file is corrupt/);
      expect(e.cause).to.equal(undefined);
      expect(e.message).to.not.match(/unsupported state|authenticate|decipher/i);
      expect(store.unlocked).to.equal(false);
      await expectCode(() => store.getPublicKey(ref(EVM)), 'KEYSTORE_LOCKED');
    });

    for (const [what, edit, code] of [
      ['ciphertext', (f: Record<string, unknown>) => ({ ...f, ciphertext: flip(f.ciphertext as string) }), 'KEYSTORE_DECRYPT'],
      ['tag', (f: Record<string, unknown>) => ({ ...f, tag: flip(f.tag as string) }), 'KEYSTORE_DECRYPT'],
      ['iv', (f: Record<string, unknown>) => ({ ...f, iv: flip(f.iv as string) }), 'KEYSTORE_DECRYPT'],
      ['fingerprint (authenticated header)', (f: Record<string, unknown>) => ({ ...f, fingerprint: 'deadbeef' }), 'KEYSTORE_DECRYPT'],
      ['createdAt (authenticated header)', (f: Record<string, unknown>) => ({ ...f, createdAt: '2001-01-01T00:00:00.000Z' }), 'KEYSTORE_DECRYPT'],
      ['salt', (f: Record<string, unknown>) => ({ ...f, kdfParams: { ...(f.kdfParams as object), salt: flip((f.kdfParams as { salt: string }).salt) } }), 'KEYSTORE_DECRYPT'],
      ['version', (f: Record<string, unknown>) => ({ ...f, version: 2 }), 'KEYSTORE_FILE_INVALID'],
      ['kdfParams.N (lowered below the minimum)', (f: Record<string, unknown>) => ({ ...f, kdfParams: { ...(f.kdfParams as object), N: 16 } }), 'KEYSTORE_FILE_INVALID'],
      ['kdfParams.N (huge)', (f: Record<string, unknown>) => ({ ...f, kdfParams: { ...(f.kdfParams as object), N: 2 ** 30 } }), 'KEYSTORE_FILE_INVALID'],
      ['ciphertext length', (f: Record<string, unknown>) => ({ ...f, ciphertext: `${f.ciphertext as string}00` }), 'KEYSTORE_FILE_INVALID'],
    ] as const) {
      it(`detects a tampered ${what}`, async () => {
        const dir = await tempDir();
        const opts = options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS });
        await initializeSoftwareKeystore(opts, { mnemonic: ABANDON }, FAST);
        const file = path.join(dir, 'keystore.json');
        await fs.writeFile(file, JSON.stringify(edit(JSON.parse(await fs.readFile(file, 'utf8')))));
        const e = await expectCode(() => new SoftwareKeyStore(opts, FAST).init(), code);
        if (code === 'KEYSTORE_DECRYPT') expect(e.message).to.match(/^keystore passphrase is wrong or the file is corrupt/);
      });
    }

    it('refuses a file that is not JSON', async () => {
      const dir = await tempDir();
      const opts = options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS });
      await fs.writeFile(path.join(dir, 'keystore.json'), 'not json');
      await expectCode(() => new SoftwareKeyStore(opts, FAST).init(), 'KEYSTORE_FILE_INVALID', /not a valid keystore file: not JSON/);
      await expectCode(() => new SoftwareKeyStore(opts, FAST).status(), 'KEYSTORE_FILE_INVALID');
    });

    it('refuses a file written with a test-only scrypt N unless the same test option is set', async () => {
      const dir = await tempDir();
      const opts = options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS });
      await initializeSoftwareKeystore(opts, { mnemonic: ABANDON }, FAST);
      await expectCode(() => new SoftwareKeyStore(opts).init(), 'KEYSTORE_FILE_INVALID', /scrypt N=1024, below the minimum 32768/);
      expect(() => new SoftwareKeyStore(opts, { insecureTestScryptN: 1000 })).to.throw(KeyStoreError, /power of two/);
      expect(() => new SoftwareKeyStore(opts, { insecureTestScryptN: 2 ** 16 })).to.throw(KeyStoreError);
    });
  });

  describe('configuration', () => {
    it('not devMode, no passphrase: a clear error naming WCS_KEYSTORE_PASSPHRASE', async () => {
      const dir = await tempDir();
      await expectCode(() => initializeSoftwareKeystore(options(dir), {}, FAST), 'KEYSTORE_CONFIG', /WCS_KEYSTORE_PASSPHRASE/);
      expect(await fs.readdir(dir)).to.deep.equal([]);
      await initializeSoftwareKeystore(options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS }), {}, FAST);
      await expectCode(() => new SoftwareKeyStore(options(dir), FAST).init(), 'KEYSTORE_CONFIG', /set WCS_KEYSTORE_PASSPHRASE/);
      await expectCode(() => new SoftwareKeyStore(options(dir, { WCS_KEYSTORE_PASSPHRASE: '' }), FAST).init(), 'KEYSTORE_CONFIG');
    });

    it('not devMode, no keystore file: a clear error saying to run `wcs keystore init`', async () => {
      const dir = await tempDir();
      await expectCode(() => new SoftwareKeyStore(options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS }), FAST).init(), 'KEYSTORE_NOT_INITIALIZED', /run `wcs keystore init`/);
      expect(await fs.readdir(dir)).to.deep.equal([]);
    });

    it('refuses both passphrase variables at once', () => {
      expect(() => new SoftwareKeyStore(options('/tmp/x', { WCS_KEYSTORE_PASSPHRASE: 'a', WCS_KEYSTORE_PASSPHRASE_FILE: '/tmp/p' }))).to.throw(KeyStoreError, /not both/);
    });

    it('reads WCS_KEYSTORE_PASSPHRASE_FILE (trailing newline ignored) and honours WCS_KEYSTORE_FILE', async () => {
      const dir = await tempDir();
      const passFile = path.join(dir, 'pass.txt');
      await fs.writeFile(passFile, `${PASS}\r\n`);
      const keystoreFile = path.join(dir, 'elsewhere', 'seed.json');
      const opts = options(path.join(dir, 'data'), { WCS_KEYSTORE_PASSPHRASE_FILE: passFile, WCS_KEYSTORE_FILE: keystoreFile });
      const facts = await initializeSoftwareKeystore(opts, { mnemonic: ABANDON }, FAST);
      expect(facts.file).to.equal(keystoreFile);
      expect(facts.passphraseSource).to.equal(`file ${passFile}`);
      // the same passphrase given inline unlocks it
      const inline = new SoftwareKeyStore(options(path.join(dir, 'data'), { WCS_KEYSTORE_PASSPHRASE: PASS, WCS_KEYSTORE_FILE: keystoreFile }), FAST);
      await inline.init();
      const fromFile = new SoftwareKeyStore(opts, FAST);
      await fromFile.init();
      expect(hex((await fromFile.getPublicKey(ref(EVM))).bytes)).to.equal(hex((await inline.getPublicKey(ref(EVM))).bytes));
      await fs.writeFile(passFile, '\n');
      await expectCode(() => new SoftwareKeyStore(opts, FAST).init(), 'KEYSTORE_CONFIG', /is empty/);
      await expectCode(
        () => new SoftwareKeyStore(options(dir, { WCS_KEYSTORE_PASSPHRASE_FILE: path.join(dir, 'missing'), WCS_KEYSTORE_FILE: keystoreFile }), FAST).init(),
        'KEYSTORE_CONFIG',
        /cannot read the keystore passphrase file/,
      );
    });

    it('devMode: creates the passphrase file (0600, 32 random bytes as hex) and the seed on first start', async () => {
      const dir = path.join(await tempDir(), 'fresh');
      const store = new SoftwareKeyStore(options(dir, {}, true), FAST);
      expect(await store.status()).to.deep.include({ initialized: false, unlocked: false, fingerprint: null });
      await store.init();
      expect((await fs.readdir(dir)).sort()).to.deep.equal(['keystore.json', 'keystore.passphrase']);
      const pass = await fs.readFile(path.join(dir, 'keystore.passphrase'), 'utf8');
      expect(pass).to.match(/^[0-9a-f]{64}$/);
      expect((await fs.stat(path.join(dir, 'keystore.passphrase'))).mode & 0o777).to.equal(0o600);
      expect((await fs.stat(path.join(dir, 'keystore.json'))).mode & 0o777).to.equal(0o600);
      const status = await store.status();
      expect(status).to.deep.include({ initialized: true, unlocked: true });
      expect(JSON.stringify(status)).to.not.include(pass);
      const key = hex((await store.getPublicKey(ref(EVM))).bytes);
      await store.destroy();
      // second start: same files, same keys
      const again = new SoftwareKeyStore(options(dir, {}, true), FAST);
      await again.init();
      expect(hex((await again.getPublicKey(ref(EVM))).bytes)).to.equal(key);
      expect((await fs.readdir(dir)).sort()).to.deep.equal(['keystore.json', 'keystore.passphrase']);
      await again.destroy();
      // `wcs keystore init` in dev mode uses the same generated passphrase file
      await expectCode(() => plugin.initialize(options(dir, {}, true), {}), 'KEYSTORE_EXISTS');
    });

    it('devMode: a missing passphrase file next to an existing keystore is an error, not a new passphrase', async () => {
      const dir = await tempDir();
      await new SoftwareKeyStore(options(dir, {}, true), FAST).init();
      await fs.rm(path.join(dir, 'keystore.passphrase'));
      await expectCode(() => new SoftwareKeyStore(options(dir, {}, true), FAST).init(), 'KEYSTORE_CONFIG', /keystore\.passphrase is missing.*WCS_KEYSTORE_PASSPHRASE/);
      expect((await fs.readdir(dir)).sort()).to.deep.equal(['keystore.json']);
    });

    it('devMode with a passphrase variable uses it and creates no passphrase file', async () => {
      const dir = await tempDir();
      await new SoftwareKeyStore(options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS }, true), FAST).init();
      expect(await fs.readdir(dir)).to.deep.equal(['keystore.json']);
      await new SoftwareKeyStore(options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS }, false), FAST).init();
    });
  });

  describe('status', () => {
    it('shows fingerprints and facts, never the mnemonic, seed, keys or passphrase', async () => {
      const dir = await tempDir();
      const opts = options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS });
      await initializeSoftwareKeystore(opts, { mnemonic: HAMSTER }, FAST);
      const store = new SoftwareKeyStore(opts, FAST);
      const locked = await store.status();
      expect(locked).to.deep.include({ backend: 'software', file: path.join(dir, 'keystore.json'), initialized: true, unlocked: false });
      expect(locked.curves).to.deep.equal(['secp256k1', 'ed25519']);
      expect(locked.fingerprint).to.match(/^[0-9a-f]{8}$/);
      await store.init();
      await store.getPublicKey(ref(EVM, 1, 0));
      await store.sign(ref(EVM, 1, 0), new Uint8Array(32).fill(1));
      await store.sign(ref(SOL, 1, 0), new Uint8Array([1, 2, 3]));
      const unlocked = await store.status();
      expect(unlocked).to.deep.include({ unlocked: true, fingerprint: locked.fingerprint, createdAt: locked.createdAt });
      const seed = seedFromMnemonic(HAMSTER);
      expect(unlocked.fingerprint).to.equal(HDKey.fromMasterSeed(seed).fingerprint.toString(16).padStart(8, '0'));
      for (const s of [locked, unlocked]) {
        const text = JSON.stringify(s);
        for (const secret of secretsOf(HAMSTER, PASS)) expect(text, secret).to.not.include(secret);
      }
      await store.destroy();
      expect(await store.status()).to.deep.include({ unlocked: false, fingerprint: locked.fingerprint });
    });
  });

  describe('keys and signing', () => {
    let store: SoftwareKeyStore;
    before(async () => {
      store = await storeWithMnemonic(ABANDON);
    });
    after(() => store.destroy());

    it('keeps applications apart: each applicationId is its own hardened account', async () => {
      const a = await store.getPublicKey(ref(EVM, 1, 0));
      const b = await store.getPublicKey(ref(EVM, 2, 0));
      expect(hex(a.bytes)).to.not.equal(hex(b.bytes));
      const seed = seedFromMnemonic(ABANDON);
      expect(hex(a.bytes)).to.equal(hex(HDKey.fromMasterSeed(seed).derive("m/44'/60'/1'/0/0").publicKey!));
      expect(hex(b.bytes)).to.equal(hex(HDKey.fromMasterSeed(seed).derive("m/44'/60'/2'/0/0").publicKey!));
    });

    it('derives per-user secp256k1 keys from the cached account xpub, not by private derivation', async () => {
      await store.getPublicKey(ref(EVM, 5, 0));
      const before = (await store.status()).derivations as { secpPrivateDerivations: number; secpPublicDerivations: number };
      for (let i = 1; i <= 100; i++) await store.getPublicKey(ref(EVM, 5, i));
      const after = (await store.status()).derivations as typeof before;
      expect(after.secpPrivateDerivations).to.equal(before.secpPrivateDerivations);
      expect(after.secpPublicDerivations).to.equal(before.secpPublicDerivations + 100);
    });

    it('hands out copies: mutating a returned key does not change the next answer', async () => {
      const first = await store.getPublicKey(ref(SOL, 1, 3));
      const copy = hex(first.bytes);
      first.bytes.fill(0);
      expect(hex((await store.getPublicKey(ref(SOL, 1, 3))).bytes)).to.equal(copy);
    });

    it('rejects bad templates and spec conflicts with clear errors', async () => {
      const cases: Array<[KeySpec, KeyStoreErrorCode, RegExp]> = [
        [{ namespace: 'x1', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}" }, 'KEY_REF_INVALID', /hardened levels only/],
        [{ namespace: 'x2', curve: 'secp256k1', pathTemplate: "m/44'/60'/0'/0/{index}" }, 'KEY_REF_INVALID', /\{account\}/],
        [{ namespace: 'x3', curve: 'secp256k1', pathTemplate: 'm/44\'/60\'/{account}/0/{index}' }, 'KEY_REF_INVALID', /must be hardened/],
        [{ namespace: 'x4', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0" }, 'KEY_REF_INVALID', /\{index\}/],
        [{ namespace: 'x5', curve: 'secp256k1', pathTemplate: "44'/60'/{account}'/0/{index}" }, 'KEY_REF_INVALID', /must start with/],
        [{ namespace: 'x6', curve: 'secp256k1', pathTemplate: "m/2147483648'/{account}'/{index}" }, 'KEY_REF_INVALID', /below 2\^31/],
        [{ namespace: '', curve: 'secp256k1', pathTemplate: "m/44'/61'/{account}'/0/{index}" }, 'KEY_REF_INVALID', /namespace/],
        [{ namespace: 'evm', curve: 'ed25519', pathTemplate: "m/44'/60'/{account}'/{index}'" }, 'KEY_CURVE_MISMATCH', /holds secp256k1 keys/],
        [{ namespace: 'evm', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/1/{index}" }, 'KEY_SPEC_CONFLICT', /already uses path template/],
      ];
      await store.getPublicKey(ref(EVM));
      for (const [spec, code, message] of cases) {
        await expectCode(() => store.getPublicKey(ref(spec)), code, message);
        await expectCode(() => store.sign(ref(spec), new Uint8Array(32)), code);
      }
      // two namespaces may share a template (Bitcoin testnet and regtest: coin type 1); they share keys
      const shared = await store.getPublicKey(ref({ namespace: 'evm-copy', curve: 'secp256k1', pathTemplate: EVM.pathTemplate }));
      expect(hex(shared.bytes)).to.equal(hex((await store.getPublicKey(ref(EVM))).bytes));
      // a different purpose of the same namespace may use its own template (e.g. fee keys)
      const fee = await store.getPublicKey({ ...ref({ ...EVM, pathTemplate: "m/44'/60'/{account}'/1/{index}" }), purpose: 'fee' });
      expect(hex(fee.bytes)).to.not.equal(hex((await store.getPublicKey(ref(EVM))).bytes));
    });

    it('rejects wrong payload sizes with clear errors', async () => {
      await expectCode(() => store.sign(ref(EVM), new Uint8Array(31)), 'KEY_PAYLOAD_INVALID', /32-byte digest, not 31 bytes/);
      await expectCode(() => store.sign(ref(SOL), new Uint8Array(0)), 'KEY_PAYLOAD_INVALID', /1 to 65536 bytes, not 0/);
      await expectCode(() => store.sign(ref(SOL), new Uint8Array(65537)), 'KEY_PAYLOAD_INVALID');
      await expectCode(() => store.sign(ref(SOL), [1, 2, 3] as unknown as Uint8Array), 'KEY_PAYLOAD_INVALID');
    });

    it('signs from a copy of the payload and accepts Buffers', async () => {
      const digest = Buffer.alloc(32, 9);
      const sig = await store.sign(ref(EVM, 1, 1), digest);
      expect(sig.bytes).to.have.length(64);
      expect(digest.equals(Buffer.alloc(32, 9))).to.equal(true);
    });
  });

  describe('lifecycle', () => {
    it('shares one unlock between concurrent init() calls; destroy() during init() wins', async () => {
      const dir = await tempDir();
      const opts = options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS });
      await initializeSoftwareKeystore(opts, { mnemonic: ABANDON }, FAST);
      const store = new SoftwareKeyStore(opts, FAST);
      await Promise.all([store.init(), store.init(), store.init()]);
      expect(store.unlocked).to.equal(true);
      await store.destroy();
      const pending = store.init();
      await store.destroy();
      const restarted = store.init();
      await expectCode(() => pending, 'KEYSTORE_LOCKED');
      await restarted;
      expect(store.unlocked).to.equal(true);
      await store.destroy();
      const again = store.init();
      await store.destroy();
      await expectCode(() => again, 'KEYSTORE_LOCKED');
      expect(store.unlocked).to.equal(false);
      await store.init();
      expect(store.unlocked).to.equal(true);
      await store.destroy();
    });
  });

  describe('plugin', () => {
    it('is the software backend of this plugin API', async () => {
      expect(plugin).to.include({ name: '@wcs/custody-software', backend: 'software', pluginApiVersion: PLUGIN_API_VERSION });
      const dir = await tempDir();
      const opts = options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS });
      const facts = await plugin.initialize(opts, { mnemonic: ABANDON });
      expect(facts).to.deep.include({ fingerprint: '73c5da0a', kdf: { name: 'scrypt', N: 2 ** 15, r: 8, p: 1 } });
      const store = plugin.create(opts);
      expect(store).to.be.instanceOf(SoftwareKeyStore);
      await store.init();
      expect(await store.status()).to.deep.include({ fingerprint: '73c5da0a', unlocked: true });
      await store.destroy();
    });
  });
});

function flip(hexText: string): string {
  const last = hexText.at(-1) === '0' ? '1' : '0';
  return hexText.slice(0, -1) + last;
}
