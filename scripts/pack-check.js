#!/usr/bin/env node
// The published shape of @wcs/core and @wcs/sdk, checked as a consumer meets it (part of `npm test`,
// after the package suites; run alone with `node scripts/pack-check.js [--keep]` after the root build):
//
// 1. packs @wcs/core from core/ (its dist/ is the root `tsc -b` build) and @wcs/sdk from a copy of
//    sdk/ in a temporary folder, where `npm pack` runs its prepack build as a publish would (the
//    end-to-end suite rebuilds sdk/dist/esm while this runs: the copy keeps the two apart); the
//    packing is scripts/lib/pack.js, which the SDK README's test (test/src/sdk-readme.test.ts) shares;
// 2. checks each tarball: no test files, every source map's sources shipped with it, every file
//    its `exports` names present;
// 3. installs both tarballs (and chai, core/testing's peer) into an empty project and loads there
//    `@wcs/core`, `@wcs/core/testing` and every entry point the SDK's `exports` names, CommonJS by
//    require and ES modules by import, then type-checks imports of all three (node10 and node16);
// 4. copies examples/adapter-template, puts the packed core where its package.json names it
//    (vendor/wcs-core.tgz), drops core's entry from the copied lock file (it records the committed
//    tarball's integrity, and npm would install its cached copy of that one), runs `npm install`,
//    `npm run build` and `npm test` there: both shared suites, with no NODE_PATH.
//
// An install that warns EBADENGINE fails the check. Exit code 0 when every step passed, 1 otherwise;
// the temporary folder is removed unless --keep.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, npm, childEnv, StepError, children, collect, run, copyTree, pack, packSdk } = require('./lib/pack');

const KEEP = process.argv.includes('--keep');
const tsc = require.resolve('typescript/bin/tsc', { paths: [ROOT] });

/** The temporary folder: removed, with the commands running now (scripts/lib/pack.js's children) ended, when this script is interrupted. */
let tmpDir = null;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, async () => {
    // each command is its own process group (npm's scripts and their tsc included): all of it ends
    for (const c of children) {
      try {
        process.kill(-c.pid, sig);
      } catch {
        // already gone
      }
    }
    for (let i = 0; i < 100 && children.size > 0; i++) await new Promise((r) => setTimeout(r, 50));
    if (tmpDir && !KEEP) fs.rmSync(tmpDir, { recursive: true, force: true, maxRetries: 5 });
    process.exit(1);
  });
}

function check(ok, message) {
  if (!ok) throw new StepError(message);
}

/** npm install output: an engine mismatch is a failure (the packages and their dependencies keep within Node 20). */
function noEngineWarnings(output, where) {
  const bad = output.split('\n').filter((l) => /EBADENGINE/.test(l));
  check(bad.length === 0, `${where}: npm install warned about engines:\n${bad.join('\n')}`);
}

/** The file paths an `exports` map names, with the conditions leading to each. */
function exportTargets(exportsField) {
  const out = [];
  const walk = (node, subpath, conditions) => {
    if (typeof node === 'string') out.push({ subpath, conditions, target: node });
    else if (Array.isArray(node)) node.forEach((n) => walk(n, subpath, conditions));
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) k.startsWith('.') ? walk(v, k, conditions) : walk(v, subpath, [...conditions, k]);
    }
  };
  walk(typeof exportsField === 'string' ? { '.': exportsField } : exportsField, '.', []);
  return out;
}

/** No test files; every source map's sources in the tarball; every file `exports`, `main` and `types` name in it. */
function checkTarball(p, manifest) {
  const files = new Set(p.files);
  const tests = p.files.filter((f) => /\.test\.[cm]?[jt]s(\.map)?$|\.test\.d\.[cm]?ts/.test(f));
  check(tests.length === 0, `${p.name}: test files in the tarball: ${tests.slice(0, 5).join(', ')}`);
  const missing = [];
  for (const f of p.files.filter((x) => x.endsWith('.map'))) {
    const map = JSON.parse(fs.readFileSync(path.join(p.dir, f), 'utf8'));
    for (const s of map.sources ?? []) {
      const shipped = path.posix.normalize(path.posix.join(path.posix.dirname(f), map.sourceRoot ?? '', s));
      if (!files.has(shipped)) missing.push(`${f} → ${shipped}`);
    }
  }
  check(missing.length === 0, `${p.name}: source maps point at files the package does not ship (${missing.length}), e.g.\n  ${missing.slice(0, 5).join('\n  ')}`);
  const named = [manifest.main, manifest.types, ...exportTargets(manifest.exports ?? {}).map((t) => t.target)].filter(Boolean);
  const absent = named.map((t) => path.posix.normalize(t)).filter((t) => !files.has(t));
  check(absent.length === 0, `${p.name}: package.json names files the tarball lacks: ${absent.join(', ')}`);
}

