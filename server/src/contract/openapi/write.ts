/**
 * Writes server/openapi.json from the contract (`npm run openapi -w @wcs/server`, after the build);
 * `--check` exits 1, naming the first difference, when the committed file is not what the
 * contract builds.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openApiDocument } from './index';

export const OPENAPI_PATH = path.resolve(__dirname, '../../../openapi.json');

/** The document as the committed file holds it: two-space JSON and a final newline. */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}

if (require.main === module) {
  const text = openApiText();
  if (process.argv.includes('--check')) {
    const committed = fs.existsSync(OPENAPI_PATH) ? fs.readFileSync(OPENAPI_PATH, 'utf8') : '';
    if (committed !== text) {
      const a = committed.split('\n');
      const b = text.split('\n');
      let i = 0;
      while (i < a.length && a[i] === b[i]) i++;
      process.stderr.write(`server/openapi.json is not what the contract builds (line ${i + 1}: ${JSON.stringify(a[i] ?? '')} against ${JSON.stringify(b[i] ?? '')}): run npm run openapi -w @wcs/server\n`);
      process.exit(1);
    }
  } else {
    fs.writeFileSync(OPENAPI_PATH, text);
  }
}
