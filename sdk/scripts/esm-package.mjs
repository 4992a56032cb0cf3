// Marks dist/esm as ES modules (the package itself is CommonJS by default): dist/esm/package.json {"type":"module"}.
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'esm');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', sideEffects: false }, null, 2) + '\n');
