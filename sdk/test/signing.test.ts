import { expect } from 'chai';
import { RequestSigner, signRequest, stringToSign, stripQuery, newNonce, EMPTY_BODY_SHA256 } from '../src/signing';
import { constantTimeEqual, fromHex, toHex } from '../src/crypto';
import { API_KEY, SECRET, hmacHex, sha256Hex, specSignature } from './helpers';

/**
 * Vectors computed outside this package (Python's hmac/hashlib) for the spec's scheme, with the
 * secret used as its UTF-8 bytes (docs/api.md):
 *   python3 -c "import hmac,hashlib; ..."
 */
const VECTORS = [
  {
    method: 'POST', path: '/api/v1/wallet/address/create', timestamp: '1736929800123', nonce: '9b4f0c2e7a1d4e58b3c6f9a0d2e5b7c1',
    body: '{"chainCode":"ETH","externalUserId":"user-42"}',
    bodySha256: '3d7f6635c531c8f6c02989725c07aecd75c8e4ad5aef9bd73464253a40728299',
  },
  {
    method: 'GET', path: '/api/v1/wallet/support/chains', timestamp: '1736929800123', nonce: 'abcdef0123456789',
    body: '',
    bodySha256: EMPTY_BODY_SHA256,
  },
];

describe('signing (spec "Authentication")', () => {
  it('the empty-body hash is the SHA-256 of ""', () => {
    expect(EMPTY_BODY_SHA256).to.equal(sha256Hex(''));
  });

  it('stringToSign: five values joined by LF, method upper-cased, query not signed', () => {
    expect(stringToSign('get', '/a/b?x=1&y=2', '1736929800123', 'n0nce', EMPTY_BODY_SHA256)).to.equal(`GET\n/a/b\n1736929800123\nn0nce\n${EMPTY_BODY_SHA256}`);
    expect(stripQuery('/p?q#f')).to.equal('/p');
    expect(stripQuery('/p#f')).to.equal('/p');
    expect(stripQuery('/p')).to.equal('/p');
  });

  for (const crypto of ['node', 'webcrypto'] as const) {
    it(`${crypto}: signatures equal an independently computed HMAC-SHA256 over the exact bytes`, async () => {
      const signer = new RequestSigner(API_KEY, SECRET, crypto);
      for (const v of VECTORS) {
        const s = await signer.sign({ method: v.method, path: v.path, body: v.body, timestamp: v.timestamp, nonce: v.nonce });
        expect(s.headers).to.deep.equal({ 'X-Api-Key': API_KEY, 'X-Timestamp': v.timestamp, 'X-Nonce': v.nonce, 'X-Signature': s.signature });
        expect(sha256Hex(v.body)).to.equal(v.bodySha256);
        expect(s.stringToSign).to.equal([v.method, v.path, v.timestamp, v.nonce, v.bodySha256].join('\n'));
        expect(s.signature).to.equal(hmacHex(SECRET, s.stringToSign));
        expect(s.signature).to.match(/^[0-9a-f]{64}$/);
      }
      // non-ASCII bodies: hashed as their UTF-8 bytes, whether given as a string or as bytes
      const text = '{"note":"héllo — ✓ 😀"}';
      const a = await signer.sign({ method: 'POST', path: '/x', body: text, timestamp: '1736929800123', nonce: 'abcdefgh' });
      const b = await signer.sign({ method: 'POST', path: '/x', body: new TextEncoder().encode(text), timestamp: '1736929800123', nonce: 'abcdefgh' });
      expect(a.signature).to.equal(b.signature).and.to.equal(specSignature(SECRET, 'POST', '/x', '1736929800123', 'abcdefgh', Buffer.from(text, 'utf8')));
    });
  }

  it('a fixed vector computed by a second implementation (Python hmac) matches', async () => {
    // python3 -c 'import hmac,hashlib;b=b"{\"chainCode\":\"ETH\",\"externalUserId\":\"user-42\"}";print(hmac.new(b"a3f1c9e07b5d42869e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f",("POST\n/api/v1/wallet/address/create\n1736929800123\n9b4f0c2e7a1d4e58b3c6f9a0d2e5b7c1\n"+hashlib.sha256(b).hexdigest()).encode(),hashlib.sha256).hexdigest())'
    const v = VECTORS[0]!;
    const s = await signRequest({ apiKey: API_KEY, apiSecret: SECRET }, { method: v.method, path: v.path, body: v.body, timestamp: v.timestamp, nonce: v.nonce });
    expect(sha256Hex(v.body)).to.equal(PY_BODY_SHA256);
    expect(s.signature).to.equal(PY_SIGNATURE);
  });

  it('defaults: a 13-digit timestamp of now and a new 32-hex nonce per request', async () => {
    const signer = new RequestSigner(API_KEY, SECRET);
    const before = Date.now();
    const s1 = await signer.sign({ method: 'GET', path: '/x' });
    const s2 = await signer.sign({ method: 'GET', path: '/x' });
    expect(s1.timestamp).to.match(/^\d{13}$/);
    expect(Number(s1.timestamp)).to.be.within(before, Date.now());
    expect(s1.nonce).to.match(/^[0-9a-f]{32}$/);
    expect(s1.nonce).to.not.equal(s2.nonce);
    expect(newNonce()).to.match(/^[0-9a-f]{32}$/);
  });

  it('refuses a timestamp that is not 13-digit milliseconds, and empty credentials', async () => {
    const signer = new RequestSigner(API_KEY, SECRET);
    let e: unknown;
    await signer.sign({ method: 'GET', path: '/x', timestamp: 1736929800 }).catch((x: unknown) => (e = x));
    expect(String(e)).to.match(/13-digit/);
    expect(() => new RequestSigner('', SECRET)).to.throw(/apiKey/);
    expect(() => new RequestSigner(API_KEY, '')).to.throw(/secret/);
  });

  it('hex and constant-time helpers', () => {
    const b = Uint8Array.from([0, 1, 0xab, 0xff]);
    expect(toHex(b)).to.equal('0001abff');
    expect(fromHex('0001abff')).to.deep.equal(b);
    expect(fromHex('0001ABFF')).to.equal(null);
    expect(fromHex('abc')).to.equal(null);
    expect(constantTimeEqual(b, Uint8Array.from(b))).to.equal(true);
    expect(constantTimeEqual(b, Uint8Array.from([0, 1, 0xab, 0xfe]))).to.equal(false);
    expect(constantTimeEqual(b, Uint8Array.from([0, 1, 0xab]))).to.equal(false);
  });
});

const PY_BODY_SHA256 = '3d7f6635c531c8f6c02989725c07aecd75c8e4ad5aef9bd73464253a40728299';
const PY_SIGNATURE = 'c4da4fe16df39b26f8f630d39bf941825f9a1efb29e3244668fc0749271aabab';
