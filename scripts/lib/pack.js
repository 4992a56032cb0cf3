// Packing a workspace package as a publish would, shared by scripts/pack-check.js and the SDK
// README's test (test/src/sdk-readme.test.ts): commands run with nothing that would find packages
// another way (NODE_PATH) nor the npm run that started them, `npm pack --json`, and packSdk, which
// packs @wcs/sdk from a copy of sdk/ in a temporary folder, where `npm pack` runs its prepack build
// (the end-to-end suite rebuilds sdk/dist/esm while other things run: the copy keeps them apart).
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The environment of every command: nothing that would find packages another way (NODE_PATH), nor the npm run that started us. */
function childEnv() {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k === 'NODE_PATH' || k === 'INIT_CWD' || k === 'npm_config_local_prefix' || k === 'npm_config_call' || /^npm_(package|lifecycle)_/.test(k)) delete env[k];
  }
  return env;
}

/** A failure reported by its message alone (the command, where, its exit code and output). */
class StepError extends Error {}

/** Commands running now (each its own process group): a caller interrupted ends them (see pack-check's signal handler). */
const children = new Set();

/** Spawns a command whose output is collected; resolves with it and the exit code. */
function collect(cmd, args, cwd, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    children.add(child);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => {
      children.delete(child);
      reject(new StepError(`cannot run ${cmd}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ out, code: code ?? signal });
    });
  });
}

/** Runs a command in `cwd`; its output is kept and shown only when it fails. */
async function run(cmd, args, cwd) {
  const { out, code } = await collect(cmd, args, cwd, childEnv());
  if (code !== 0) throw new StepError(`${[cmd, ...args].join(' ')} (in ${cwd}) exited ${code}:\n${out}`);
  return out;
}

/** Copies a folder, leaving out what a build or an install makes. */
function copyTree(from, to, skip) {
  fs.cpSync(from, to, { recursive: true, filter: (src) => !skip.includes(path.relative(from, src).split(path.sep)[0]) || path.relative(from, src) === '' });
}

/** `npm pack --json` in `cwd` of `spec`: the tarball's path and the files in it. */
async function pack(spec, cwd, dest) {
  const out = await run(npm, ['pack', spec, '--json', '--pack-destination', dest], cwd);
  const json = JSON.parse(out.slice(out.indexOf('[')));
  const p = json[0];
  return { name: p.name, version: p.version, file: path.join(dest, p.filename), integrity: p.integrity, files: p.files.map((f) => f.path), size: p.size };
}

/**
 * Packs @wcs/sdk into `dest` from a copy of sdk/ made at `<tmp>/sdk` (its node_modules and dist
 * left out), its prepack build run there by `npm pack`; the root's node_modules, linked into the
 * copy, give that build typescript and @types/node. Resolves with pack()'s answer and `dir`, the copy.
 */
async function packSdk(tmp, dest) {
  const sdkCopy = path.join(tmp, 'sdk');
  copyTree(path.join(ROOT, 'sdk'), sdkCopy, ['node_modules', 'dist']);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(sdkCopy, 'node_modules'), 'dir');
  const p = await pack('.', sdkCopy, dest);
  return { ...p, dir: sdkCopy };
}

module.exports = { ROOT, npm, childEnv, StepError, children, collect, run, copyTree, pack, packSdk };
