import { expect } from 'chai';
import { generatePassword, hashPassword, needsRehash, passwordProblem, verifyPassword } from './password';

describe('operator passwords (scrypt)', () => {
  it('verifies the password it hashed and nothing else; each hash has its own salt', async () => {
    const pw = 'correct horse battery staple';
    const a = await hashPassword(pw);
    const b = await hashPassword(pw);
    expect(a).to.match(/^scrypt\$15\$8\$1\$/);
    expect(a).to.not.equal(b);
    expect(await verifyPassword(pw, a)).to.equal(true);
    expect(await verifyPassword(pw, b)).to.equal(true);
    expect(await verifyPassword('correct horse battery stapl', a)).to.equal(false);
    expect(await verifyPassword(`${pw} `, a)).to.equal(false);
    expect(await verifyPassword(pw, 'plain text')).to.equal(false);
    expect(await verifyPassword(pw, a.replace(/\$15\$/, '$40$')), 'absurd costs verify nothing').to.equal(false);
    expect(needsRehash(a)).to.equal(false);
    expect(needsRehash(await hashPassword(pw, { log2N: 12, r: 8, p: 1 }))).to.equal(true);
  });

  it('refuses short and overlong passwords; generated ones pass and differ', async () => {
    expect(passwordProblem('short')).to.match(/at least 12/);
    expect(passwordProblem('x'.repeat(257))).to.match(/at most 256/);
    await hashPassword('short').then(() => expect.fail('hashed a short password'), (e: Error) => expect(e).to.be.instanceOf(RangeError));
    const seen = new Set(Array.from({ length: 200 }, () => generatePassword()));
    expect(seen.size).to.equal(200);
    for (const p of seen) {
      expect(p).to.have.length(24);
      expect(p).to.match(/^[A-HJ-NP-Za-km-z2-9]+$/);
      expect(passwordProblem(p)).to.equal(null);
    }
  });
});
