import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spliceErrorTable } from './errors-doc';

describe('docs/errors.md', () => {
  it('lists exactly the error catalogue (run `npm run docs:errors` after changing it)', () => {
    const file = path.resolve(__dirname, '../../docs/errors.md');
    const doc = fs.readFileSync(file, 'utf8');
    expect(doc).to.equal(spliceErrorTable(doc));
  });
});
