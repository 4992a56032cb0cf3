import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The lock file of a data directory held by a running `wcs start` (docs: README, "Operator CLI"). */
export const LOCK_FILE = 'wcs.lock';

/** What the lock file holds: who holds the directory. */
export interface LockHolder {
  pid: number;
  host: string;
  /** When the holder started (ISO 8601, UTC). */
  startTime: string;
  /** Linux: the holder's start time in clock ticks since boot (/proc/PID/stat), to tell a reused pid apart. */
  procStart: string | null;
  /** Unique per acquisition: a takeover removes exactly the stale lock it judged. */
  token: string;
}

/** Another live `wcs start` holds the data directory (exit code 3). */
export class DataDirLockedError extends Error {
  readonly code = 'DATA_DIR_LOCKED';
  constructor(message: string, readonly holder: LockHolder | null) {
    super(message);
    this.name = 'DataDirLockedError';
  }
}

function procStart(pid: number): string | null {
  try {
    // field 22 (starttime); the command name (field 2) may hold spaces and parentheses
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function readHolder(file: string): LockHolder | null {
  try {
    const h = JSON.parse(fs.readFileSync(file, 'utf8')) as LockHolder;
    return Number.isInteger(h.pid) && typeof h.token === 'string' ? h : null;
  } catch {
    return null;
  }
}

/** Whether the recorded holder is certainly gone (its pid is dead, or now another process's). */
function holderGone(h: LockHolder): boolean {
  if (h.host !== os.hostname()) return false; // another machine's process: cannot be checked from here
  if (h.pid === process.pid) return true; // not us (we do not hold it yet): a previous life with the same pid, e.g. a restarted container
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return true;
  }
  // alive (or not ours to signal): gone only if that pid now belongs to a process started at another time
  const now = procStart(h.pid);
  return h.procStart !== null && now !== null && now !== h.procStart;
}

function describeHolder(file: string, h: LockHolder | null): string {
  if (!h) return `${file} exists but cannot be read; if no wcs start runs on this data directory, remove it`;
  const where = h.host === os.hostname() ? `pid ${h.pid}` : `pid ${h.pid} on host ${h.host} (if it is not running there, remove ${file})`;
  return `${where}, started ${h.startTime}`;
}

/**
 * An exclusive lock on a data directory, for what the directory owns: the embedded Postgres
 * cluster and the dev-mode devnets (devnets.json). Taken with an atomic create-if-absent (the
 * complete lock file is hard-linked into place, so it is never seen half-written). A lock whose
 * holder is gone is taken over: the contenders that judged the same stale lock race to create a
 * takeover marker named after its token (create-if-absent: one wins); only the winner removes that
 * lock, and it still has to create its own like anyone else, so two never both hold it.
 */
export class DataDirLock {
  private released = false;
  private readonly onExit = () => this.release();

  private constructor(
    readonly file: string,
    readonly holder: LockHolder,
  ) {}

  static acquire(dataDir: string): DataDirLock {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = path.join(dataDir, LOCK_FILE);
    const me: LockHolder = {
      pid: process.pid, host: os.hostname(), startTime: new Date(Date.now() - process.uptime() * 1000).toISOString(),
      procStart: procStart(process.pid), token: crypto.randomBytes(12).toString('hex'),
    };
    const tmp = `${file}.${me.token}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(me) + '\n', { mode: 0o600, flag: 'wx' });
    try {
      for (let round = 0; round < 2; round++) {
        try {
          fs.linkSync(tmp, file);
          const lock = new DataDirLock(file, me);
          process.once('exit', lock.onExit);
          return lock;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
        const held = readHolder(file);
        if (round > 0 || !held || !holderGone(held)) {
          throw new DataDirLockedError(`data directory ${dataDir} is in use by another wcs start (${describeHolder(file, held)})`, held);
        }
        const marker = DataDirLock.removeStale(file, held);
        if (marker) {
          throw new DataDirLockedError(`data directory ${dataDir}: the lock of a wcs start that is gone (pid ${held.pid}) is being taken over by another wcs start; if none is starting, remove ${marker} and ${file}`, held);
        }
      }
      throw new Error('unreachable');
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }

  /**
   * Removes the stale lock `held`, if this process wins the takeover of exactly that lock.
   * Returns null, or the marker of another contender's takeover (then this process stays out).
   */
  private static removeStale(file: string, held: LockHolder): string | null {
    const marker = `${file}.takeover.${held.token.replace(/[^0-9a-f]/gi, '')}`;
    try {
      fs.writeFileSync(marker, String(process.pid), { flag: 'wx', mode: 0o600 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return marker;
      throw e;
    }
    // only the marker's creator removes a lock with this token, and the holder is gone: it cannot change under us
    if (readHolder(file)?.token === held.token) fs.rmSync(file, { force: true });
    // markers of tokens already removed are never needed again; a crash here leaves a few bytes
    fs.rmSync(marker, { force: true });
    return null;
  }

  /** Removes the lock if it is still this process's. Idempotent; also runs at process exit. */
  release(): void {
    if (this.released) return;
    this.released = true;
    process.removeListener('exit', this.onExit);
    if (readHolder(this.file)?.token === this.holder.token) fs.rmSync(this.file, { force: true });
  }
}
