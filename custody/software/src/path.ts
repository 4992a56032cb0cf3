import { KeyStoreError } from './errors';

/** BIP-32 / SLIP-10 hardened offset (2^31). */
export const HARDENED = 0x80000000;

type Segment =
  | { readonly kind: 'fixed'; readonly value: number }
  | { readonly kind: 'account' }
  | { readonly kind: 'index'; readonly hardened: boolean };

/** A validated path template: "m/44'/60'/{account}'/0/{index}". */
export interface PathTemplate {
  readonly text: string;
  readonly segments: readonly Segment[];
  /** Every level is hardened (required for ed25519 / SLIP-10). */
  readonly allHardened: boolean;
}

const SEGMENT = /^(?:(0|[1-9]\d{0,9})|\{(account|index)\})(['hH]?)$/;
const templates = new Map<string, PathTemplate>();
const MAX_TEMPLATES = 1024;

function invalid(template: string, why: string): KeyStoreError {
  return new KeyStoreError('KEY_REF_INVALID', `invalid path template ${JSON.stringify(template)}: ${why}`);
}

/**
 * Parses and validates a KeySpec path template. Requires exactly one hardened {account}
 * level (so applications never share keys) and exactly one {index} level.
 */
export function parseTemplate(template: string): PathTemplate {
  const cached = templates.get(template);
  if (cached) return cached;
  if (typeof template !== 'string' || template.length > 256) throw invalid(String(template), 'not a string of at most 256 characters');
  const parts = template.split('/');
  if (parts[0] !== 'm' || parts.length < 2) throw invalid(template, 'must start with "m/"');
  const segments: Segment[] = [];
  let accounts = 0;
  let indexes = 0;
  let allHardened = true;
  for (const part of parts.slice(1)) {
    const m = SEGMENT.exec(part);
    if (!m) throw invalid(template, `bad level ${JSON.stringify(part)}`);
    const hardened = m[3] !== '';
    if (!hardened) allHardened = false;
    if (m[2] === 'account') {
      if (!hardened) throw invalid(template, '{account} must be hardened ({account}\')');
      accounts++;
      segments.push({ kind: 'account' });
    } else if (m[2] === 'index') {
      indexes++;
      segments.push({ kind: 'index', hardened });
    } else {
      const n = Number(m[1]);
      if (n >= HARDENED) throw invalid(template, `level ${n} is not below 2^31`);
      segments.push({ kind: 'fixed', value: hardened ? n + HARDENED : n });
    }
  }
  if (accounts !== 1) throw invalid(template, 'needs exactly one {account}\' level');
  if (indexes !== 1) throw invalid(template, 'needs exactly one {index} level');
  if (segments.length > 255) throw invalid(template, 'too deep');
  const parsed: PathTemplate = Object.freeze({ text: template, segments: Object.freeze(segments), allHardened });
  if (templates.size >= MAX_TEMPLATES) templates.clear();
  templates.set(template, parsed);
  return parsed;
}

/** Child indices (hardened ones with the 2^31 offset) for an application's account and a key index. */
export function resolvePath(t: PathTemplate, account: number, index: number): number[] {
  return t.segments.map((s) => {
    switch (s.kind) {
      case 'fixed':
        return s.value;
      case 'account':
        return account + HARDENED;
      case 'index':
        return s.hardened ? index + HARDENED : index;
    }
  });
}

/** "m/44'/60'/1'/0/5" for child indices. */
export function formatPath(indices: readonly number[]): string {
  let s = 'm';
  for (const i of indices) s += i >= HARDENED ? `/${i - HARDENED}'` : `/${i}`;
  return s;
}

/** Parses a concrete path ("m/0'/1/2h") into child indices; used by tests and tools. */
export function parsePath(path: string): number[] {
  const parts = path.split('/');
  if (parts[0] !== 'm') throw new KeyStoreError('KEY_REF_INVALID', `invalid path ${JSON.stringify(path)}`);
  return parts.slice(1).map((p) => {
    const m = /^(0|[1-9]\d{0,9})(['hH]?)$/.exec(p);
    const n = m ? Number(m[1]) : NaN;
    if (!m || n >= HARDENED) throw new KeyStoreError('KEY_REF_INVALID', `invalid path ${JSON.stringify(path)}`);
    return m[2] ? n + HARDENED : n;
  });
}
