import * as dns from 'node:dns';
import * as net from 'node:net';

/**
 * Addresses a live application's callback may not reach: loopback, private, carrier-grade
 * NAT, link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 included), unique
 * local, multicast, reserved and unspecified ranges; IPv4-mapped and NAT64 IPv6 forms are
 * judged by the IPv4 address inside.
 */
const FORBIDDEN = (() => {
  const b = new net.BlockList();
  for (const [net4, prefix] of [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
    ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
    ['224.0.0.0', 4], ['240.0.0.0', 4],
  ] as const) {
    b.addSubnet(net4, prefix, 'ipv4');
  }
  for (const [net6, prefix] of [
    ['::', 96], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['100::', 64], ['2001:db8::', 32], ['2001::', 23],
  ] as const) {
    b.addSubnet(net6, prefix, 'ipv6');
  }
  return b;
})();

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

/** The IPv4 address inside an IPv4-mapped (::ffff:0:0/96) or NAT64 (64:ff9b::/96) IPv6 address, whatever its textual form. */
function embeddedIpv4(ip: string): string | null {
  const g = ipv6Groups(ip);
  if (!g) return null;
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  // IPv4-translated (RFC 2765): ::ffff:0:a.b.c.d
  const translated = g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0;
  if (!mapped && !nat64 && !translated) return null;
  return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
}

/** Whether a live application's callback may connect to this IP address. */
export function isForbiddenAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 0) return true; // not an address at all: refuse
  if (family === 4) return FORBIDDEN.check(ip, 'ipv4');
  const inner = embeddedIpv4(ip);
  if (inner) return FORBIDDEN.check(inner, 'ipv4');
  return FORBIDDEN.check(ip, 'ipv6');
}

export class ForbiddenTargetError extends Error {
  readonly code = 'ETARGETFORBIDDEN';
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, a loopback, private, link-local or metadata address`);
    this.name = 'ForbiddenTargetError';
  }
}

/**
 * A dns.lookup replacement for http(s).request: resolves every address of the host and
 * refuses the connection when any of them is forbidden, so the address checked is the
 * address connected to (no window for DNS rebinding between check and connect).
 */
export const guardedLookup: net.LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return (callback as (e: NodeJS.ErrnoException | null, a: string, f?: number) => void)(err, '', 0);
    const list = addresses as dns.LookupAddress[];
    const bad = list.find((a) => isForbiddenAddress(a.address));
    if (bad || list.length === 0) {
      const e = bad ? new ForbiddenTargetError(hostname, bad.address) : Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
      return (callback as (e: NodeJS.ErrnoException | null, a: string, f?: number) => void)(e as NodeJS.ErrnoException, '', 0);
    }
    if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    return (callback as (e: null, a: string, f: number) => void)(null, list[0]!.address, list[0]!.family);
  });
};

/**
 * Configuration-time check of a live application's callback host: an IP literal is judged
 * directly, a name by every address it resolves to now; a name that does not resolve yet is
 * accepted (delivery checks again at connect, whatever it resolves to then).
 * Resolves to null when allowed, else the reason.
 */
export async function forbiddenTargetReason(url: string): Promise<string | null> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) return isForbiddenAddress(host) ? `${host} is a loopback, private, link-local or metadata address` : null;
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true });
  } catch {
    // Not resolvable yet (a merchant's DNS may go live later): accepted here; every delivery
    // checks the addresses it connects to (guardedLookup), so nothing goes through unchecked.
    return null;
  }
  const bad = addresses.find((a) => isForbiddenAddress(a.address));
  return bad ? `${host} resolves to ${bad.address}, a loopback, private, link-local or metadata address` : null;
}
