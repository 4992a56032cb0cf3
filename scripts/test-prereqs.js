#!/usr/bin/env node
// First step of `npm test`: makes sure the machine has what the tests need that npm cannot
// install: SoftHSM2 (Debian package `softhsm2`), the real PKCS#11 HSM the custody-pkcs11 package
// and the HSM end-to-end tests run against, and Chromium (Debian package `chromium`, at
// WCS_TEST_CHROMIUM, default /usr/bin/chromium), the browser the console's tests drive.
//
// - Present (softhsm2-util on PATH and the module at WCS_TEST_SOFTHSM_LIBRARY, default
//   /usr/lib/softhsm/libsofthsm2.so): prints nothing, exits 0.
// - Missing, and this process can install it (root, or passwordless sudo, and apt-get on
//   PATH): installs it with apt-get (one line says so first), then checks again.
// - Missing otherwise: one line on stderr saying exactly what to run, exit code 3, within
//   the first second of the test run (no network, no build, no database touched).
'use strict';
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const LIBRARY = process.env.WCS_TEST_SOFTHSM_LIBRARY || '/usr/lib/softhsm/libsofthsm2.so';
const CHROMIUM = process.env.WCS_TEST_CHROMIUM || '/usr/bin/chromium';
const EXIT_MISSING = 3;

/** The absolute path of an executable found on PATH, or null. */
function onPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      /* not here */
    }
  }
  return null;
}

function missing() {
  const why = [];
  if (!onPath('softhsm2-util')) why.push('softhsm2-util is not on PATH');
  if (!fs.existsSync(LIBRARY)) why.push(`${LIBRARY} is missing`);
  return why;
}

/** How this process may run apt-get as root: [] as root, ['sudo', '-n'] with passwordless sudo, null when it cannot. */
function asRoot() {
  if (typeof process.getuid === 'function' && process.getuid() === 0) return [];
  const sudo = onPath('sudo');
  if (sudo && spawnSync(sudo, ['-n', 'true'], { stdio: 'ignore', timeout: 2000 }).status === 0) return [sudo, '-n'];
  return null;
}

/** Chromium: installed with apt-get alongside SoftHSM2 when missing; a machine that cannot install it is told how. */
function chromiumMissing() {
  return fs.existsSync(CHROMIUM) ? [] : [`${CHROMIUM} is missing`];
}

function main() {
  const hsm = softhsm();
  if (hsm !== 0) return hsm;
  const why = chromiumMissing();
  if (why.length === 0) return 0;
  const apt = onPath('apt-get');
  const root = asRoot();
  const fix = 'install it (Debian/Ubuntu: sudo apt-get install -y chromium), or point WCS_TEST_CHROMIUM at a Chromium binary, then run npm test again';
  if (!apt || !root) {
    process.stderr.write(`npm test needs Chromium for the console's browser tests (${why.join('; ')}; cannot install it here: ${!apt ? 'apt-get is not on PATH' : 'not root and no passwordless sudo'}): ${fix}\n`);
    return EXIT_MISSING;
  }
  process.stderr.write(`npm test: installing Chromium with apt-get (${why.join('; ')})\n`);
  const run = (args) => {
    const [cmd, ...rest] = [...root, apt, ...args];
    execFileSync(cmd, rest, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  };
  try {
    run(['update', '-q']);
    run(['install', '-y', '-q', '--no-install-recommends', 'chromium']);
  } catch (e) {
    process.stderr.write(`npm test needs Chromium and apt-get failed (${e.message.split('\n')[0]}): ${fix}\n`);
    return EXIT_MISSING;
  }
  if (chromiumMissing().length) {
    process.stderr.write(`npm test needs Chromium, still missing after apt-get install (${CHROMIUM}): ${fix}\n`);
    return EXIT_MISSING;
  }
  return 0;
}

function softhsm() {
  const why = missing();
  if (why.length === 0) return 0;
  const apt = onPath('apt-get');
  const root = asRoot();
  const fix = 'install it (Debian/Ubuntu: sudo apt-get install -y softhsm2), or point WCS_TEST_SOFTHSM_LIBRARY at libsofthsm2.so, then run npm test again';
  if (!apt || !root) {
    const cannot = !apt ? 'apt-get is not on PATH' : 'not root and no passwordless sudo';
    process.stderr.write(`npm test needs SoftHSM2 (${why.join('; ')}; cannot install it here: ${cannot}): ${fix}\n`);
    return EXIT_MISSING;
  }
  process.stderr.write(`npm test: installing SoftHSM2 with apt-get (${why.join('; ')})\n`);
  const run = (args) => {
    const [cmd, ...rest] = [...root, apt, ...args];
    execFileSync(cmd, rest, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  };
  try {
    run(['update', '-q']);
    run(['install', '-y', '-q', '--no-install-recommends', 'softhsm2']);
  } catch (e) {
    process.stderr.write(`npm test needs SoftHSM2 and apt-get failed (${e.message.split('\n')[0]}): ${fix}\n`);
    return EXIT_MISSING;
  }
  const still = missing();
  if (still.length) {
    process.stderr.write(`npm test needs SoftHSM2, still missing after apt-get install (${still.join('; ')}): ${fix}\n`);
    return EXIT_MISSING;
  }
  return 0;
}

process.exitCode = main();
