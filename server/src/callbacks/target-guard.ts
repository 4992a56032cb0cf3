import * as dns from 'node:dns';
import * as net from 'node:net';
import { WcsError, type Environment } from '@wcs/core';

/**
 * Addresses a live application's callback may not reach (docs/callbacks.md, "Target safety"):
 * loopback, private, carrier-grade NAT (Alibaba's metadata 100.100.100.200 included), link-local
 * (cloud metadata at 169.254.169.254), IETF protocol assignments (192.0.0.0/24: Oracle's metadata
 * 192.0.0.192), documentation, benchmarking, multicast, reserved and unspecified ranges, and
 * Azure's platform address 168.63.129.16 (WireServer: only reachable from inside Azure).
 */
const FORBIDDEN_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['168.63.129.16', 32], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
/**
 * IPv6 ranges refused outright: IPv4-compatible (deprecated) and unspecified/loopback ::/96,
 * discard-only 100::/64, IETF protocol assignments 2001::/23 (Teredo 2001::/32 included: its
 * addresses embed a relay's and an obfuscated client's IPv4, and it is obsolete), documentation
 * 2001:db8::/32 and 3fff::/20, the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215: a local
 * translator, whatever the IPv4 inside), unique local fc00::/7 (AWS metadata fd00:ec2::254),
 * link-local fe80::/10, site-local fec0::/10 (deprecated) and multicast ff00::/8.
 */
