import { expect } from 'chai';
import { lockedUntil } from './app';
import { html, page } from './html';
import { passwordFirst } from './password-first';

describe('console: a generated password is changed first (pure rule)', () => {
  const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

  it('a session without the flag is never held back by the rule', () => {
    for (const m of METHODS) {
      for (const p of ['/', '/applications/1/callbacks', '/operators/ada/disable', '/password', '/nowhere']) expect(passwordFirst(m, p, false), `${m} ${p}`).to.equal('ALLOW');
    }
  });

  it('while the password must change: the password page and its form, logout, login and the stylesheet only', () => {
    for (const [m, p] of [['GET', '/password'], ['HEAD', '/password'], ['POST', '/password'], ['POST', '/logout'], ['GET', '/login'], ['POST', '/login'], ['GET', '/assets/console.css']]) {
      expect(passwordFirst(m!, p!, true), `${m} ${p}`).to.equal('ALLOW');
    }
    // spelled as Express would still route them: any case, one trailing slash, a lower-case method
    expect(passwordFirst('post', '/Password/', true)).to.equal('ALLOW');
    expect(passwordFirst('POST', '/LOGOUT', true)).to.equal('ALLOW');
  });

  it('while the password must change: every other page and every change is refused, whatever its method', () => {
    const paths = ['/', '/applications', '/applications/1', '/applications/1/callbacks', '/applications/1/callbacks/RECHARGE/test', '/alerts/1/acknowledge',
      '/operators/ada/disable', '/withdrawals/5/approve', '/collection/policy', '/callbacks/resend-failed', '/audit', '/keystore', '/nowhere'];
    for (const m of METHODS) {
      for (const p of paths) expect(passwordFirst(m, p, true), `${m} ${p}`).to.equal('REFUSE');
    }
    // the allowed paths with another method, or spelled so that Express would not route them there
    for (const [m, p] of [['PUT', '/password'], ['DELETE', '/password'], ['PATCH', '/password'], ['GET', '/logout'], ['DELETE', '/logout'], ['POST', '/assets/console.css'],
      ['PUT', '/login'], ['POST', '//password'], ['POST', '/password//'], ['POST', '/password/x'], ['POST', '/pass%77ord'], ['POST', '/password.json'], ['POST', '']]) {
      expect(passwordFirst(m!, p!, true), `${m} ${p}`).to.equal('REFUSE');
    }
  });

  it('a page for such an operator shows the banner and links only to the password page and logout', () => {
    const must = page('Change your password', { username: 'olga', role: 'operator', mustChangePassword: true }, html`<p>form</p>`, 'tok');
    expect(must).to.include('id="must-change"');
    expect(must.match(/<a href="[^"]*"/g)).to.deep.equal(['<a href="/password"', '<a href="/password"']);
    expect(must).to.include('action="/logout"');
    const after = page('Overview', { username: 'olga', role: 'operator', mustChangePassword: false }, html`<p>x</p>`, 'tok');
    expect(after).not.to.include('must-change');
    expect(after).to.include('<a href="/applications">');
  });

  it('the lockout answer states its end in UTC, rounded up to the second', () => {
    expect(lockedUntil(new Date('2030-05-06T07:08:09.001Z'))).to.equal('2030-05-06 07:08:10 UTC');
    expect(lockedUntil(new Date('2030-05-06T07:08:09.000Z'))).to.equal('2030-05-06 07:08:09 UTC');
  });
});