/** The consumer's checks, run by node in the empty project: every entry point loads and exposes what it should. */
const LOAD_CHECK = String.raw`
'use strict';
const assert = require('node:assert');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
(async () => {
  const core = require('@wcs/core');
  assert.strictEqual(typeof core.defineAdapter, 'function', '@wcs/core: defineAdapter');
  assert.strictEqual(typeof core.PLUGIN_API_VERSION, 'number', '@wcs/core: PLUGIN_API_VERSION');
  const testing = require('@wcs/core/testing');
  for (const f of ['runAdapterConformance', 'runChainConformance', 'testChain', 'adapterPackageRequire']) assert.strictEqual(typeof testing[f], 'function', '@wcs/core/testing: ' + f);
  const coreEsm = await import('@wcs/core');
  assert.strictEqual(typeof coreEsm.default.defineAdapter, 'function', 'import @wcs/core');
  const loaded = ['@wcs/core (require, import)', '@wcs/core/testing (require)'];
  // the SDK: the bare specifier both ways, then every file its exports name
  const cjs = require('@wcs/sdk');
  const esm = await import('@wcs/sdk');
  const names = (m) => Object.keys(m).filter((k) => k !== 'default' && k !== '__esModule').sort();
  assert.ok(names(cjs).includes('WcsClient'), 'require @wcs/sdk: WcsClient');
  assert.deepStrictEqual(names(esm), names(cjs), 'import and require of @wcs/sdk export the same names');
  loaded.push('@wcs/sdk (require, import)');
  const dir = path.dirname(require.resolve('@wcs/sdk/package.json'));
  for (const t of JSON.parse(process.env.SDK_TARGETS)) {
    const file = path.join(dir, t.target);
    if (t.conditions.includes('types')) continue; // checked by the type check
    const m = t.conditions.includes('require') ? require(file) : await import(pathToFileURL(file).href);
    assert.deepStrictEqual(names(m), names(cjs), '@wcs/sdk ' + t.subpath + ' [' + t.conditions.join(', ') + '] ' + t.target + ': the same exports as the package');
    loaded.push('@wcs/sdk ' + t.subpath + ' [' + t.conditions.join(' ') + '] ' + t.target);
  }
  console.log(loaded.join('\n'));
})().catch((e) => { console.error(e); process.exit(1); });
`;

const TYPES_CJS = `import { defineAdapter, type AdapterPlugin } from '@wcs/core';
import { runAdapterConformance, type AdapterFixture } from '@wcs/core/testing';
import { WcsClient } from '@wcs/sdk';
export const checks: [typeof defineAdapter, AdapterPlugin | null, typeof runAdapterConformance, AdapterFixture[], typeof WcsClient] = [defineAdapter, null, runAdapterConformance, [], WcsClient];
`;
const TYPES_ESM = `import { WcsClient, WebhookVerifier } from '@wcs/sdk';
import { defineAdapter } from '@wcs/core';
export const checks: [typeof WcsClient, typeof WebhookVerifier, typeof defineAdapter] = [WcsClient, WebhookVerifier, defineAdapter];
`;

