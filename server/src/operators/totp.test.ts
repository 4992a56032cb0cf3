import { expect } from 'chai';
import { base32Decode, base32Encode, hotp, otpauthUri, totpCode, verifyTotp } from './totp';

/** RFC 4226 appendix D and RFC 6238 appendix B (SHA-1 rows; the 8-digit values, compared on 8 digits). */
const RFC_SECRET = Buffer.from('12345678901234567890', 'ascii');

describe('TOTP (RFC 6238 over RFC 4226)', () => {
  it('HOTP: the RFC 4226 test values for counters 0-9', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expected.forEach((code, i) => expect(hotp(RFC_SECRET, BigInt(i)), `counter ${i}`).to.equal(code));
  });

  it('TOTP: the RFC 6238 SHA-1 test values (8 digits) at their times', () => {
    const rows: Array<[number, string]> = [[59, '94287082'], [1111111109, '07081804'], [1111111111, '14050471'], [1234567890, '89005924'], [2000000000, '69279037'], [20000000000, '65353130']];
    for (const [t, code] of rows) expect(hotp(RFC_SECRET, BigInt(Math.floor(t / 30)), 8), `T = ${t}`).to.equal(code);
  });

  it('accepts the current code and one step either side, refuses older, newer and reused ones', () => {
    const secret = Buffer.from('0102030405060708090a0b0c0d0e0f1011121314', 'hex');
    const now = 1_800_000_000_000;
    const step = BigInt(Math.floor(now / 30_000));
    expect(verifyTotp(secret, totpCode(secret, now), now, null)).to.equal(step);
    expect(verifyTotp(secret, totpCode(secret, now - 30_000), now, null)).to.equal(step - 1n);
    expect(verifyTotp(secret, totpCode(secret, now + 30_000), now, null)).to.equal(step + 1n);
    expect(verifyTotp(secret, totpCode(secret, now - 60_000), now, null), 'two steps old').to.equal(null);
    expect(verifyTotp(secret, totpCode(secret, now + 60_000), now, null), 'two steps ahead').to.equal(null);
    expect(verifyTotp(secret, totpCode(secret, now), now, step), 'already used').to.equal(null);
    expect(verifyTotp(secret, totpCode(secret, now - 30_000), now, step - 1n), 'an older step after a use').to.equal(null);
    expect(verifyTotp(secret, '12345', now, null), 'not six digits').to.equal(null);
    expect(verifyTotp(secret, 'abcdef', now, null)).to.equal(null);
  });

  it('base32 round-trips (RFC 4648 vectors) and the otpauth URI carries secret, issuer and period', () => {
    expect(base32Encode(Buffer.from('foobar'))).to.equal('MZXW6YTBOI');
    expect(Buffer.from(base32Decode('MZXW6YTBOI======')).toString()).to.equal('foobar');
    expect(Buffer.from(base32Decode(base32Encode(RFC_SECRET)))).to.deep.equal(RFC_SECRET);
    expect(() => base32Decode('not base32!')).to.throw(RangeError);
    const uri = otpauthUri('WCS test', 'alice', RFC_SECRET);
    expect(uri).to.equal('otpauth://totp/WCS%20test:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=WCS%20test&algorithm=SHA1&digits=6&period=30');
  });
});
