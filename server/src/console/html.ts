/**
 * Server-rendered console pages (docs/console.md, "Safe display"): every value goes through
 * esc(); pages carry no inline script or style (the Content-Security-Policy forbids both), so
 * text a merchant or a receiver sent can never run in an operator's browser.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Text for HTML (element content or a quoted attribute). */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

/** Markup built from escaped parts: `html` tags its template, escaping every value not itself Html. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += (Array.isArray(v) ? v.map(part).join('') : part(v)) + strings[i + 1]!;
  });
  return new Html(out);
}

function part(v: unknown): string {
  return v instanceof Html ? v.text : esc(v);
}

export interface PageOperator {
  readonly username: string;
  readonly role: string;
  /** The password was generated and must be changed first: the page shows the banner and links only to the password page. */
  readonly mustChangePassword?: boolean;
}

/** The banner on every page of an operator whose password must be changed first (console/password-first.ts). */
const MUST_CHANGE_BANNER = html`<p class="must-change" role="note" id="must-change">Your password was generated for you and must be changed before anything else.
  Until then the console shows only the password page and refuses every other page and every change. <a href="/password">Change your password</a>.</p>`;

/** A whole page: the layout, the navigation for a signed-in operator, and the body. */
export function page(title: string, operator: PageOperator | null, body: Html, csrf: string | null = null): string {
  const must = operator?.mustChangePassword === true;
  const links = must ? html`<a href="/password">Password</a>` : html`<a href="/">Overview</a> <a href="/applications">Applications</a> <a href="/callbacks">Callbacks</a> <a href="/deposits">Deposits</a> <a href="/withdrawals">Withdrawals</a>
    <a href="/wallets">Wallets</a> <a href="/collection">Collection</a> <a href="/reconciliation">Reconciliation</a> <a href="/recovery">Recovery</a> <a href="/keystore">Key store</a> <a href="/alerts">Alerts</a> <a href="/audit">Audit log</a>
    <a href="/operators">Operators</a> <a href="/password">Password</a>`;
  const nav = operator === null ? html`` : html`<nav>
    ${links}
    <span class="who">${operator.username} (${operator.role})</span>
    <form method="post" action="/logout" class="inline"><input type="hidden" name="_csrf" value="${csrf ?? ''}"><button type="submit">Log out</button></form>
  </nav>`;
  return `<!doctype html>
${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Wallet Custody Service</title><link rel="stylesheet" href="/assets/console.css"></head>
<body>${nav}<main>${must ? MUST_CHANGE_BANNER : ''}<h1>${title}</h1>${body}</main></body></html>`}`;
}

export const CONSOLE_CSS = `body{font-family:system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
nav{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;padding:.6rem 1rem;background:#1b2a41;color:#fff}
nav a{color:#fff;text-decoration:none}nav .who{margin-left:auto;opacity:.85}
main{padding:1rem 1.5rem;max-width:72rem}h1{font-size:1.4rem}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border:1px solid #d8dde3;padding:.35rem .5rem;text-align:left;vertical-align:top;font-size:.9rem}
th{background:#eef1f4}pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:.8rem;min-width:14rem}
form.inline{display:inline}.card{background:#fff;border:1px solid #d8dde3;padding:1rem;margin:0 0 1rem;max-width:28rem}
label{display:block;margin:.5rem 0 .2rem}input{width:100%;padding:.4rem;box-sizing:border-box}input[type=checkbox],input[type=radio]{width:auto}
button{padding:.4rem .9rem;margin-top:.6rem}.error{color:#a4161a;font-weight:600}.ok{color:#2b6a30}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:1rem}.stat{background:#fff;border:1px solid #d8dde3;padding:.8rem}
.stat b{display:block;font-size:1.4rem}
form.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:end;margin:0 0 1rem}form.filters label{margin:0}form.filters input,form.filters select{width:auto}
select{padding:.35rem}textarea{width:100%;box-sizing:border-box}dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;background:#fff;border:1px solid #d8dde3;padding:.8rem}
dl.kv dt{font-weight:600}dl.kv dd{margin:0;word-break:break-all}.secret{font-family:monospace;background:#fff8d6;border:1px solid #e0c200;padding:.6rem;word-break:break-all}
.muted{color:#5b6570}.pager{margin:.6rem 0}.pager a{margin-right:1rem}
.must-change{background:#fff3cd;border:1px solid #e0a800;padding:.6rem .8rem;margin:0 0 1rem;max-width:48rem}`;
