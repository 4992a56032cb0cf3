#!/usr/bin/env node
'use strict';
require('../dist/cli/main.js').main(process.argv).then(
  (code) => { process.exitCode = code; },
  (err) => { process.stderr.write(`wcs: ${err && err.message ? err.message : err}\n`); process.exitCode = 1; },
);
