// The README's test line on a machine without SoftHSM2: `npm test` must either install it
// (root or passwordless sudo, with apt-get; .ci/run proves that path on every run by removing
// SoftHSM2 first) or, when it cannot, fail in its first second with one line saying what to run.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

describe('the README test line on a machine without SoftHSM2', function () {
  let bin: string;

  before(function () {
    // This machine's PATH minus softhsm2-util and every way to install it (apt-get, apt, sudo):
    // a fresh Debian machine where the user cannot install packages.
    bin = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-e2e-path-'));
    for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
      if (!dir || !fs.existsSync(dir)) continue;
      for (const name of fs.readdirSync(dir)) {
        if (['softhsm2-util', 'apt-get', 'apt', 'sudo'].includes(name) || fs.existsSync(path.join(bin, name))) continue;
        fs.symlinkSync(path.join(dir, name), path.join(bin, name));
      }
    }
    if (!fs.existsSync(path.join(bin, 'npm'))) throw new Error('npm not found on PATH');
  });

  after(function () {
    fs.rmSync(bin, { recursive: true, force: true });
  });

  const envWithout = (): NodeJS.ProcessEnv => ({
    PATH: bin,
    HOME: process.env.HOME,
    // a library path that does not exist, so the installed SoftHSM2 of this machine is not found either
    WCS_TEST_SOFTHSM_LIBRARY: path.join(bin, 'libsofthsm2.so'),
    npm_config_update_notifier: 'false',
  });

  it('`npm test` stops in its first second with one line naming what to run, exit code 3 (never 130)', async function () {
    const r = await run(path.join(bin, 'npm'), ['test'], envWithout());
    expect(r.code, r.stderr).to.equal(3);
    // npm's own configuration warnings of this machine aside, stderr is the one line
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('npm warn'));
    expect(lines, r.stderr).to.have.length(1);
    expect(lines[0]).to.match(/^npm test needs SoftHSM2 \(softhsm2-util is not on PATH; .*libsofthsm2\.so is missing; cannot install it here: apt-get is not on PATH\): /);
    expect(lines[0]).to.contain('apt-get install -y softhsm2');
    // nothing was built or started: the check runs before tsc and lerna (npm's own start-up included)
    expect(r.stdout.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('> ')), r.stdout).to.deep.equal([]);
    expect(r.ms, 'npm test should stop at once').to.be.below(3000);
  });

  it('the check itself passes where SoftHSM2 is present (this machine, as the suite needs it)', async function () {
    const r = await run(process.execPath, ['scripts/test-prereqs.js'], process.env);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.equal('');
  });
});
