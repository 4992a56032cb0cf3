import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import { KeyStoreError } from './errors';

/** How long a writer waits for another process's lock on the key-store file. */
export const LOCK_WAIT_MS = 30_000;
/** A lock older than this is taken over even when its holder cannot be checked (another host). */
export const LOCK_STALE_MS = 120_000;

const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
}

async function readHolder(file: string): Promise<{ holder: Holder | null; mtimeMs: number } | null> {
  try {
    const [text, st] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)]);
    try {
      const h = JSON.parse(text) as Holder;
      return { holder: Number.isInteger(h.pid) && typeof h.token === 'string' ? h : null, mtimeMs: st.mtimeMs };
    } catch {
      // not a lock this code wrote
      return { holder: null, mtimeMs: st.mtimeMs };
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Whether the lock's holder is certainly gone: a dead process on this host, or a lock far too old. */
function stale(seen: { holder: Holder | null; mtimeMs: number }): boolean {
  const h = seen.holder;
  if (h && h.host === os.hostname() && h.pid !== process.pid && processGone(h.pid)) return true;
  return Date.now() - seen.mtimeMs > LOCK_STALE_MS;
}

/**
 * Takes over a stale lock: renames it aside (one process wins the rename) and removes it if it
 * is the lock judged stale; a fresh lock renamed by mistake (taken meanwhile) is put back.
 */
async function takeOver(lock: string, judged: { holder: Holder | null }): Promise<void> {
  const aside = `${lock}.stale-${randomBytes(6).toString('hex')}`;
  try {
    await fs.rename(lock, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const got = await readHolder(aside);
  if (got?.holder?.token !== judged.holder?.token) {
    await fs.link(aside, lock).catch(() => undefined);
  }
  await fs.rm(aside, { force: true });
}

/**
 * Runs fn holding `<file>.lock`, an exclusive lock between processes on one file system (the
 * service raising key-index marks, `wcs keystore change-passphrase`): created whole by a hard link
 * (which fails when the name exists), holding the holder's pid, host and a random token. A lock whose process died on this host (a kill -9) is
 * taken over at once; one from another host after LOCK_STALE_MS. Waits up to LOCK_WAIT_MS, then
 * fails with KEYSTORE_UNAVAILABLE.
 */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, waitMs = LOCK_WAIT_MS): Promise<T> {
  const lock = `${file}.lock`;
  const me: Holder = { pid: process.pid, host: os.hostname(), token: randomBytes(12).toString('hex') };
  const deadline = Date.now() + waitMs;
  let delay = 2;
  for (;;) {
    // the lock appears with its content at once: written to a private file, then hard-linked to the lock's name (fails if it exists)
    const mine = `${lock}.${me.token}`;
    try {
      await fs.writeFile(mine, JSON.stringify(me), { mode: 0o600, flag: 'wx' });
      try {
        await fs.link(mine, lock);
      } catch (e) {
        // no hard links on this file system: create the lock with O_EXCL and fill it
        if (!NO_LINKS.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
        await fs.writeFile(lock, JSON.stringify(me), { mode: 0o600, flag: 'wx' });
      }
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') {
        throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `cannot lock the key-store file (${lock}): ${code ?? (e as Error).message}; its directory must be writable`, { cause: e });
      }
    } finally {
      await fs.rm(mine, { force: true });
    }
    const seen = await readHolder(lock);
    if (seen && stale(seen)) {
      await takeOver(lock, seen);
      continue;
    }
    if (Date.now() > deadline) {
      const who = seen?.holder ? `process ${seen.holder.pid} on ${seen.holder.host}` : 'another process';
      throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `the key-store file is locked by ${who} (${lock}) for more than ${Math.round(waitMs / 1000)} s`);
    }
    await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
    delay = Math.min(delay * 2, 50);
  }
  try {
    return await fn();
  } finally {
    const now = await readHolder(lock).catch(() => null);
    if (now?.holder?.token === me.token) await fs.rm(lock, { force: true });
  }
}