async function main() {
  const started = Date.now();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-pack-check-'));
  tmpDir = tmp;
  const steps = [];
  const step = async (name, fn) => {
    const t = Date.now();
    const detail = await fn();
    steps.push(`${name} (${((Date.now() - t) / 1000).toFixed(1)}s)${detail ? `: ${detail}` : ''}`);
    process.stdout.write(`pack-check: ${steps[steps.length - 1]}\n`);
  };
  try {
    const packs = path.join(tmp, 'packs');
    fs.mkdirSync(packs);
    let core;
    let sdk;
    await step('packed @wcs/core and @wcs/sdk', async () => {
      check(fs.existsSync(path.join(ROOT, 'core', 'dist', 'index.js')), 'core/dist is missing: build first (npx tsc -b tsconfig.json)');
      // the SDK from a copy of its folder, its prepack build run there (scripts/lib/pack.js, shared with the SDK README's test)
      [core, sdk] = await Promise.all([
        pack(path.join(ROOT, 'core'), tmp, packs).then((p) => ({ ...p, dir: path.join(ROOT, 'core') })),
        packSdk(tmp, packs),
      ]);
      checkTarball(core, JSON.parse(fs.readFileSync(path.join(core.dir, 'package.json'), 'utf8')));
      checkTarball(sdk, JSON.parse(fs.readFileSync(path.join(sdk.dir, 'package.json'), 'utf8')));
      return `${path.basename(core.file)} (${core.files.length} files, ${Math.round(core.size / 1024)} kB), ${path.basename(sdk.file)} (${sdk.files.length} files, ${Math.round(sdk.size / 1024)} kB); no test files, every source map's sources shipped`;
    });

    const consumer = path.join(tmp, 'consumer');
    await step('installed both tarballs in an empty project and loaded every entry point', async () => {
      fs.mkdirSync(consumer);
      fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'wcs-pack-check-consumer', version: '1.0.0', private: true, allowScripts: { secp256k1: true } }, null, 2));
      const out = await run(npm, ['install', '--no-audit', '--no-fund', core.file, sdk.file, 'chai@^4.4.0'], consumer);
      noEngineWarnings(out, 'the empty project');
      const sdkManifest = JSON.parse(fs.readFileSync(path.join(consumer, 'node_modules', '@wcs', 'sdk', 'package.json'), 'utf8'));
      const targets = exportTargets(sdkManifest.exports).filter((t) => t.subpath !== './package.json');
      fs.writeFileSync(path.join(consumer, 'load-check.cjs'), LOAD_CHECK);
      const loaded = await collect(process.execPath, ['load-check.cjs'], consumer, { ...childEnv(), SDK_TARGETS: JSON.stringify(targets) });
      check(loaded.code === 0, `loading the packages in the empty project failed:\n${loaded.out}`);
      return `${loaded.out.trim().split('\n').length} entry points`;
    });

    await step('type-checked imports of @wcs/core, @wcs/core/testing and @wcs/sdk (node10 and node16 resolution)', async () => {
      fs.writeFileSync(path.join(consumer, 'types-cjs.ts'), TYPES_CJS);
      fs.writeFileSync(path.join(consumer, 'types-esm.mts'), TYPES_ESM);
      const base = { strict: true, noEmit: true, skipLibCheck: true, target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] };
      fs.writeFileSync(path.join(consumer, 'tsconfig.node10.json'), JSON.stringify({ compilerOptions: { ...base, module: 'commonjs', moduleResolution: 'node10' }, files: ['types-cjs.ts'] }));
      fs.writeFileSync(path.join(consumer, 'tsconfig.node16.json'), JSON.stringify({ compilerOptions: { ...base, module: 'node16', moduleResolution: 'node16' }, files: ['types-cjs.ts', 'types-esm.mts'] }));
      await Promise.all(['tsconfig.node10.json', 'tsconfig.node16.json'].map((c) => run(process.execPath, [tsc, '-p', c], consumer)));
    });

    await step('built the adapter template against the packed core and ran its npm test', async () => {
      const template = path.join(tmp, 'adapter-template');
      copyTree(path.join(ROOT, 'examples', 'adapter-template'), template, ['node_modules', 'dist', 'vendor']);
      fs.mkdirSync(path.join(template, 'vendor'));
      fs.copyFileSync(core.file, path.join(template, 'vendor', 'wcs-core.tgz'));
      const manifest = JSON.parse(fs.readFileSync(path.join(template, 'package.json'), 'utf8'));
      check(manifest.dependencies?.['@wcs/core'] === 'file:vendor/wcs-core.tgz', `examples/adapter-template/package.json: @wcs/core is ${manifest.dependencies?.['@wcs/core']}, not file:vendor/wcs-core.tgz`);
      const lockFile = path.join(template, 'package-lock.json');
      const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8'));
      check(lock.packages?.['node_modules/@wcs/core'] !== undefined, 'examples/adapter-template/package-lock.json has no @wcs/core entry');
      delete lock.packages['node_modules/@wcs/core'];
      fs.writeFileSync(lockFile, JSON.stringify(lock, null, 2));
      noEngineWarnings(await run(npm, ['install', '--no-audit', '--no-fund'], template), 'the adapter template');
      // the core just packed, installed as a package (not a link to core/)
      const installed = path.join(template, 'node_modules', '@wcs', 'core');
      check(!fs.lstatSync(installed).isSymbolicLink(), 'the template\'s @wcs/core is a link, not the installed tarball');
      const relocked = JSON.parse(fs.readFileSync(lockFile, 'utf8')).packages['node_modules/@wcs/core'];
      check(relocked?.integrity === core.integrity, `the template installed @wcs/core ${relocked?.integrity}, not the tarball just packed (${core.integrity})`);
      await run(npm, ['run', 'build'], template);
      const out = await run(npm, ['test'], template);
      const passing = /(\d+) passing/.exec(out);
      check(passing !== null && !/failing/.test(out), `the template's npm test:\n${out}`);
      check(/adapter conformance: /.test(out) && /chain conformance: /.test(out), `the template's npm test did not run both shared suites:\n${out}`);
      return `${passing[1]} passing, both shared suites among them`;
    });
    process.stdout.write(`pack-check: passed in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
  } catch (e) {
    process.stderr.write(`pack-check: FAILED: ${e instanceof StepError ? e.message : e && e.stack ? e.stack : e}\n`);
    process.exitCode = 1;
  } finally {
    if (KEEP) process.stdout.write(`pack-check: kept ${tmp}\n`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main();
