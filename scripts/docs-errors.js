#!/usr/bin/env node
// Regenerates the error table in docs/errors.md from core's catalogue.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spliceErrorTable } = require('@wcs/core');
const file = path.join(__dirname, '..', 'docs', 'errors.md');
fs.writeFileSync(file, spliceErrorTable(fs.readFileSync(file, 'utf8')));
process.stdout.write(`updated ${path.relative(process.cwd(), file)}\n`);
