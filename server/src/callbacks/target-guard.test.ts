import { expect } from 'chai';
import type * as dns from 'node:dns';
import { forbiddenTargetReason, guardedLookup, isForbiddenAddress } from './target-guard';

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
    ];
    for (const [url, reason] of refused) {
      it(`refuses ${url}`, async () => {
        const why = await forbiddenTargetReason(url);
        expect(why, url).to.be.a('string');
        expect(why).to.match(reason);
      });
    }

    for (const url of ['https://8.8.8.8/cb', 'https://1.1.1.1:8443/hook?x=1', 'https://[2606:4700:4700::1111]/cb', 'https://172.32.0.1/cb']) {
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

  describe('guardedLookup (connect time)', () => {
    it('refuses localhost (resolves to loopback) with ETARGETFORBIDDEN, single and all-addresses forms', async () => {
      for (const options of [{}, { all: true }, { family: 4 }] as dns.LookupOptions[]) {
        const r = await lookup('localhost', options);
        expect(r.err, JSON.stringify(options)).to.be.an('error');
        expect(r.err!.code).to.equal('ETARGETFORBIDDEN');
        expect(r.err!.message).to.match(/^localhost resolves to (127\.0\.0\.1|::1), a loopback, private, link-local or metadata address$/);
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
