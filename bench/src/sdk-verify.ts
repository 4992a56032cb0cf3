/**
 * Benchmark: webhook verifications per second of the merchant SDK (@wcs/sdk's WebhookVerifier, as
 * a merchant's receiver calls it) versus a bare HMAC-SHA256 loop over the same callbacks, in one
 * process, same run, alternating. Goal: SDK / bare at least 90 %.
 *
 * The callbacks are what the service sends: bodies of every event type (recharge, recharge_credited,
 * withdraw, collect, chain_event, transfer, test) built from the webhook examples of
 * server/openapi.json (the service's own payload builders are validated against them) with fresh
 * ids, amounts and hashes, in the proportions of a deposit-heavy merchant; signed with the
 * service's signing functions (@wcs/server: stringToSign, sha256Hex, hmacHex) with a new
 * timestamp and nonce each; headers as node hands them to the receiver; the body as the Buffer
 * express.raw() or captureRawBody gives.
 *
 *   bare            createHash('sha256') of the body, the string to sign, createHmac('sha256', secret)
 *                   hex digest === X-Signature (the brief's baseline: no header, time or format checks)
 *   authenticate    verifier.authenticate({ body, headers, path }): the four headers, their formats,
 *                   the ±5 min timestamp, the HMAC compared in constant time (timingSafeEqual)
 *   bare + parse    bare, then JSON.parse of the body
 *   verify          verifier.verify(): authenticate, then the body parsed into the typed event (what
 *                   the express middleware and the fetch handler call)
 *
 * Goals: authenticate / bare >= 90 % and verify / (bare + parse) >= 90 % (like for like). Reported
 * besides: verify / bare (what parsing costs), verify with an InMemoryReplayStore, and verify on the
 * WebCrypto backend (edge runtimes).
 *
 *   npm run bench:sdk                   (from the repository root)
 *   BENCH_SDK_MESSAGES=50000 BENCH_SDK_ROUNDS=9 node bench/dist/sdk-verify.js
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hmacHex, sha256Hex, stringToSign } from '@wcs/server';
import { WebhookVerifier, InMemoryReplayStore, type WebhookEvent } from '@wcs/sdk';
import { checkAborted, runMain } from './lib/processes';
import { fmtInt, machineInfo, machineLine, median, out, progress, table, printFailures, writeResults } from './lib/report';
import { boolEnv, intEnv } from './lib/settings';

const GOAL_PERCENT = 90;
const CALLBACK_PATH = '/merchant/wcs/callbacks';
const OPENAPI = path.resolve(__dirname, '..', '..', 'server', 'openapi.json');
/** Share of each event type in the mix (a deposit-heavy merchant: most callbacks are deposit states). */
const MIX: Array<[string, number]> = [['recharge', 45], ['recharge_credited', 10], ['withdraw', 20], ['collect', 8], ['chain_event', 10], ['transfer', 2], ['test', 5]];

type Variant = 'bare' | 'authenticate' | 'bare + parse' | 'verify' | 'verify + replay store' | 'verify (webcrypto)';
const VARIANTS: Variant[] = ['bare', 'authenticate', 'bare + parse', 'verify', 'verify + replay store', 'verify (webcrypto)'];

interface Message {
  event: string;
  body: Buffer;
  headers: Record<string, string>;
}

interface Batch {
  round: number | 'warm-up';
  variant: Variant;
  messages: number;
  seconds: number;
  perSecond: number;
}

const hex = (n: number) => crypto.randomBytes(n).toString('hex');
const yieldToEventLoop = () => new Promise<void>((r) => setImmediate(r));

function webhookExamples(): Map<string, Record<string, unknown>> {
  const doc = JSON.parse(fs.readFileSync(OPENAPI, 'utf8')) as {
    webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { examples: Record<string, { value: Record<string, unknown> }> } } } } }>;
  };
  const out = new Map<string, Record<string, unknown>>();
  for (const w of Object.values(doc.webhooks)) for (const ex of Object.values(w.post.requestBody.content['application/json'].examples)) out.set(String(ex.value.event), ex.value);
  return out;
}

