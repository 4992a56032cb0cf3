import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const made: string[] = [];

/** A fresh folder under the OS temp dir, removed when the test run ends (whatever the outcome). */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

// A root-level hook, registered once, when the first spec file imports this module. Loaded by
// mocha-fixtures.ts before any spec file (mocha --require: no \`after\` yet), it is not registered
// here: the fixtures' root hook removes the folders after every file instead.
if (typeof after === 'function') after(removeTempDirs);
