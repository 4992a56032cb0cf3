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
    ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['100::', 64], ['2001:db8::', 32], ['2001::', 23],
  ] as const) {
    b.addSubnet(net6, prefix, 'ipv6');
  }
  return b;
})();

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedIpv4(ip: string): string | null {
  const lower = ip.toLowerCase();
  for (const prefix of ['::ffff:', '64:ff9b::']) {
    if (!lower.startsWith(prefix)) continue;
    const rest = lower.slice(prefix.length);
    if (net.isIPv4(rest)) return rest;
    const m = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest);
    if (m) {
      const hi = parseInt(m[1]!, 16);
      const lo = parseInt(m[2]!, 16);
      return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
    }
  }
  return null;
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
 * directly, a name by every address it resolves to now (delivery checks again at connect).
 * Resolves to null when allowed, else the reason.
 */
export async function forbiddenTargetReason(url: string): Promise<string | null> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) return isForbiddenAddress(host) ? `${host} is a loopback, private, link-local or metadata address` : null;
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true });
  } catch (e) {
    return `${host} does not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
  const bad = addresses.find((a) => isForbiddenAddress(a.address));
  return bad ? `${host} resolves to ${bad.address}, a loopback, private, link-local or metadata address` : null;
}
