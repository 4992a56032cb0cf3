// Every relative link in README.md and docs/ resolves inside the repository: the file or folder
// exists, and a #fragment names a heading of the target Markdown file (GitHub's anchor rules).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../..');

/** GitHub's heading anchor: lower case, punctuation other than - and _ dropped, spaces to -. */
export function githubAnchor(heading: string): string {
  return heading
    .trim()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings (outside code fences), with GitHub's -1, -2 suffixes for repeats. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = githubAnchor(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** [text](target) links outside code fences and inline code, with their line numbers. */
export function linksOf(markdown: string): Array<{ target: string; line: number }> {
  const out: Array<{ target: string; line: number }> = [];
  let fence = false;
  markdown.split('\n').forEach((text, i) => {
    if (/^\s*(```|~~~)/.test(text)) fence = !fence;
    if (fence) return;
    // inline code is not a link (a link's text may hold code: [`x`](x.md) stays a link)
    const noCode = text.replace(/`[^`]*`/g, '');
    for (const m of noCode.matchAll(/\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1]!, line: i + 1 });
  });
  return out;
}

function markdownFiles(): string[] {
  const docs = path.join(ROOT, 'docs');
  return [path.join(ROOT, 'README.md'), ...fs.readdirSync(docs).filter((f) => f.endsWith('.md')).map((f) => path.join(docs, f))];
}

describe('relative links in README.md and docs/', function () {
  it('the anchor and link readers follow GitHub (unit)', function () {
    expect(githubAnchor('Rate limits')).to.equal('rate-limits');
    expect(githubAnchor('GET /api/v1/wallet/recharge/get?id=')).to.equal('get-apiv1walletrechargegetid');
    expect(githubAnchor('`wcs start` and `--json`')).to.equal('wcs-start-and---json');
    expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n### B c\n')]).to.deep.equal(['a', 'a-1', 'b-c']);
    expect(linksOf('see [x](docs/a.md#b) and `[y](z.md)`\n```\n[q](nope.md)\n```\n[`code`](r.md "title")').map((l) => l.target)).to.deep.equal(['docs/a.md#b', 'r.md']);
  });

  for (const file of markdownFiles()) {
    const rel = path.relative(ROOT, file);
    it(`${rel}: every relative link resolves inside the repository`, function () {
      const text = fs.readFileSync(file, 'utf8');
      const broken: string[] = [];
      let checked = 0;
      for (const { target, line } of linksOf(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        checked++;
        const [p, fragment] = target.split('#', 2) as [string, string | undefined];
        const dest = p === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(p));
        if (!dest.startsWith(ROOT + path.sep) && dest !== ROOT) {
          broken.push(`${rel}:${line}: ${target} points outside the repository`);
          continue;
        }
        if (!fs.existsSync(dest)) {
          broken.push(`${rel}:${line}: ${target}: ${path.relative(ROOT, dest)} does not exist`);
          continue;
        }
        if (fragment !== undefined && dest.endsWith('.md') && !anchorsOf(fs.readFileSync(dest, 'utf8')).has(fragment)) {
          broken.push(`${rel}:${line}: ${target}: no heading #${fragment} in ${path.relative(ROOT, dest)}`);
        }
      }
      expect(broken, broken.join('\n')).to.deep.equal([]);
      if (rel === 'README.md') expect(checked, 'README.md links to the docs').to.be.above(5);
    });
  }
});