/** A body of the event type with fresh values (ids, amounts, hashes) and the example's shape and sizes. */
function freshBody(template: Record<string, unknown>, i: number): Record<string, unknown> {
  const b: Record<string, unknown> = { ...template };
  for (const k of ['id', 'itemId', 'bizId']) if (typeof b[k] === 'number') b[k] = 1000 + i;
  if (typeof b.amount === 'string') b.amount = `${(i % 997) + 1}.${String(i % 10_000).padStart(4, '0').replace(/0+$/, '') || '5'}`;
  if (typeof b.txHash === 'string' && b.txHash !== '') b.txHash = `0x${hex(32)}`;
  if (typeof b.blockHeight === 'number') b.blockHeight = 7_400_000 + i;
  if (typeof b.appOrderNo === 'string') b.appOrderNo = `order-${i}`;
  if (b.event === 'recharge') b.txStatus = (['PENDING', 'CONFIRMED', 'SETTLED'] as const)[i % 3];
  return b;
}

function makeMessages(n: number, secret: string, apiKey: string, templates: Map<string, Record<string, unknown>>): Message[] {
  const total = MIX.reduce((a, [, w]) => a + w, 0);
  const out: Message[] = [];
  for (let i = 0; i < n; i++) {
    let r = i % total;
    const event = MIX.find(([, w]) => (r -= w) < 0)![0];
    const body = Buffer.from(JSON.stringify(freshBody(templates.get(event)!, i)), 'utf8');
    const timestamp = String(Date.now());
    const nonce = hex(16);
    const signature = hmacHex(secret, stringToSign('POST', CALLBACK_PATH, timestamp, nonce, sha256Hex(body)));
    out.push({
      event,
      body,
      headers: {
        host: '127.0.0.1:3000', 'user-agent': 'wcs-callback/1', 'content-type': 'application/json', 'content-length': String(body.length), connection: 'keep-alive',
        'x-api-key': apiKey, 'x-timestamp': timestamp, 'x-nonce': nonce, 'x-signature': signature,
      },
    });
  }
  // interleave the types as they would arrive
  for (let i = out.length - 1; i > 0; i--) {
    const j = crypto.randomInt(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The baseline: exactly the spec's check, nothing else. */
function bare(secret: string, m: Message): boolean {
  const sts = 'POST\n' + CALLBACK_PATH + '\n' + m.headers['x-timestamp'] + '\n' + m.headers['x-nonce'] + '\n' + crypto.createHash('sha256').update(m.body).digest('hex');
  return crypto.createHmac('sha256', secret).update(sts).digest('hex') === m.headers['x-signature'];
}

async function main(): Promise<number> {
  const n = intEnv('BENCH_SDK_MESSAGES', 20_000, 100, 5_000_000);
  const rounds = intEnv('BENCH_SDK_ROUNDS', 7, 1, 100);
  const warmup = intEnv('BENCH_SDK_WARMUP', 5_000, 0, 1_000_000);
  const chunk = intEnv('BENCH_SDK_CHUNK', 250, 1, 1_000_000);
  const enforceGoal = boolEnv('BENCH_ENFORCE_GOAL');
  const machine = machineInfo();
  const secret = hex(32);
  const apiKey = `pk_test_${hex(16)}`;
  const templates = webhookExamples();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdkVersion = (require('@wcs/sdk/package.json') as { version: string }).version;

  const verifier = new WebhookVerifier({ apiSecret: secret });
  const webVerifier = new WebhookVerifier({ apiSecret: secret, crypto: 'webcrypto' });

  const sample = makeMessages(2000, secret, apiKey, templates);
  const sizes = new Map<string, number[]>();
  for (const m of sample) sizes.set(m.event, [...(sizes.get(m.event) ?? []), m.body.length]);
  out(`webhook verification: @wcs/sdk ${sdkVersion} WebhookVerifier (${verifier.cryptoBackend} backend) vs a bare HMAC-SHA256 loop, one process, same callbacks`);
  out(machineLine(machine));
  out(
    `per round and variant: ${fmtInt(n)} signed callbacks (fresh timestamp and nonce each; ${MIX.map(([e, w]) => `${e} ${w} %`).join(', ')}); ` +
      `body bytes by event: ${[...sizes].map(([e, s]) => `${e} ${Math.round(median(s))}`).join(', ')}; ${rounds} rounds, the variants interleaved in chunks of ${fmtInt(chunk)} (order rotating), warm-up ${fmtInt(warmup)}`,
  );

  const failures: string[] = [];
  const batches: Batch[] = [];

  // ------------------------------------------------------------ correctness (not timed)
  {
    const msgs = makeMessages(700, secret, apiKey, templates);
    for (const m of msgs) {
      const v = await verifier.verify({ body: m.body, headers: m.headers, path: CALLBACK_PATH });
      const w = await webVerifier.verify({ body: m.body, headers: m.headers, path: CALLBACK_PATH });
      if (!bare(secret, m)) failures.push(`bare refused a good ${m.event} callback`);
      if (!v.ok) failures.push(`sdk refused a good ${m.event} callback: ${v.reason}`);
      else if (JSON.stringify(v.event) !== JSON.stringify(JSON.parse(m.body.toString('utf8')))) failures.push(`sdk parsed a ${m.event} body differently`);
      if (!w.ok) failures.push(`sdk (webcrypto) refused a good ${m.event} callback: ${w.reason}`);
    }
    // every kind of tampering is refused by the SDK (and by the bare loop where it checks it)
    for (const m of msgs.slice(0, 70)) {
      const flip = Buffer.from(m.body);
      flip[crypto.randomInt(flip.length)] ^= 1;
      const cases: Array<[string, Message, boolean]> = [
        ['body byte', { ...m, body: flip }, true],
        ['nonce', { ...m, headers: { ...m.headers, 'x-nonce': hex(16) } }, true],
        ['timestamp', { ...m, headers: { ...m.headers, 'x-timestamp': String(Number(m.headers['x-timestamp']) + 1) } }, true],
        ['signature', { ...m, headers: { ...m.headers, 'x-signature': hex(32) } }, true],
        ['other secret', { ...m, headers: { ...m.headers, 'x-signature': hmacHex(hex(32), stringToSign('POST', CALLBACK_PATH, m.headers['x-timestamp']!, m.headers['x-nonce']!, sha256Hex(m.body))) } }, true],
      ];
      for (const [what, bad] of cases) {
        const v = await verifier.verify({ body: bad.body, headers: bad.headers, path: CALLBACK_PATH });
        if (v.ok) failures.push(`sdk accepted a callback with a changed ${what}`);
        if (bare(secret, bad)) failures.push(`bare accepted a callback with a changed ${what}`);
      }
      const stale: Record<string, string> = { ...m.headers, 'x-timestamp': String(Date.now() - 301_000) };
      stale['x-signature'] = hmacHex(secret, stringToSign('POST', CALLBACK_PATH, stale['x-timestamp']!, m.headers['x-nonce']!, sha256Hex(m.body)));
      const s = await verifier.verify({ body: m.body, headers: stale, path: CALLBACK_PATH });
      if (s.ok || s.reason !== 'STALE_TIMESTAMP') failures.push(`sdk did not refuse a stale callback (${s.ok ? 'accepted' : s.reason})`);
    }
    const replayStore = new InMemoryReplayStore();
    const rv = new WebhookVerifier({ apiSecret: secret, replayStore });
    const first = await rv.verify({ body: msgs[0]!.body, headers: msgs[0]!.headers, path: CALLBACK_PATH });
    const again = await rv.verify({ body: msgs[0]!.body, headers: msgs[0]!.headers, path: CALLBACK_PATH });
    if (!first.ok || again.ok || again.reason !== 'REPLAYED') failures.push('the replay store did not refuse a replayed callback');
    out(`correctness: ${fmtInt(msgs.length)} good callbacks of every type verified by both (SDK events equal to JSON.parse of the body), ` +
      `${fmtInt(70 * 6)} tampered or stale ones refused, a replay refused by the store: ${failures.length ? 'FAILED' : 'ok'}`);
  }

  // ------------------------------------------------------------ timed loops
  let replayStore = new InMemoryReplayStore();
  let replayVerifier = new WebhookVerifier({ apiSecret: secret, replayStore });
  const runners: Record<Variant, (msgs: Message[]) => Promise<number>> = {
    bare: async (msgs) => {
      let ok = 0;
      for (let i = 0; i < msgs.length; i++) if (bare(secret, msgs[i]!)) ok++;
      return ok;
    },
    authenticate: async (msgs) => {
      let ok = 0;
      for (let i = 0; i < msgs.length; i++) {
        const m = msgs[i]!;
        if ((await verifier.authenticate({ body: m.body, headers: m.headers, path: CALLBACK_PATH })).ok) ok++;
      }
      return ok;
    },
    'bare + parse': async (msgs) => {
      let ok = 0;
      for (let i = 0; i < msgs.length; i++) {
        const m = msgs[i]!;
        if (bare(secret, m) && typeof (JSON.parse(m.body.toString('utf8')) as WebhookEvent).event === 'string') ok++;
      }
      return ok;
    },
    verify: async (msgs) => {
      let ok = 0;
      for (let i = 0; i < msgs.length; i++) {
        const m = msgs[i]!;
        if ((await verifier.verify({ body: m.body, headers: m.headers, path: CALLBACK_PATH })).ok) ok++;
      }
      return ok;
    },
    'verify + replay store': async (msgs) => {
      let ok = 0;
      for (let i = 0; i < msgs.length; i++) {
        const m = msgs[i]!;
        if ((await replayVerifier.verify({ body: m.body, headers: m.headers, path: CALLBACK_PATH })).ok) ok++;
      }
      return ok;
    },
    'verify (webcrypto)': async (msgs) => {
      let ok = 0;
      for (let i = 0; i < msgs.length; i++) {
        const m = msgs[i]!;
        if ((await webVerifier.verify({ body: m.body, headers: m.headers, path: CALLBACK_PATH })).ok) ok++;
      }
      return ok;
    },
  };

  /**
   * One round: every variant over the same callbacks, interleaved in chunks of `chunk` callbacks
   * with the order rotating from chunk to chunk, so that whatever else the machine does hits every
   * variant alike; each variant's time is the sum of its chunks.
   */
  const measureRound = async (round: number | 'warm-up', msgs: Message[]) => {
    replayStore = new InMemoryReplayStore();
    replayVerifier = new WebhookVerifier({ apiSecret: secret, replayStore });
    const ns = new Map<Variant, bigint>(VARIANTS.map((v) => [v, 0n]));
    const ok = new Map<Variant, number>(VARIANTS.map((v) => [v, 0]));
    for (let k = 0, c = 0; k < msgs.length; k += chunk, c++) {
      checkAborted();
      await yieldToEventLoop();
      const part = msgs.slice(k, k + chunk);
      for (let j = 0; j < VARIANTS.length; j++) {
        const v = VARIANTS[(j + c) % VARIANTS.length]!;
        const t = process.hrtime.bigint();
        const good = await runners[v](part);
        ns.set(v, ns.get(v)! + (process.hrtime.bigint() - t));
        ok.set(v, ok.get(v)! + good);
      }
    }
    for (const v of VARIANTS) {
      if (ok.get(v) !== msgs.length) failures.push(`${v} (round ${round}): ${msgs.length - ok.get(v)!} of ${msgs.length} good callbacks refused`);
      const seconds = Number(ns.get(v)!) / 1e9;
      batches.push({ round, variant: v, messages: msgs.length, seconds, perSecond: msgs.length / seconds });
    }
  };

  if (warmup > 0) {
    progress('warm-up');
    await measureRound('warm-up', makeMessages(warmup, secret, apiKey, templates));
  }
  for (let round = 1; round <= rounds; round++) {
    // new callbacks every round (fresh timestamps and nonces), the same for every variant of the round
    const msgs = makeMessages(n, secret, apiKey, templates);
    progress(`round ${round}/${rounds}`);
    await measureRound(round, msgs);
    const last = batches.slice(-VARIANTS.length);
    progress(`  ${last.map((b) => `${b.variant} ${fmtInt(b.perSecond)}/s`).join(', ')}`);
  }

  // ------------------------------------------------------------ report
  const measured = batches.filter((b) => b.round !== 'warm-up');
  out('');
  out(
    table(
      ['round', 'variant', 'callbacks', 'ms', 'verifications/s', 'µs each'],
      measured.map((b) => [String(b.round), b.variant, fmtInt(b.messages), (b.seconds * 1000).toFixed(1), fmtInt(b.perSecond), ((b.seconds / b.messages) * 1e6).toFixed(2)]),
      [false, false, true, true, true, true],
    ),
  );
  const rate = (v: Variant, round: number) => measured.find((b) => b.variant === v && b.round === round)!.perSecond;
  const medianRate = (v: Variant) => median(measured.filter((b) => b.variant === v).map((b) => b.perSecond));
  const comparisons: Array<{ name: string; ours: Variant; base: Variant; goal: boolean }> = [
    { name: 'authenticate / bare', ours: 'authenticate', base: 'bare', goal: true },
    { name: 'verify / bare + parse', ours: 'verify', base: 'bare + parse', goal: true },
    { name: 'verify / bare', ours: 'verify', base: 'bare', goal: false },
    { name: 'verify + replay store / bare + parse', ours: 'verify + replay store', base: 'bare + parse', goal: false },
    { name: 'verify (webcrypto) / bare + parse', ours: 'verify (webcrypto)', base: 'bare + parse', goal: false },
  ];
  const summary = comparisons.map((c) => {
    const perRound = Array.from({ length: rounds }, (_, i) => (rate(c.ours, i + 1) / rate(c.base, i + 1)) * 100);
    const ratio = median(perRound);
    return { ...c, ratioPercent: ratio, perRoundPercent: perRound, oursPerSecond: medianRate(c.ours), basePerSecond: medianRate(c.base), met: c.goal ? ratio >= GOAL_PERCENT : null };
  });
  out('');
  out(
    table(
      ['comparison', 'ours/s', 'baseline/s', 'ratio (median of rounds)', 'per round %', 'goal', 'result'],
      summary.map((s) => [
        s.name, fmtInt(s.oursPerSecond), fmtInt(s.basePerSecond), `${s.ratioPercent.toFixed(1)} %`, s.perRoundPercent.map((p) => p.toFixed(0)).join(', '),
        s.goal ? `>= ${GOAL_PERCENT} %` : '-', s.met === null ? '-' : s.met ? 'met' : 'NOT MET',
      ]),
      [false, true, true, true, false, false, false],
    ),
  );
  const goalsMet = summary.filter((s) => s.goal).every((s) => s.met);
  out('');
  out(`goal: SDK verification >= ${GOAL_PERCENT} % of the bare loop (authenticate / bare, verify / bare + parse): ${goalsMet ? 'met' : 'not met'}`);
  printFailures(out, failures);

  const round1 = (v: number) => Math.round(v * 10) / 10;
  const resultsFile = writeResults('sdk-verify.json', {
    benchmark: 'sdk-verify',
    description: '@wcs/sdk webhook verification (authenticate, verify) vs a bare HMAC-SHA256 loop over the same signed callbacks, one process, same run',
    date: new Date().toISOString(),
    machine,
    settings: { messages: n, rounds, warmup, chunk, mix: Object.fromEntries(MIX), path: CALLBACK_PATH, backend: verifier.cryptoBackend, sdkVersion },
    bodyBytesMedian: Object.fromEntries([...sizes].map(([e, s]) => [e, median(s)])),
    batches,
    summary: summary.map((s) => ({
      comparison: s.name, oursMedianPerSecond: Math.round(s.oursPerSecond), baselineMedianPerSecond: Math.round(s.basePerSecond), ratioPercent: round1(s.ratioPercent),
      perRoundPercent: s.perRoundPercent.map(round1), goalPercent: s.goal ? GOAL_PERCENT : null, goalMet: s.met,
    })),
    goalsMet,
    correctness: { ok: failures.length === 0, failures },
  });
  out(`results: ${resultsFile}`);
  if (failures.length) return 1;
  if (enforceGoal && !goalsMet) return 1;
  return 0;
}

runMain(main);
