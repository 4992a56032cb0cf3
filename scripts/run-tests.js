#!/usr/bin/env node
// The suites of `npm test`, once the build is done (package.json: the prerequisites, `tsc -b`,
// then this). First the TON adapter package (examples/adapter-ton, a package outside the
// workspaces with its own lock file) is installed (npm ci) and built in its folder: the end-to-end
// suite loads it into the service (its TON test), so it must be ready before either
// lane starts. Then two lanes run side by side:
//
// - the packages' own suites, through lerna one at a time (--stream: each line prefixed with its
//   package), all but @wcs/sdk; then the TON adapter's tests, in its folder; then the pack check
//   (scripts/pack-check.js): @wcs/core and @wcs/sdk packed, installed from their tarballs in an
//   empty project and loaded there, and examples/adapter-template built and tested against the
//   packed core (about half a minute);
// - @wcs/sdk's suite, then the end-to-end suite (test/, the longest by far; its files run in
//   parallel worker processes, longest files first: test/.mocharc.js). The sdk suite comes first, alone in its lane:
//   its pretest rebuilds sdk/dist, which the end-to-end sdk test imports (the sdk-readme test packs
//   its own copy of sdk/ in a temporary folder and installs the tarball outside the repository).
//
// Every suite runs whatever happens to the others. Exit code 1 when any suite failed (or a lane
// could not run), 0 otherwise; SIGINT and SIGTERM are passed on to the suites.
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');

const children = new Set();
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const c of children) c.kill(sig);
    process.exitCode = 1;
  });
}

/** Runs cmd to completion; with a prefix, each output line is written with it (as lerna --stream does). */
function run(cmd, args, prefix) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd, args, { stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    children.add(child);
    if (prefix) {
      for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
        readline.createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => to.write(`${prefix}${line}\n`));
      }
    }
    let settled = false;
    const settle = (code, signal) => {
      if (settled) return;
      settled = true;
      children.delete(child);
      resolve({ ok: code === 0, code, signal, seconds: Math.round((Date.now() - started) / 1000) });
    };
    child.on('error', (e) => {
      process.stderr.write(`npm test: cannot run ${cmd}: ${e.message}\n`);
      settle(null, null);
    });
    child.on('close', settle);
  });
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const lerna = path.join(__dirname, '..', 'node_modules', '.bin', process.platform === 'win32' ? 'lerna.cmd' : 'lerna');

const tonDir = path.join(__dirname, '..', 'examples', 'adapter-ton');

/** Runs the npm commands in examples/adapter-ton one after another; stops at the first that fails. */
async function tonSteps(steps) {
  const started = Date.now();
  for (const args of steps) {
    const r = await run(npm, [...args, '--prefix', tonDir], '@wcs/adapter-ton: ');
    if (!r.ok) return { ...r, seconds: Math.round((Date.now() - started) / 1000) };
  }
  return { ok: true, code: 0, signal: null, seconds: Math.round((Date.now() - started) / 1000) };
}

async function main() {
  // its own install (npm ci from its lock file) and build, before both lanes (the e2e suite needs it)
  const tonBuild = await tonSteps([['ci', '--no-audit', '--no-fund'], ['run', 'build']]);
  const [[packages, tonTests, packCheck], [sdk, e2e]] = await Promise.all([
    (async () => {
      const p = await run(lerna, ['run', 'test', '--stream', '--concurrency', '1', '--no-bail', '--ignore', '@wcs/sdk', '--ignore', '@wcs/e2e']);
      // its tests, unless its install or build failed (that failure is its suite's result)
      const t = tonBuild.ok ? await tonSteps([['test']]) : tonBuild;
      return [p, t, await run(process.execPath, [path.join(__dirname, 'pack-check.js')])];
    })(),
    (async () => {
      const s = await run(npm, ['run', 'test', '--workspace', '@wcs/sdk'], '@wcs/sdk: ');
      const e = await run(npm, ['run', 'test', '--workspace', '@wcs/e2e'], '@wcs/e2e: ');
      return [s, e];
    })(),
  ]);
  const line = (name, r) => `${name} ${r.ok ? 'passed' : `FAILED (exit ${r.code ?? r.signal})`} in ${Math.floor(r.seconds / 60)}m${String(r.seconds % 60).padStart(2, '0')}s`;
  const ton = tonBuild.ok ? { ...tonTests, seconds: tonBuild.seconds + tonTests.seconds } : tonBuild;
  process.stdout.write(`\nnpm test: ${line('package suites (lerna)', packages)}; ${line('@wcs/adapter-ton (examples/)', ton)}; ${line('pack-check (tarballs, adapter template)', packCheck)}; ${line('@wcs/sdk', sdk)}; ${line('@wcs/e2e', e2e)}\n`);
  if (!packages.ok || !ton.ok || !packCheck.ok || !sdk.ok || !e2e.ok) process.exitCode = 1;
}

main().catch((e) => {
  process.stderr.write(`npm test: ${e && e.stack ? e.stack : e}\n`);
  process.exitCode = 1;
});
