'use strict';
// The end-to-end suite runs its files in 3 parallel workers (each with its own embedded Postgres
// cluster: src/support/mocha-fixtures.ts). Workers take files in the order listed, so the longest
// files go first (longest-processing-time-first scheduling): a long file started last would run
// alone at the end while the other workers idle. The list is a hint from CI's timings; every other
// file follows in name order, and a name here that no longer exists is skipped.
const fs = require('node:fs');
const path = require('node:path');

const LONGEST_FIRST = [
  'collect-cli', 'reconcile-evm', 'restore-drill', 'recover-transfers', 'operator-cli', 'reconcile-memo', 'reconcile-sol',
  'callbacks-processes', 'cli-errors', 'collection-delegated', 'collection-first-token', 'reconcile-btc', 'console-withdrawals-browser',
  'withdrawals-evm', 'deposits-memo', 'recharge-credited', 'callback-cli', 'restore-drill-btc', 'deposits-sol-eos', 'secrets-rotation',
  'collection-delegated-faults', 'reconcile-sweep', 'collection-memo', 'sdk-readme',
];

function testFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(full));
    else if (entry.name.endsWith('.test.js')) out.push(full);
  }
  return out;
}

const dist = path.join(__dirname, 'dist');
const all = fs.existsSync(dist) ? testFiles(dist).map((f) => path.relative(__dirname, f)).sort() : [];
const first = LONGEST_FIRST.map((n) => path.join('dist', `${n}.test.js`)).filter((f) => all.includes(f));
const spec = [...first, ...all.filter((f) => !first.includes(f))];

module.exports = {
  spec: spec.length > 0 ? spec : ['dist/**/*.test.js'],
  require: ['@wcs/server/testing', 'dist/support/mocha-fixtures.js'],
  'enable-source-maps': true,
  timeout: 120000,
  exit: true,
  parallel: true,
  jobs: 3,
};
