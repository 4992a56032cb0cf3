import { expect } from 'chai';
import type * as dns from 'node:dns';
import { WcsError } from '@wcs/core';
import { cachedLookup, forbiddenHostName, forbiddenTargetReason, guardCallbackTarget, guardedLookup, isForbiddenAddress, type HostLookup } from './target-guard';

/** Merchant-facing code, as a literal (a renumbering must break the test). */
const CALLBACK_URL_FORBIDDEN = 1002001004;

/** A resolver answering from a table (unknown names: ENOTFOUND), counting its calls. */
function fakeLookup(table: Record<string, string[]>): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const f = async (host: string) => {
    calls.push(host);
    const list = table[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address }));
  };
  return Object.assign(f, { calls });
}

/** guardedLookup through its callback, as http.request / net.connect would call it. */
function lookup(host: string, options: dns.LookupOptions): Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }> {
  return new Promise((resolve) => {
    (guardedLookup as unknown as (h: string, o: dns.LookupOptions, cb: (e: NodeJS.ErrnoException | null, a: unknown, f?: number) => void) => void)(
      host,
      options,
      (err, address, family) => resolve({ err, address, family }),
    );
  });
}

describe('callbacks: target guard (live applications may not reach internal addresses)', () => {
  describe('isForbiddenAddress', () => {
    const table: Array<[string, boolean, string]> = [
      // IPv4-compatible (deprecated, ::/96) and IPv4-translated (::ffff:0:a.b.c.d) forms
      ['::127.0.0.1', true, 'IPv4-compatible, deprecated: the whole ::/96 is refused'],
      ['::8.8.8.8', true, 'IPv4-compatible, deprecated: the whole ::/96 is refused'],
      ['::ffff:0:127.0.0.1', true, 'IPv4-translated loopback'],
      ['::ffff:0:808:808', false, 'IPv4-translated public address'],
      // IPv4
      ['127.0.0.1', true, 'loopback'],
      ['127.255.255.254', true, 'loopback /8'],
      ['10.1.2.3', true, 'private 10/8'],
      ['172.16.0.1', true, 'private 172.16/12 (first)'],
      ['172.31.255.255', true, 'private 172.16/12 (last)'],
      ['172.32.0.1', false, 'just outside 172.16/12: public'],
      ['172.15.255.255', false, 'just below 172.16/12: public'],
      ['192.168.1.1', true, 'private 192.168/16'],
      ['100.64.0.1', true, 'carrier-grade NAT 100.64/10'],
      ['100.128.0.1', false, 'just outside 100.64/10: public'],
      ['169.254.169.254', true, 'link-local: cloud metadata'],
      ['169.254.0.1', true, 'link-local'],
      ['0.0.0.0', true, 'unspecified'],
      ['0.1.2.3', true, '"this network" 0/8'],
      ['224.0.0.1', true, 'multicast'],
      ['239.255.255.250', true, 'multicast'],
      ['240.0.0.1', true, 'reserved 240/4'],
      ['255.255.255.255', true, 'broadcast'],
      ['192.0.2.10', true, 'documentation TEST-NET-1'],
      ['198.18.0.1', true, 'benchmarking 198.18/15'],
      ['8.8.8.8', false, 'public'],
      ['1.1.1.1', false, 'public'],
      ['93.184.216.34', false, 'public'],
      // IPv6
      ['::1', true, 'loopback'],
      ['::', true, 'unspecified'],
      ['fe80::1', true, 'link-local'],
      ['fe80::1%eth0', true, 'link-local with a zone'],
      ['fc00::1', true, 'unique local'],
      ['fd12:3456::1', true, 'unique local'],
      ['fd00:ec2::254', true, 'AWS metadata (IPv6, unique local)'],
      ['ff02::1', true, 'multicast'],
      ['2001:db8::1', true, 'documentation'],
      ['2606:4700:4700::1111', false, 'public'],
      ['2001:4860:4860::8888', false, 'public'],
      // IPv4 inside IPv6: judged by the IPv4 address
      ['::ffff:127.0.0.1', true, 'IPv4-mapped loopback, dotted'],
      ['::ffff:7f00:1', true, 'IPv4-mapped loopback, hex'],
      ['::FFFF:7F00:1', true, 'IPv4-mapped loopback, upper case'],
      ['0:0:0:0:0:ffff:7f00:1', true, 'IPv4-mapped loopback, uncompressed'],
      ['::ffff:a9fe:a9fe', true, 'IPv4-mapped 169.254.169.254'],
      ['::ffff:8.8.8.8', false, 'IPv4-mapped public'],
      ['::ffff:808:808', false, 'IPv4-mapped public, hex'],
      ['64:ff9b::a00:1', true, 'NAT64 of 10.0.0.1'],
      ['64:ff9b::10.0.0.1', true, 'NAT64 of 10.0.0.1, dotted'],
      ['64:ff9b::7f00:1', true, 'NAT64 of 127.0.0.1'],
      ['64:ff9b:0:0:0:0:a00:1', true, 'NAT64 of 10.0.0.1, uncompressed'],
      ['0064:ff9b:0000:0000:0000:0000:0a00:0001', true, 'NAT64 of 10.0.0.1, fully written out'],
      ['64:ff9b::1', true, 'NAT64 of 0.0.0.1 (compressed so only one group is left)'],
      ['64:ff9b::', true, 'NAT64 of 0.0.0.0'],
      ['64:ff9b::808:808', false, 'NAT64 of public 8.8.8.8'],
      ['64:ff9b:1::a00:1', true, 'local-use NAT64 64:ff9b:1::/48 (RFC 8215): refused whatever the IPv4 inside'],
      ['64:ff9b:1:ffff::808:808', true, 'local-use NAT64, public IPv4 inside: still refused'],
      ['64:ff9b:1:0:0:0:7f00:1', true, 'local-use NAT64, uncompressed'],
      ['::ffff:0:7f00:1', true, 'IPv4-translated loopback, hex'],
      // 6to4 (2002::/16): judged by the IPv4 address in bits 16..48
      ['2002:7f00:0001::', true, '6to4 of 127.0.0.1'],
      ['2002:7f00:1::1', true, '6to4 of 127.0.0.1, with an interface id'],
      ['2002:a00:1::', true, '6to4 of 10.0.0.1'],
      ['2002:a9fe:a9fe::1', true, '6to4 of 169.254.169.254'],
      ['2002:c0a8:101:0:0:0:0:1', true, '6to4 of 192.168.1.1, uncompressed'],
      ['2002:0:0::', true, '6to4 of 0.0.0.0'],
      ['2002:5db8:d70e::', false, '6to4 of public 93.184.215.14'],
      ['2002:808:808::1', false, '6to4 of public 8.8.8.8'],
      // other IPv6 ranges
      ['fec0::1', true, 'site-local (deprecated) fec0::/10'],
      ['feff:ffff::1', true, 'site-local, last block'],
      ['febf::1', true, 'link-local fe80::/10, last block'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', true, 'Teredo 2001::/32 (RFC 4380 example): refused outright'],
      ['2001::1', true, 'Teredo prefix'],
      ['3fff::1', true, 'documentation 3fff::/20'],
      ['100::1', true, 'discard-only 100::/64'],
      ['fd00:ec2::254', true, 'AWS metadata over IPv6'],
      ['2606:2800:21f:cb07:6820:80da:af6b:1627', false, 'public'],
      // metadata addresses outside the private ranges' usual suspects
      ['100.100.100.200', true, 'Alibaba Cloud metadata (carrier-grade NAT range)'],
      ['192.0.0.192', true, 'Oracle Cloud metadata (192.0.0.0/24)'],
      ['168.63.129.16', true, 'Azure platform address (WireServer)'],
      ['168.63.129.17', false, 'next to the Azure platform address: public'],
      ['93.184.215.14', false, 'public'],
      // not an address at all: refused
      ['not-an-ip', true, 'not an IP'],
      ['', true, 'empty'],
      ['localhost', true, 'a name, not an address'],
      ['127.1', true, 'shorthand IPv4 is not an address here'],
    ];
    for (const [ip, forbidden, why] of table) {
      it(`${JSON.stringify(ip)} -> ${forbidden ? 'forbidden' : 'allowed'} (${why})`, () => {
        expect(isForbiddenAddress(ip), ip).to.equal(forbidden);
      });
    }
  });

  describe('forbiddenTargetReason (configuration time)', () => {
    const refused: Array<[string, RegExp]> = [
      ['https://127.0.0.1/cb', /127\.0\.0\.1 is a loopback, private, link-local or metadata address/],
      ['https://127.0.0.1:8443/cb?x=1', /127\.0\.0\.1/],
      ['https://10.0.0.5/cb', /10\.0\.0\.5/],
      ['https://169.254.169.254/latest/meta-data/', /169\.254\.169\.254/],
      ['https://[::1]/cb', /::1 is a loopback/],
      ['https://[fd00:ec2::254]/cb', /fd00:ec2::254/],
      ['https://[::ffff:127.0.0.1]/cb', /::ffff:7f00:1/], // the URL parser writes it in hex
      ['https://2130706433/cb', /127\.0\.0\.1/], // decimal IPv4: the URL parser makes it 127.0.0.1
      ['https://0x7f.1/cb', /127\.0\.0\.1/],
      ['https://localhost/cb', /localhost is a loopback name/],
      ['https://LOCALHOST:9000/cb', /localhost is a loopback name/],
      ['https://api.localhost/cb', /api\.localhost is a loopback name/],
      // IPv4 short, decimal, octal and hex forms (the WHATWG URL parser writes them dotted)
      ['https://127.1/cb', /^127\.0\.0\.1 is a loopback/],
      ['https://0x7f000001/cb', /^127\.0\.0\.1 is a loopback/],
      ['https://0177.0.0.1/cb', /^127\.0\.0\.1 is a loopback/],
      ['https://017700000001/cb', /^127\.0\.0\.1 is a loopback/],
      ['https://0x7f.0.0.1/cb', /^127\.0\.0\.1 is a loopback/],
      ['https://127.0.0.1./cb', /^127\.0\.0\.1 is a loopback/],
      ['https://10.1/cb', /^10\.0\.0\.1 is a loopback/],
      ['https://2852039166/latest/meta-data/', /^169\.254\.169\.254 is a loopback/],
      ['https://0xa9fea9fe/latest/meta-data/', /^169\.254\.169\.254 is a loopback/],
      // IPv4 inside IPv6
      ['https://[::127.0.0.1]/cb', /^::7f00:1 is a loopback/],
      ['https://[::ffff:7f00:1]/cb', /^::ffff:7f00:1 is a loopback/],
      ['https://[::ffff:0:127.0.0.1]/cb', /^::ffff:0:7f00:1 is a loopback/],
      ['https://[2002:7f00:0001::]/cb', /^2002:7f00:1:: is a loopback/],
      ['https://[64:ff9b::127.0.0.1]/cb', /^64:ff9b::7f00:1 is a loopback/],
      ['https://[64:ff9b:1::a00:1]/cb', /^64:ff9b:1::a00:1 is a loopback/],
      // IPv6 ranges
      ['https://[fc00::1]/cb', /^fc00::1 is a loopback/],
      ['https://[fe80::1]/cb', /^fe80::1 is a loopback/],
      ['https://[fec0::1]/cb', /^fec0::1 is a loopback/],
      ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/cb', /^2001:0:4136:e378:8000:63bf:3fff:fdd2 is a loopback/],
      // names, trailing dots included
      ['https://localhost./cb', /^localhost\. is a loopback name/],
      ['https://LocalHost../cb', /^localhost\.\. is a loopback name/],
      ['https://api.localhost./cb', /^api\.localhost\. is a loopback name/],
      ['https://metadata.google.internal/computeMetadata/v1/', /^metadata\.google\.internal is a cloud metadata or private-use name/],
      ['https://metadata.google.internal./computeMetadata/v1/', /^metadata\.google\.internal\. is a cloud metadata/],
      ['https://metadata.goog/computeMetadata/v1/', /^metadata\.goog is a cloud metadata/],
      ['https://metadata/computeMetadata/v1/', /^metadata is a cloud metadata/],
      ['https://instance-data/latest/meta-data/', /^instance-data is a cloud metadata/],
      ['https://instance-data.ec2.internal/latest/meta-data/', /^instance-data\.ec2\.internal is a cloud metadata/],
      ['https://rancher-metadata/latest', /^rancher-metadata is a cloud metadata/],
      ['https://billing.corp.internal/cb', /^billing\.corp\.internal is a cloud metadata or private-use name/],
    ];
    for (const [url, reason] of refused) {
      it(`refuses ${url}`, async () => {
        const why = await forbiddenTargetReason(url);
        expect(why, url).to.be.a('string');
        expect(why).to.match(reason);
      });
    }

    for (const url of [
      'https://8.8.8.8/cb', 'https://1.1.1.1:8443/hook?x=1', 'https://[2606:4700:4700::1111]/cb', 'https://172.32.0.1/cb', 'https://93.184.215.14/cb',
      'https://[2606:2800:21f:cb07:6820:80da:af6b:1627]/cb', 'https://[2002:5db8:d70e::]/cb', 'https://[64:ff9b::5db8:d70e]/cb',
    ]) {
      it(`allows ${url}`, async () => {
        expect(await forbiddenTargetReason(url), url).to.equal(null);
      });
    }

    it('a name that does not resolve yet is accepted at configuration (delivery checks it at connect time)', async () => {
      expect(await forbiddenTargetReason('https://no-such-host.invalid/cb')).to.equal(null);
      // ...and at connect time the same name fails the lookup instead of connecting anywhere
      const r = await lookup('no-such-host.invalid', {});
      expect(r.err).to.not.equal(null);
    });
  });

  describe('forbiddenTargetReason: names resolved at configuration time', () => {
    it('judges every address a name resolves to, embedded IPv4 included', async () => {
      const lookup = fakeLookup({
        'rebind.example': ['::ffff:a9fe:a9fe'],
        'mixed.example': ['93.184.215.14', '2002:a00:1::'],
        'nat.example': ['64:ff9b:1::5db8:d70e'],
        'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:1627', '2002:5db8:d70e::'],
      });
      expect(await forbiddenTargetReason('https://rebind.example/cb', { lookup }))
        .to.equal('rebind.example resolves to ::ffff:a9fe:a9fe, a loopback, private, link-local or metadata address');
      expect(await forbiddenTargetReason('https://mixed.example/cb', { lookup })).to.match(/^mixed\.example resolves to 2002:a00:1::, /);
      expect(await forbiddenTargetReason('https://nat.example/cb', { lookup })).to.match(/^nat\.example resolves to 64:ff9b:1::5db8:d70e, /);
      expect(await forbiddenTargetReason('https://public.example/cb', { lookup })).to.equal(null);
      expect(lookup.calls).to.deep.equal(['rebind.example', 'mixed.example', 'nat.example', 'public.example']);
    });

    it('forbidden names and IP literals are judged without resolving anything', async () => {
      const lookup = fakeLookup({});
      for (const url of ['https://localhost./cb', 'https://metadata.google.internal./x', 'https://127.1/cb', 'https://[2002:7f00:1::]/cb', 'https://93.184.215.14/cb']) {
        await forbiddenTargetReason(url, { lookup });
      }
      expect(lookup.calls).to.deep.equal([]);
    });

    it('a resolution that does not answer in time is bounded: accepted as "does not resolve yet" after the timeout', async () => {
      const never: HostLookup = () => new Promise(() => undefined);
      const started = Date.now();
      expect(await forbiddenTargetReason('https://slow.example/cb', { lookup: never, timeoutMs: 100 })).to.equal(null);
      const took = Date.now() - started;
      expect(took).to.be.at.least(90);
      expect(took).to.be.below(1000);
    });

    it('a name that does not resolve is accepted (delivery checks it at connect time)', async () => {
      expect(await forbiddenTargetReason('https://gone.example/cb', { lookup: fakeLookup({}) })).to.equal(null);
    });
  });

  describe('forbiddenHostName', () => {
    it('refuses loopback and metadata names with any case and trailing dots, and nothing else', () => {
      for (const h of ['localhost', 'localhost.', 'LOCALHOST..', 'a.b.localhost', 'metadata', 'metadata.', 'Metadata.Google.Internal.', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal.', 'rancher-metadata', 'x.internal']) {
        expect(forbiddenHostName(h), h).to.be.a('string');
      }
      for (const h of ['example.com', 'localhost.example.com', 'metadata.example.com', 'mylocalhost', 'internal.example', 'notinternal', 'metadata.googl']) {
        expect(forbiddenHostName(h), h).to.equal(null);
      }
    });
  });

  describe('guardCallbackTarget (the one guard of set-callback and withdrawal items)', () => {
    it('a live application\'s forbidden target is CALLBACK_URL_FORBIDDEN naming the reason and the on-premise switch', async () => {
      for (const url of ['https://127.1/cb', 'https://[2002:7f00:1::]/cb', 'https://metadata.google.internal./x', 'https://rebind.example/cb']) {
        const err = await guardCallbackTarget(url, 'live', false, { lookup: fakeLookup({ 'rebind.example': ['10.0.0.1'] }) }).then(() => null, (e: unknown) => e);
        expect(err, url).to.be.instanceOf(WcsError);
        expect((err as WcsError).code, url).to.equal(CALLBACK_URL_FORBIDDEN);
        expect((err as WcsError).message, url).to.match(/^Callback URL refused for a live application: .+ \(on-premise deployments: WCS_CALLBACK_ALLOW_PRIVATE=1\)$/);
      }
    });

    it('test applications and WCS_CALLBACK_ALLOW_PRIVATE are not restricted, and resolve nothing', async () => {
      const lookup = fakeLookup({ 'rebind.example': ['10.0.0.1'] });
      for (const url of ['https://127.0.0.1/cb', 'https://metadata.google.internal/x', 'https://rebind.example/cb']) {
        await guardCallbackTarget(url, 'test', false, { lookup });
        await guardCallbackTarget(url, 'live', true, { lookup });
      }
      expect(lookup.calls).to.deep.equal([]);
    });

    it('a public target passes', async () => {
      await guardCallbackTarget('https://public.example/cb', 'live', false, { lookup: fakeLookup({ 'public.example': ['93.184.215.14'] }) });
      await guardCallbackTarget('https://[2002:5db8:d70e::]/cb', 'live', false);
    });

    it('cachedLookup resolves each host once', async () => {
      const base = fakeLookup({ 'a.example': ['93.184.215.14'] });
      const lookup = cachedLookup(base);
      await Promise.all(['a.example', 'a.example', 'b.example', 'a.example'].map((h) => lookup(h).catch(() => null)));
      expect(base.calls).to.deep.equal(['a.example', 'b.example']);
    });
  });

  describe('guardedLookup (connect time)', () => {
    it('refuses loopback and metadata names by name, trailing dots included, before resolving', async () => {
      for (const host of ['localhost.', 'api.localhost', 'metadata.google.internal', 'metadata.google.internal.', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']) {
        const r = await lookup(host, {});
        expect(r.err?.code, host).to.equal('ETARGETFORBIDDEN');
        expect(r.err!.message, host).to.match(/ is a (loopback name|cloud metadata or private-use name)$/);
      }
    });

    it('refuses addresses that embed a forbidden IPv4 and the other forbidden IPv6 ranges', async () => {
      for (const ip of ['::ffff:7f00:1', '::7f00:1', '2002:7f00:1::', '2002:a9fe:a9fe::', '64:ff9b::a00:1', '64:ff9b:1::5db8:d70e', 'fec0::1', 'fe80::1', 'fd00:ec2::254', '2001:0:4136:e378:8000:63bf:3fff:fdd2']) {
        const r = await lookup(ip, {});
        expect(r.err?.code, ip).to.equal('ETARGETFORBIDDEN');
        expect(r.err!.message, ip).to.equal(`${ip} resolves to ${ip}, a loopback, private, link-local or metadata address`);
      }
    });

    it('passes a 6to4 address of a public IPv4 through', async () => {
      expect(await lookup('2002:5db8:d70e::', {})).to.deep.equal({ err: null, address: '2002:5db8:d70e::', family: 6 });
    });

    it('refuses localhost by name with ETARGETFORBIDDEN, single and all-addresses forms', async () => {
      for (const options of [{}, { all: true }, { family: 4 }] as dns.LookupOptions[]) {
        const r = await lookup('localhost', options);
        expect(r.err, JSON.stringify(options)).to.be.an('error');
        expect(r.err!.code).to.equal('ETARGETFORBIDDEN');
        expect(r.err!.message).to.equal('localhost is a loopback name');
      }
    });

    it('refuses what a name resolves to when it is forbidden, in every lookup form (IP text resolves to itself)', async () => {
      for (const options of [{}, { all: true }, { family: 4 }] as dns.LookupOptions[]) {
        const r = await lookup('127.0.0.1', options);
        expect(r.err?.code, JSON.stringify(options)).to.equal('ETARGETFORBIDDEN');
        expect(r.err!.message).to.equal('127.0.0.1 resolves to 127.0.0.1, a loopback, private, link-local or metadata address');
      }
    });

    it('refuses a forbidden IP literal handed to it', async () => {
      for (const ip of ['127.0.0.1', '169.254.169.254', '::1']) {
        const r = await lookup(ip, {});
        expect(r.err?.code, ip).to.equal('ETARGETFORBIDDEN');
      }
    });

    it('passes a public address through in the form the caller asked for', async () => {
      const single = await lookup('8.8.8.8', {});
      expect(single).to.deep.equal({ err: null, address: '8.8.8.8', family: 4 });
      const all = await lookup('2606:4700:4700::1111', { all: true });
      expect(all.err).to.equal(null);
      expect(all.address).to.deep.equal([{ address: '2606:4700:4700::1111', family: 6 }]);
    });

    it('passes resolution errors through unchanged', async () => {
      const r = await lookup('no-such-host.invalid', {});
      expect(r.err?.code).to.be.oneOf(['ENOTFOUND', 'EAI_AGAIN']);
    });
  });
});
