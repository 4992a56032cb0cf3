import { expect } from 'chai';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { KeyStoreError } from './errors';
import { readKeystore } from './keystore-file';
import { initializeSoftwareKeystore, SoftwareKeyStore } from './software-keystore';
import { ABANDON, FAST, options, removeTempDirs, tempDir } from './test-support';

const PASS = 'correct horse battery staple';
const HAMSTER =
  'hamster diagram private dutch cause delay private meat slide toddler razor book happy fancy gospel tennis maple dilemma loan word shrug inflict delay length';

async function code(what: () => Promise<unknown>): Promise<string> {
  try {
    await what();
  } catch (e) {
    expect(e).to.be.instanceOf(KeyStoreError);
    return (e as KeyStoreError).code;
  }
  return expect.fail('expected a KeyStoreError');
}

describe('software key store: key-index marks in the key-store file', function () {
  this.timeout(60_000);
  after(removeTempDirs);

  async function open(mnemonic = ABANDON): Promise<{ dir: string; file: string; store: SoftwareKeyStore }> {
    const dir = await tempDir();
    const opts = options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS });
    await initializeSoftwareKeystore(opts, { mnemonic }, FAST);
    const store = new SoftwareKeyStore(opts, FAST);
    await store.init();
    return { dir, file: path.join(dir, 'keystore.json'), store };
  }

  it('the file holds the marks outside the encrypted part, one per line; the seed part is untouched', async () => {
    const { file, store } = await open();
    const before = await readKeystore(file);
    await store.indexMarks.raise('lin-1', [{ applicationId: 2, namespace: 'evm', next: 16 }, { applicationId: 1, namespace: 'btc', next: 4 }]);
    const text = await fs.readFile(file, 'utf8');
    expect(text).to.contain('"indexMarks": [\n    ["lin-1",1,"btc",4],\n    ["lin-1",2,"evm",16]\n  ]\n}\n');
    const after = await readKeystore(file);
    const { indexMarks, ...seedPart } = after;
    expect(seedPart).to.deep.equal(before);
    expect(indexMarks).to.deep.equal([['lin-1', 1, 'btc', 4], ['lin-1', 2, 'evm', 16]]);
    expect((await fs.stat(file)).mode & 0o777).to.equal(0o600);
    // the file still unlocks, in a new store
    const again = new SoftwareKeyStore(options(path.dirname(file), { WCS_KEYSTORE_PASSPHRASE: PASS }), FAST);
    await again.init();
    expect(await again.indexMarks.read('lin-1')).to.deep.equal([{ applicationId: 1, namespace: 'btc', next: 4 }, { applicationId: 2, namespace: 'evm', next: 16 }]);
    await again.destroy();
    await store.destroy();
  });

  it('a raise that changes nothing writes nothing; raises arriving together share one write', async () => {
    const { file, store } = await open();
    await store.indexMarks.raise('lin-2', [{ applicationId: 1, namespace: 'evm', next: 50 }]);
    const writes = store.indexMarks.writes;
    const mtime = (await fs.stat(file)).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    expect(await store.indexMarks.raise('lin-2', [{ applicationId: 1, namespace: 'evm', next: 10 }])).to.deep.equal([{ applicationId: 1, namespace: 'evm', next: 50 }]);
    expect(store.indexMarks.writes).to.equal(writes);
    expect((await fs.stat(file)).mtimeMs).to.equal(mtime);
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => store.indexMarks.raise('lin-2', [{ applicationId: 1 + (i % 10), namespace: 'evm', next: 100 + i }])));
    for (let i = 0; i < 100; i++) expect(results[i]![0]!.next, `raise ${i}`).to.be.at.least(100 + i);
    expect((await store.indexMarks.read('lin-2')).map((m) => m.next)).to.deep.equal([190, 191, 192, 193, 194, 195, 196, 197, 198, 199]);
    expect(store.indexMarks.writes - writes, 'writes for 100 concurrent raises').to.be.below(10);
    await store.destroy();
  });

  it('refuses to write marks into a file that now holds another seed', async () => {
    const { dir, file, store } = await open();
    const other = await tempDir();
    await initializeSoftwareKeystore(options(other, { WCS_KEYSTORE_PASSPHRASE: PASS }), { mnemonic: HAMSTER }, FAST);
    await fs.copyFile(path.join(other, 'keystore.json'), file);
    expect(await code(() => store.indexMarks.raise('lin-3', [{ applicationId: 1, namespace: 'evm', next: 1 }]))).to.equal('KEYSTORE_FILE_INVALID');
    expect(await code(() => store.indexMarks.read('lin-3'))).to.equal('KEYSTORE_FILE_INVALID');
    expect((await readKeystore(file)).indexMarks).to.equal(undefined);
    expect(await fs.readdir(dir)).to.deep.equal(['keystore.json']);
    await store.destroy();
  });

  it('a key-store file that cannot be written (or read) fails the raise with KEYSTORE_UNAVAILABLE, never a silent success', async function () {
    if (process.getuid?.() === 0) {
      // root writes into a read-only directory anyway: the file vanishes instead
      const { dir, store } = await open();
      const moved = path.join(dir, 'gone');
      await fs.mkdir(moved);
      // the key store's directory vanishes under it (a lost volume)
      await fs.rename(path.join(dir, 'keystore.json'), path.join(moved, 'keystore.json'));
      expect(await code(() => store.indexMarks.raise('lin-4', [{ applicationId: 1, namespace: 'evm', next: 1 }]))).to.equal('KEYSTORE_UNAVAILABLE');
      await store.destroy();
      return;
    }
    const { dir, store } = await open();
    await fs.chmod(dir, 0o500);
    try {
      expect(await code(() => store.indexMarks.raise('lin-4', [{ applicationId: 1, namespace: 'evm', next: 1 }]))).to.equal('KEYSTORE_UNAVAILABLE');
    } finally {
      await fs.chmod(dir, 0o700);
      await store.destroy();
    }
  });

  it('a file with a malformed marks list is not a valid key store', async () => {
    const { dir, file, store } = await open();
    await store.destroy();
    const j = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
    for (const bad of [{}, [['lin', 0, 'evm', 1]], [['lin', 1, 'evm']], [['bad lineage', 1, 'evm', 1]], [['lin', 1, 'evm', 2 ** 31 + 1]]]) {
      await fs.writeFile(file, JSON.stringify({ ...j, indexMarks: bad }));
      expect(await code(() => new SoftwareKeyStore(options(dir, { WCS_KEYSTORE_PASSPHRASE: PASS }), FAST).init()), JSON.stringify(bad)).to.equal('KEYSTORE_FILE_INVALID');
    }
  });
});