const FORBIDDEN_V6: ReadonlyArray<readonly [string, number]> = [
  ['::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['3fff::', 20],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
];

const FORBIDDEN = (() => {
  const b = new net.BlockList();
  for (const [a, prefix] of FORBIDDEN_V4) b.addSubnet(a, prefix, 'ipv4');
  for (const [a, prefix] of FORBIDDEN_V6) b.addSubnet(a, prefix, 'ipv6');
  return b;
})();

/**
 * Host names refused by name, before any resolution (lower case, without trailing dots):
 * cloud metadata names (Google Cloud: metadata.google.internal, metadata.goog and the bare
 * `metadata` its resolvers answer; AWS EC2: instance-data and instance-data.ec2.internal;
 * Rancher: rancher-metadata), `localhost` and `*.localhost` (RFC 6761: always loopback) and
 * `*.internal` (reserved by ICANN in 2024 for private use).
 */
export const FORBIDDEN_NAMES: readonly string[] = [
  'localhost', 'metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal', 'rancher-metadata',
];
const FORBIDDEN_SUFFIXES: readonly string[] = ['.localhost', '.internal'];

/** The eight 16-bit groups of an IPv6 address in any textual form (compressed or not, dotted tail, zone). */
function ipv6Groups(ip: string): number[] | null {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const tail = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (tail) {
    if (!net.isIPv4(tail[1]!)) return null;
    const o = tail[1]!.split('.').map(Number);
    text = text.slice(0, -tail[1]!.length) + `${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const part = (h: string | undefined) => (h ? h.split(':').map((g) => parseInt(g, 16)) : []);
  const head = part(halves[0]);
  const rest = part(halves[1]);
  const groups = halves.length === 2 ? [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest] : head;
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 address carries to the IPv4 internet, whatever its textual form:
 * IPv4-mapped ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96 (RFC 2765) and NAT64 64:ff9b::/96
 * in the last 32 bits; 6to4 2002::/16 in bits 16..48.
 */
function embeddedIpv4(ip: string): string | null {
  const g = ipv6Groups(ip);
  if (!g) return null;
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return dotted(g[6]!, g[7]!); // mapped
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return dotted(g[6]!, g[7]!); // translated
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return dotted(g[6]!, g[7]!); // NAT64 well-known prefix
  if (g[0] === 0x2002) return dotted(g[1]!, g[2]!); // 6to4
  return null;
}

/** Whether a live application's callback may connect to this IP address (anything else than an address is refused). */
export function isForbiddenAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 0) return true;
  if (family === 4) return FORBIDDEN.check(ip, 'ipv4');
  if (FORBIDDEN.check(ip.replace(/%.*$/, ''), 'ipv6')) return true;
  const inner = embeddedIpv4(ip);
  return inner !== null && FORBIDDEN.check(inner, 'ipv4');
}

/** A host name (not an address) as the guard compares it: lower case, brackets and trailing dots removed. */
function canonicalHost(host: string): string {
  return host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.+$/, '');
}

/** The reason a host name is refused by name (loopback or metadata names), else null. */
export function forbiddenHostName(host: string): string | null {
  const h = canonicalHost(host);
  if (h === 'localhost' || h.endsWith('.localhost')) return `${host} is a loopback name`;
  if (FORBIDDEN_NAMES.includes(h) || FORBIDDEN_SUFFIXES.some((s) => h.endsWith(s))) return `${host} is a cloud metadata or private-use name`;
  return null;
}

const addressReason = (ip: string) => `${ip} is a loopback, private, link-local or metadata address`;
const resolvedReason = (host: string, ip: string) => `${host} resolves to ${ip}, a loopback, private, link-local or metadata address`;

export class ForbiddenTargetError extends Error {
  readonly code = 'ETARGETFORBIDDEN';
  constructor(reason: string) {
    super(reason);
    this.name = 'ForbiddenTargetError';
  }
}

type LookupCallback = (e: NodeJS.ErrnoException | null, a: string | dns.LookupAddress[], f?: number) => void;

/**
 * A dns.lookup replacement for http(s).request: refuses forbidden names, resolves every
 * address of the host and refuses the connection when any of them is forbidden, so the address
 * checked is the address connected to (no window for DNS rebinding between check and connect).
 */
export const guardedLookup: net.LookupFunction = (hostname, options, callback) => {
  const cb = callback as unknown as LookupCallback;
  const byName = forbiddenHostName(hostname);
  if (byName) return cb(new ForbiddenTargetError(byName) as NodeJS.ErrnoException, '', 0);
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return cb(err, '', 0);
    const list = addresses as dns.LookupAddress[];
    const bad = list.find((a) => isForbiddenAddress(a.address));
    if (bad || list.length === 0) {
      const e = bad ? new ForbiddenTargetError(resolvedReason(hostname, bad.address)) : Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
      return cb(e as NodeJS.ErrnoException, '', 0);
    }
    if ((options as dns.LookupOptions).all) return cb(null, list);
    return cb(null, list[0]!.address, list[0]!.family);
  });
};

/** Resolves a host name to its addresses (dns.lookup, as delivery connects). */
export type HostLookup = (host: string) => Promise<ReadonlyArray<{ address: string }>>;

export interface TargetCheckOptions {
  /** Bound on a name's resolution; a name not resolved in time is treated as not resolving yet. Default TARGET_LOOKUP_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /** The resolver (tests; a per-request cache). Default dns.promises.lookup with all addresses. */
  readonly lookup?: HostLookup;
}

/** Default bound on a callback host's resolution when a URL is configured or an order accepted. */
export const TARGET_LOOKUP_TIMEOUT_MS = 2000;

const systemLookup: HostLookup = (host) => dns.promises.lookup(host, { all: true });

/** A HostLookup that resolves each host once (for a batch whose items share a callback host). */
export function cachedLookup(base: HostLookup = systemLookup): HostLookup {
  const seen = new Map<string, Promise<ReadonlyArray<{ address: string }>>>();
  return (host) => {
    let p = seen.get(host);
    if (!p) {
      p = base(host);
      seen.set(host, p);
    }
    return p;
  };
}

/** The addresses of a name, or null when it does not resolve (in time). */
async function resolveBounded(host: string, options: TargetCheckOptions): Promise<ReadonlyArray<{ address: string }> | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), options.timeoutMs ?? TARGET_LOOKUP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([(options.lookup ?? systemLookup)(host).catch(() => null), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Configuration-time check of a callback URL's host: an IP literal (the URL parser has already
 * turned short, decimal, octal and hex IPv4 forms into dotted ones) is judged directly, a
 * forbidden name by name, another name by every address it resolves to now. A name that does not
 * resolve, or not within the timeout, is accepted: a merchant's DNS may go live later, and every
 * delivery checks the addresses it connects to (guardedLookup). Resolves to null when allowed,
 * else the reason.
 */
export async function forbiddenTargetReason(url: string, options: TargetCheckOptions = {}): Promise<string | null> {
  const hostname = new URL(url).hostname;
  const host = hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) return isForbiddenAddress(host) ? addressReason(host) : null;
  const byName = forbiddenHostName(host);
  if (byName) return byName;
  const addresses = await resolveBounded(host, options);
  if (addresses === null) return null;
  const bad = addresses.find((a) => isForbiddenAddress(a.address));
  return bad ? resolvedReason(host, bad.address) : null;
}

/**
 * The callback target guard, one rule for every place a merchant gives a callback URL (`wcs app
 * set-callback`, a withdrawal item's callbackUrl): a live application's URL must not reach a
 * loopback, private, link-local or metadata target unless the deployment allows private targets
 * (WCS_CALLBACK_ALLOW_PRIVATE=1); test applications are not restricted. `url` has passed the
 * syntax check (validateCallbackUrl). Throws CALLBACK_URL_FORBIDDEN.
 */
export async function guardCallbackTarget(url: string, environment: Environment, allowPrivateTargets: boolean, options: TargetCheckOptions = {}): Promise<void> {
  if (environment !== 'live' || allowPrivateTargets) return;
  const why = await forbiddenTargetReason(url, options);
  if (why) {
    throw new WcsError('CALLBACK_URL_FORBIDDEN', {
      message: `Callback URL refused for a live application: ${why} (on-premise deployments: WCS_CALLBACK_ALLOW_PRIVATE=1)`,
    });
  }
}
