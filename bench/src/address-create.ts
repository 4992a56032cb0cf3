/**
 * Benchmark: deposit-address creates per second through the signed API, each as a ratio
 * to the signed GET /api/v1/wallet/support/chains of the same server in the same run.
 *
 *   new ETH   POST /api/v1/wallet/address/create {"chainCode":"ETH",...} for a never-seen user
 *             (one key derivation; the EVM rule also writes the BSC and POLYGON rows)   goal >= 40 %
 *   new BTC   the same on BTC (BIP-84 P2WPKH, test network)                                goal >= 40 %
 *   repeat    creates for users that already exist (ETH and BTC alternately)             goal >= 70 %
 *
 * One database, one software key store (TEST_MNEMONIC), one `wcs start --api-only`, one
 * application (BTC,ETH,BSC,POLYGON). Every request is signed (the body hash covers the
 * exact body bytes) and every answer is checked; afterwards Postgres is checked: one
 * key per new user, key indices unique. See bench/README.md.
 *
 *   npm run bench:addresses             (from the repository root)
 *   BENCH_SECONDS=30 BENCH_ROUNDS=3 node bench/dist/address-create.js
 *   BENCH_CPU_PROF=1 node bench/dist/address-create.js
 */
import * as path from 'node:path';
import type { Client } from 'pg';
import { testEnv } from '@wcs/server/testing';
import { AUTOCANNON_VERSION, type AutocannonRequest } from './autocannon';
import { isCode0, load, problems, type LoadTarget, type RunRecord } from './lib/load';
import { dbCounters, dbDelta, openStatsConnection, sampleActivity } from './lib/postgres';
import { checkAborted, CleanupStack, httpRequest, runMain, sleep, type Child } from './lib/processes';
import {
  fmtInt, fmtMs, fmtPct, fmtUs, machineInfo, machineLine, medianOrNull, noiseWarning, out, progress, summarise, table, printFailures, writeResults,
} from './lib/report';
import { intEnv, readLoadSettings } from './lib/settings';
import { signedHeaders, signedJsonPost, type Credentials } from './lib/signing';
import { createAppViaCli, prepareBenchStorage, printProfiles, startApiServer, LIMITS_FAR_ABOVE_LOAD } from './lib/wcs';

const CHAINS_PATH = '/api/v1/wallet/support/chains';
const CREATE_PATH = '/api/v1/wallet/address/create';
const LIST_PATH = '/api/v1/wallet/address/list-by-user';
const CHAINS = ['BTC', 'ETH', 'BSC', 'POLYGON'];
const EVM_SIBLINGS = ['BSC', 'POLYGON'];
const NOISE_WARN_PERCENT = 20;
/** At most this many bad answers are quoted in the report (all are counted). */
const MAX_SAMPLES = 5;

/** externalUserId prefixes, one per kind of user, so the database check can tell them apart. */
const PREFIX = { newEth: 'ne-', newBtc: 'nb-', repeat: 'rp-', probe: 'pr-' } as const;

type TargetName = 'baseline' | 'new ETH' | 'new BTC' | 'repeat';
const ALL_TARGETS: TargetName[] = ['baseline', 'new ETH', 'new BTC', 'repeat'];
/** BENCH_TARGETS: the create targets to run, e.g. "new-eth" or "new-btc,repeat" (the baseline always runs). */
const TARGET_KNOB: Record<string, TargetName> = { 'new-eth': 'new ETH', 'new-btc': 'new BTC', repeat: 'repeat' };

function selectedTargets(): TargetName[] {
  const raw = (process.env.BENCH_TARGETS ?? '').trim();
  if (raw === '') return ALL_TARGETS;
  const picked = new Set<TargetName>(['baseline']);
  for (const t of raw.split(',').map((x) => x.trim().toLowerCase()).filter((x) => x !== '')) {
    const name = TARGET_KNOB[t];
    if (!name) throw new Error(`BENCH_TARGETS: unknown target "${t}" (use ${Object.keys(TARGET_KNOB).join(', ')})`);
    picked.add(name);
  }
  return ALL_TARGETS.filter((t) => picked.has(t));
}
const GOALS: Record<Exclude<TargetName, 'baseline'>, number> = { 'new ETH': 40, 'new BTC': 40, repeat: 70 };

const ADDRESS_RE: Record<string, RegExp> = {
  ETH: /^0x[0-9a-fA-F]{40}$/,
  // BIP-84 P2WPKH on the test network: bech32, hrp tb, witness v0, 20-byte program
  BTC: /^tb1q[02-9ac-hj-np-z]{38}$/,
};

interface AddressRecord {
  id: number;
  chainCode: string;
  address: string;
  memo: string | null;
  addressType: string;
  externalUserId: string;
  status: string;
}

/** What the client saw for one target, over all its runs (warm-up included). */
interface TargetTally {
  /** Requests built (each one is sent: autocannon writes every request it builds). */
  built: number;
  /** Answers that were a valid code 0 address record for the request's user. */
  good: number;
  /** Code 0 answers that were wrong (another user, chain or address; a duplicate). */
  bad: number;
  badSamples: string[];
  /** New-user targets: the users answered, and their addresses. */
  users: Set<string>;
  addresses: Set<string>;
}

const newTally = (): TargetTally => ({ built: 0, good: 0, bad: 0, badSamples: [], users: new Set(), addresses: new Set() });

function recordBad(t: TargetTally, why: string): void {
  t.bad++;
  if (t.badSamples.length < MAX_SAMPLES) t.badSamples.push(why);
}

function parseRecord(body: string): AddressRecord | null {
  try {
    const env = JSON.parse(body) as { code?: unknown; data?: unknown };
    return env.code === 0 && env.data && typeof env.data === 'object' ? (env.data as AddressRecord) : null;
  } catch {
    return null;
  }
}

/** Checks the shape every address/create answer must have on an HD chain. */
function recordProblem(r: AddressRecord, chainCode: string, userId: string): string | null {
  if (r.chainCode !== chainCode) return `chainCode ${r.chainCode}, expected ${chainCode}`;
  if (r.externalUserId !== userId) return `externalUserId ${r.externalUserId}, expected ${userId}`;
  if (!ADDRESS_RE[chainCode]!.test(r.address)) return `${chainCode} address ${JSON.stringify(r.address)} is malformed`;
  if (r.memo !== null || r.addressType !== 'USER' || r.status !== 'ACTIVE' || !Number.isInteger(r.id)) return `unexpected record ${JSON.stringify(r)}`;
  return null;
}

/**
 * POST create for a never-seen user per request. The body and the headers that sign its
 * exact bytes are built together in setupRequest.
 */
function newUserRequests(creds: Credentials, chainCode: 'ETH' | 'BTC', prefix: string, tally: TargetTally): AutocannonRequest[] {
  return [
    {
      method: 'POST',
      path: CREATE_PATH,
      setupRequest: (req) => {
        const user = `${prefix}${tally.built++}`;
        const { body, headers } = signedJsonPost(creds, CREATE_PATH, `{"chainCode":"${chainCode}","externalUserId":"${user}"}`);
        return { ...req, method: 'POST', path: CREATE_PATH, headers: { ...req.headers, ...headers }, body };
      },
      onResponse: (status, body) => {
        if (status !== 200 || !isCode0(body)) return; // counted by autocannon (non-2xx / mismatch)
        const r = parseRecord(body);
        if (!r) return recordBad(tally, `unparsable code 0 answer ${body.slice(0, 200)}`);
        const user = String(r.externalUserId);
        const n = user.startsWith(prefix) ? Number(user.slice(prefix.length)) : NaN;
        const why =
          !Number.isInteger(n) || n < 0 || n >= tally.built
            ? `answer for user ${JSON.stringify(user)}, which this target never sent`
            : recordProblem(r, chainCode, user) ??
              (tally.users.has(user) ? `second answer for new user ${user}` : tally.addresses.has(r.address) ? `address ${r.address} given to two new users` : null);
        if (why) return recordBad(tally, why);
        tally.good++;
        tally.users.add(user);
        tally.addresses.add(r.address);
      },
    },
  ];
}

/** POST create for existing users, cycling through them; each answer must be that user's record, unchanged. */
function repeatRequests(creds: Credentials, existing: AddressRecord[], tally: TargetTally): AutocannonRequest[] {
  const byUser = new Map(existing.map((r) => [r.externalUserId, r]));
  return [
    {
      method: 'POST',
      path: CREATE_PATH,
      setupRequest: (req) => {
        const r = existing[tally.built++ % existing.length]!;
        const { body, headers } = signedJsonPost(creds, CREATE_PATH, `{"chainCode":"${r.chainCode}","externalUserId":"${r.externalUserId}"}`);
        return { ...req, method: 'POST', path: CREATE_PATH, headers: { ...req.headers, ...headers }, body };
      },
      onResponse: (status, body) => {
        if (status !== 200 || !isCode0(body)) return;
        const r = parseRecord(body);
        if (!r) return recordBad(tally, `unparsable code 0 answer ${body.slice(0, 200)}`);
        const want = byUser.get(r.externalUserId);
        if (!want) return recordBad(tally, `answer for user ${JSON.stringify(r.externalUserId)}, which this target never sent`);
        if (r.id !== want.id || r.address !== want.address || r.chainCode !== want.chainCode || r.memo !== null) {
          return recordBad(tally, `repeat create for ${want.externalUserId} answered ${JSON.stringify(r)}, first create gave ${JSON.stringify(want)}`);
        }
        tally.good++;
      },
    },
  ];
}

// ---------------------------------------------------------------- set-up over plain http

async function signedPost(port: number, creds: Credentials, p: string, json: string): Promise<{ status: number; body: string }> {
  const { body, headers } = signedJsonPost(creds, p, json);
  return httpRequest(port, 'POST', p, headers, body);
}

async function createOne(port: number, creds: Credentials, chainCode: string, user: string): Promise<AddressRecord> {
  const res = await signedPost(port, creds, CREATE_PATH, JSON.stringify({ chainCode, externalUserId: user }));
  const r = res.status === 200 ? parseRecord(res.body) : null;
  const why = r ? recordProblem(r, chainCode, user) : `HTTP ${res.status} ${res.body.slice(0, 300)}`;
  if (why) throw new Error(`create ${chainCode} for ${user}: ${why}`);
  return r!;
}

/** Probes every target once and shows the EVM rule at work. Returns a line for the report. */
async function probe(port: number, creds: Credentials): Promise<string[]> {
  const lines: string[] = [];
  const chains = await httpRequest(port, 'GET', CHAINS_PATH, signedHeaders(creds, 'GET', CHAINS_PATH));
  const env = JSON.parse(chains.body) as { code?: unknown; data?: Array<{ chainCode?: string }> };
  const codes = Array.isArray(env.data) ? env.data.map((c) => c.chainCode).sort() : [];
  if (chains.status !== 200 || env.code !== 0 || JSON.stringify(codes) !== JSON.stringify([...CHAINS].sort())) {
    throw new Error(`probe support/chains: HTTP ${chains.status} ${chains.body.slice(0, 300)}`);
  }
  const eth = await createOne(port, creds, 'ETH', `${PREFIX.probe}eth`);
  const again = await createOne(port, creds, 'ETH', `${PREFIX.probe}eth`);
  if (again.id !== eth.id || again.address !== eth.address) throw new Error(`probe: repeat create returned ${JSON.stringify(again)}, first ${JSON.stringify(eth)}`);
  const listQuery = `${LIST_PATH}?externalUserId=${PREFIX.probe}eth`;
  const list = await httpRequest(port, 'GET', listQuery, signedHeaders(creds, 'GET', LIST_PATH));
  const listed = (JSON.parse(list.body) as { data?: AddressRecord[] }).data ?? [];
  const got = listed.map((r) => `${r.chainCode}:${r.address}`).sort();
  const want = ['ETH', ...EVM_SIBLINGS].map((c) => `${c}:${eth.address}`).sort();
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`probe: list-by-user after one ETH create gave ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  const btc = await createOne(port, creds, 'BTC', `${PREFIX.probe}btc`);
  lines.push(`probe: support/chains OK (${codes.length} chains); ETH create ${eth.address} (repeat: same record)`);
  lines.push(`probe: one ETH create wrote ${got.length} address rows (${['ETH', ...EVM_SIBLINGS].join(', ')}, same address: the EVM namespace rule); BTC create ${btc.address}`);
  return lines;
}

/** Creates `count` users for the repeat target (ETH and BTC alternately), `concurrency` at a time. */
async function precreate(port: number, creds: Credentials, count: number, concurrency: number): Promise<{ records: AddressRecord[]; seconds: number }> {
  const records: AddressRecord[] = new Array(count);
  let next = 0;
  const t0 = process.hrtime.bigint();
  const worker = async () => {
    while (next < count) {
      checkAborted();
      const i = next++;
      records[i] = await createOne(port, creds, i % 2 === 0 ? 'ETH' : 'BTC', `${PREFIX.repeat}${i}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { records, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

// ---------------------------------------------------------------- database check

interface KeyRow {
  namespace: string;
  keys: number;
  indices: number;
  min_index: number;
  max_index: number;
  new_eth: number;
  new_btc: number;
  repeat: number;
  probe: number;
}

interface AddressRow {
  chain_code: string;
  rows: number;
  users: number;
  addresses: number;
  new_eth: number;
  new_btc: number;
  repeat: number;
}

interface DbCheck {
  ok: boolean;
  lines: string[];
  failures: string[];
  keys: KeyRow[];
  addresses: AddressRow[];
  newUsers: Record<'ETH' | 'BTC', { answered: number; unansweredInDb: number; inDb: number; sent: number }>;
}

async function checkDatabase(c: Client, tallies: Record<TargetName, TargetTally>, repeatUsers: AddressRecord[]): Promise<DbCheck> {
  const failures: string[] = [];
  const lines: string[] = [];
  const like = (p: string) => `'${p}%'`;
  const keys = (
    await c.query<KeyRow>(
      `SELECT namespace, count(*)::int AS keys, count(DISTINCT key_index)::int AS indices,
              min(key_index)::int AS min_index, max(key_index)::int AS max_index,
              count(*) FILTER (WHERE external_user_id LIKE ${like(PREFIX.newEth)})::int AS new_eth,
              count(*) FILTER (WHERE external_user_id LIKE ${like(PREFIX.newBtc)})::int AS new_btc,
              count(*) FILTER (WHERE external_user_id LIKE ${like(PREFIX.repeat)})::int AS repeat,
              count(*) FILTER (WHERE external_user_id LIKE ${like(PREFIX.probe)})::int AS probe
         FROM user_keys GROUP BY namespace ORDER BY namespace`,
    )
  ).rows;
  const addresses = (
    await c.query<AddressRow>(
      `SELECT chain_code, count(*)::int AS rows, count(DISTINCT external_user_id)::int AS users, count(DISTINCT address)::int AS addresses,
              count(*) FILTER (WHERE external_user_id LIKE ${like(PREFIX.newEth)})::int AS new_eth,
              count(*) FILTER (WHERE external_user_id LIKE ${like(PREFIX.newBtc)})::int AS new_btc,
              count(*) FILTER (WHERE external_user_id LIKE ${like(PREFIX.repeat)})::int AS repeat
         FROM addresses GROUP BY chain_code ORDER BY chain_code`,
    )
  ).rows;
  const evmMismatch = (
    await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM addresses a
         JOIN addresses e ON e.application_id = a.application_id AND e.external_user_id = a.external_user_id AND e.chain_code = 'ETH'
        WHERE a.chain_code IN ('BSC', 'POLYGON') AND (a.address <> e.address OR a.user_key_id <> e.user_key_id)`,
    )
  ).rows[0]!.n;

  const evm = keys.find((k) => k.namespace === 'evm');
  const btc = keys.find((k) => k.namespace.startsWith('btc:'));
  const chain = (code: string) => addresses.find((a) => a.chain_code === code);
  if (!evm || !btc) {
    failures.push(`user_keys namespaces ${keys.map((k) => k.namespace).join(', ')}: expected evm and btc:<network>`);
    return { ok: false, lines, failures, keys, addresses, newUsers: { ETH: zeroNew(), BTC: zeroNew() } };
  }
  const extra = keys.filter((k) => k !== evm && k !== btc);
  if (extra.length) failures.push(`unexpected key namespaces ${extra.map((k) => k.namespace).join(', ')}`);

  // Which new users got a key: every answered user, plus users whose request was sent as a run stopped.
  const newUsers = {} as DbCheck['newUsers'];
  for (const [code, ns, prefix, tally] of [
    ['ETH', 'evm', PREFIX.newEth, tallies['new ETH']],
    ['BTC', btc.namespace, PREFIX.newBtc, tallies['new BTC']],
  ] as const) {
    const inDb = new Set(
      (await c.query<{ u: string }>(`SELECT external_user_id AS u FROM user_keys WHERE namespace = $1 AND external_user_id LIKE ${like(prefix)}`, [ns])).rows.map((r) => r.u),
    );
    const missing = [...tally.users].filter((u) => !inDb.has(u));
    if (missing.length) failures.push(`${missing.length} new ${code} users were answered but have no ${ns} key (e.g. ${missing.slice(0, 3).join(', ')})`);
    const neverSent = [...inDb].filter((u) => !(Number(u.slice(prefix.length)) < tally.built));
    if (neverSent.length) failures.push(`${neverSent.length} ${ns} keys for new ${code} users this benchmark never sent (e.g. ${neverSent.slice(0, 3).join(', ')})`);
    const unanswered = [...inDb].filter((u) => !tally.users.has(u)).length;
    newUsers[code] = { answered: tally.users.size, unansweredInDb: unanswered, inDb: inDb.size, sent: tally.built };
  }

  const repeatEth = repeatUsers.filter((r) => r.chainCode === 'ETH').length;
  const repeatBtc = repeatUsers.length - repeatEth;
  const contiguous = (k: KeyRow) => (k.min_index === 0 && k.max_index === k.keys - 1 ? `indices 0..${fmtInt(k.max_index)}, none skipped` : `indices ${k.min_index}..${k.max_index}`);
  for (const [k, code, repeatCount, probeCount] of [
    [evm, 'ETH', repeatEth, 1],
    [btc, 'BTC', repeatBtc, 1],
  ] as const) {
    const nu = newUsers[code];
    const expected = nu.inDb + repeatCount + probeCount;
    const okIdx = k.keys === k.indices;
    const okCount = k.keys === expected && (code === 'ETH' ? k.new_eth : k.new_btc) === nu.inDb && k.repeat === repeatCount && k.probe === probeCount;
    const okOther = (code === 'ETH' ? k.new_btc : k.new_eth) === 0;
    lines.push(
      `${k.namespace} user_keys: ${fmtInt(k.keys)} rows, ${fmtInt(k.indices)} distinct key_index (${contiguous(k)}); ` +
        `expected ${fmtInt(nu.inDb)} new-${code} users + ${fmtInt(repeatCount)} pre-created + ${probeCount} probe = ${fmtInt(expected)}: ` +
        (okIdx && okCount && okOther ? 'OK' : 'MISMATCH'),
    );
    lines.push(
      `  new-${code} users: ${fmtInt(nu.answered)} answered with code 0 (${fmtInt(tallies[code === 'ETH' ? 'new ETH' : 'new BTC'].addresses.size)} distinct addresses)` +
        ` + ${fmtInt(nu.unansweredInDb)} created for requests in flight when a run stopped = ${fmtInt(nu.inDb)} (of ${fmtInt(nu.sent)} sent)`,
    );
    if (!okIdx) failures.push(`${k.namespace}: ${k.keys} keys but ${k.indices} distinct key indices`);
    if (!okCount) failures.push(`${k.namespace}: ${k.keys} keys (new ${code === 'ETH' ? k.new_eth : k.new_btc}, repeat ${k.repeat}, probe ${k.probe}), expected ${expected} (new ${nu.inDb}, repeat ${repeatCount}, probe ${probeCount})`);
    if (!okOther) failures.push(`${k.namespace}: keys for users of the other chain's new-user target`);
  }

  // Address rows: new ETH users have ETH, BSC and POLYGON rows (same address, same key) and no BTC row, and so on.
  const want: Record<string, { new_eth: number; new_btc: number; repeat: number }> = {
    ETH: { new_eth: newUsers.ETH.inDb, new_btc: 0, repeat: repeatEth },
    BSC: { new_eth: newUsers.ETH.inDb, new_btc: 0, repeat: repeatEth },
    POLYGON: { new_eth: newUsers.ETH.inDb, new_btc: 0, repeat: repeatEth },
    BTC: { new_eth: 0, new_btc: newUsers.BTC.inDb, repeat: repeatBtc },
  };
  let okRows = evmMismatch === 0 && addresses.every((a) => a.chain_code in want);
  for (const [code, w] of Object.entries(want)) {
    const a = chain(code);
    const ok = !!a && a.new_eth === w.new_eth && a.new_btc === w.new_btc && a.repeat === w.repeat && a.rows === a.users && a.rows === a.addresses;
    if (!ok) {
      okRows = false;
      failures.push(`addresses ${code}: ${a ? JSON.stringify(a) : 'no rows'}, expected ${JSON.stringify(w)} and one distinct address per user`);
    }
  }
  if (evmMismatch) failures.push(`${evmMismatch} BSC/POLYGON rows whose address or key differs from the user's ETH row`);
  lines.push(
    `address rows: ` +
      ['ETH', 'BSC', 'POLYGON', 'BTC'].map((code) => `${code} ${fmtInt(chain(code)?.rows ?? 0)}`).join(', ') +
      ` (each new-ETH user: ETH + BSC + POLYGON with one address and one key; one distinct address per user and chain): ${okRows ? 'OK' : 'MISMATCH'}`,
  );
  lines.push(`repeat runs: no key or address row added for the ${fmtInt(repeatUsers.length)} existing users: ${evm.repeat === repeatEth && btc.repeat === repeatBtc ? 'OK' : 'MISMATCH'}`);
  return { ok: failures.length === 0, lines, failures, keys, addresses, newUsers };
}

const zeroNew = () => ({ answered: 0, unansweredInDb: 0, inDb: 0, sent: 0 });

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  // BENCH_PGSS=1: the embedded cluster loads pg_stat_statements and the report lists the top statements
  if (process.env.BENCH_PGSS === '1') process.env.WCS_EMBEDDED_PG_STAT_STATEMENTS = '1';
  const s = readLoadSettings();
  const repeatCount = intEnv('BENCH_REPEAT_USERS', 2000, 2, 1_000_000);
  const ORDER = selectedTargets();
  const startedAt = Date.now();
  const machine = machineInfo();
  const dbMode = process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded Postgres (test cluster)';

  out(`address creates (signed POST ${CREATE_PATH}) vs signed GET ${CHAINS_PATH}, same server`);
  out(machineLine(machine));
  out(
    `load: autocannon ${AUTOCANNON_VERSION}, ${s.connections} connections, pipelining ${s.pipelining}, ` +
      `${s.seconds} s per run, ${s.warmupSeconds} s warm-up per target, ${s.rounds} rounds; database: ${dbMode}`,
  );
  out(`application chains: ${CHAINS.join(',')}; key store: software (TEST_MNEMONIC); repeat users: ${fmtInt(repeatCount)}`);
  if (ORDER.length !== ALL_TARGETS.length) out(`targets: ${ORDER.join(', ')} (BENCH_TARGETS)`);
  if (s.serverNodeArgs.length) out(`server node args: ${s.serverNodeArgs.join(' ')}`);

  const cleanup = new CleanupStack();
  let profileDir: string | null = null;
  try {
    // database + key store (the server needs one to start), all registered for cleanup
    const db = await prepareBenchStorage(cleanup);

    const creds = await createAppViaCli({ ...process.env, ...testEnv(db.url) }, 'bench-addresses', CHAINS);
    checkAborted();
    const server = await startApiServer({
      env: (port) => ({ ...process.env, ...testEnv(db.url, { PORT: String(port), WCS_LOG_LEVEL: 'warn', ...LIMITS_FAR_ABOVE_LOAD }) }),
      nodeArgs: s.serverNodeArgs,
      cpuProf: s.cpuProf,
      cleanup,
    });
    profileDir = server.profileDir;
    const port = server.port;

    for (const line of await probe(port, creds)) out(line);
    checkAborted();
    progress(`pre-creating ${fmtInt(repeatCount)} users for the repeat target`);
    const pre = await precreate(port, creds, repeatCount, 16);
    out(`pre-created ${fmtInt(repeatCount)} users (ETH and BTC alternately) for the repeat target: ${fmtInt(repeatCount / pre.seconds)} creates/s at 16 concurrent (plain http, new connection each)`);

    const stats = await openStatsConnection(db.url, cleanup, 'claims/tx and the database check');

    if (process.env.BENCH_PGSS === '1' && stats) await stats.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()');
    const tallies: Record<TargetName, TargetTally> = { baseline: newTally(), 'new ETH': newTally(), 'new BTC': newTally(), repeat: newTally() };
    const mk = (name: TargetName, child: Child, requests: () => AutocannonRequest[]): LoadTarget => ({ name, port, child, requests });
    const targets: Record<TargetName, LoadTarget> = {
      baseline: mk('baseline', server.child, () => [
        {
          method: 'GET',
          path: CHAINS_PATH,
          setupRequest: (req) => {
            tallies.baseline.built++;
            Object.assign(req.headers, signedHeaders(creds, 'GET', CHAINS_PATH));
            return req;
          },
        },
      ]),
      'new ETH': mk('new ETH', server.child, () => newUserRequests(creds, 'ETH', PREFIX.newEth, tallies['new ETH'])),
      'new BTC': mk('new BTC', server.child, () => newUserRequests(creds, 'BTC', PREFIX.newBtc, tallies['new BTC'])),
      repeat: mk('repeat', server.child, () => repeatRequests(creds, pre.records, tallies.repeat)),
    };

    const lo = { connections: s.connections, pipelining: s.pipelining };
    const one = async (name: TargetName, round: number | 'warm-up', seconds: number): Promise<RunRecord> => {
      const t = tallies[name];
      const [good0, bad0] = [t.good, t.bad];
      const d0 = await dbCounters(stats);
      const sampler = sampleActivity(stats);
      const r = await load(targets[name], round, seconds, lo);
      r.pgActivity = await sampler.stop();
      await sleep(1000); // settle: creates and nonce claims still in flight when the load stopped land now
      // claims/tx only where nonce claims are the only writes (a create is a write transaction of its own)
      const d1 = await dbCounters(stats);
      if (name === 'baseline' || name === 'repeat') r.db = dbDelta(d0, d1);
      if (name !== 'baseline') r.checks = { goodAnswers: t.good - good0, badAnswers: t.bad - bad0 };
      return r;
    };

    const warmups: RunRecord[] = [];
    if (s.warmupSeconds > 0) {
      for (const name of ORDER) {
        progress(`warm-up ${name} (${s.warmupSeconds} s)`);
        warmups.push(await one(name, 'warm-up', s.warmupSeconds));
      }
    }
    const runs: RunRecord[] = [];
    for (let round = 1; round <= s.rounds; round++) {
      for (const name of ORDER) {
        progress(`round ${round}/${s.rounds}: ${name} (${s.seconds} s)`);
        const r = await one(name, round, s.seconds);
        runs.push(r);
        progress(`  ${fmtInt(r.rps)} req/s, p50 ${fmtMs(r.latencyMs.p50)} ms, p99 ${fmtMs(r.latencyMs.p99)} ms, non-2xx ${r.non2xx}`);
      }
    }

    // Checks: autocannon's counters, the answers, then the database.
    const failures = [...warmups, ...runs].flatMap(problems);
    for (const name of ORDER) {
      const t = tallies[name];
      if (t.bad) failures.push(`${name}: ${t.bad} wrong code 0 answers, e.g. ${t.badSamples.join(' | ')}`);
    }
    for (const r of [...warmups, ...runs]) {
      // every response was a code 0 envelope (else autocannon counted it) and, for creates, the right record
      const good = r.checks?.goodAnswers as number | undefined;
      if (good !== undefined && good + r.non2xx + r.mismatches + ((r.checks?.badAnswers as number) ?? 0) !== r.requests) {
        failures.push(`${r.target} ${r.round === 'warm-up' ? 'warm-up' : 'round ' + r.round}: ${r.requests} responses but ${good} checked answers`);
      }
    }
    if (process.env.BENCH_PGSS === '1' && stats) {
      const r = await stats.query(`SELECT calls, rows, round(total_exec_time::numeric,1) AS ms, round((total_exec_time/calls)::numeric*1000,1) AS us_per_call, left(regexp_replace(query,'\\s+',' ','g'),110) AS q FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 15`);
      for (const x of r.rows) out(`PGSS ${x.calls} calls ${x.rows} rows ${x.ms} ms ${x.us_per_call} us/call  ${x.q}`);
    }
    let dbCheck: DbCheck | null = null;
    if (stats) {
      dbCheck = await checkDatabase(stats, tallies, pre.records);
      failures.push(...dbCheck.failures);
    } else {
      failures.push('database check not run (no stats connection)');
    }

    // Report.
    const sum = Object.fromEntries(
      ORDER.map((name) => {
        const rs = runs.filter((r) => r.target === name);
        return [name, { ...summarise(rs), postgresCpuUsPerRequestMedian: medianOrNull(rs.map((r) => r.postgresCpuUsPerRequest)) }];
      }),
    ) as Record<TargetName, ReturnType<typeof summarise> & { postgresCpuUsPerRequestMedian: number | null }>;
    const base = sum.baseline.rpsMedian;
    const ratio = (name: TargetName) => (sum[name].rpsMedian / base) * 100;
    const perRound = (name: TargetName) =>
      Array.from({ length: s.rounds }, (_, i) => {
        const b = runs.find((r) => r.target === 'baseline' && r.round === i + 1)!;
        const x = runs.find((r) => r.target === name && r.round === i + 1)!;
        return (x.rps / b.rps) * 100;
      });

    out('');
    out(
      table(
        ['round', 'target', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'bad', 'cpu client', 'cpu server', 'cpu pg', 'cpu other', 'server µs/req', 'pg µs/req', 'claims/tx', 'pg conns', 'active', 'lock wait', 'idle in tx'],
        [...warmups, ...runs].map((r) => [
          String(r.round),
          r.target,
          fmtInt(r.rps),
          fmtMs(r.latencyMs.p50),
          fmtMs(r.latencyMs.p99),
          fmtInt(r.requests),
          String(r.non2xx),
          String(r.errors),
          String(r.mismatches + ((r.checks?.badAnswers as number | undefined) ?? 0)),
          fmtPct(r.cpuPercent.client),
          fmtPct(r.cpuPercent.target),
          fmtPct(r.cpuPercent.postgres),
          fmtPct(r.cpuPercent.other),
          fmtUs(r.targetCpuUsPerRequest),
          fmtUs(r.postgresCpuUsPerRequest),
          r.db ? r.db.claimsPerTransaction.toFixed(1) : '-',
          r.pgActivity ? r.pgActivity.connections.toFixed(1) : '-',
          r.pgActivity ? r.pgActivity.active.toFixed(1) : '-',
          r.pgActivity ? r.pgActivity.lockWait.toFixed(1) : '-',
          r.pgActivity ? r.pgActivity.idleInTransaction.toFixed(1) : '-',
        ]),
        [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      ),
    );
    out('');
    out(
      table(
        ['target', 'median req/s', 'p50 ms (median)', 'p99 ms (median)', 'server µs/req', 'pg µs/req', 'vs baseline', 'per round', 'goal', 'result'],
        ORDER.map((name) => {
          const x = sum[name];
          const goal = name === 'baseline' ? null : GOALS[name];
          return [
            name,
            fmtInt(x.rpsMedian),
            fmtMs(x.latencyP50MsMedian),
            fmtMs(x.latencyP99MsMedian),
            fmtUs(x.targetCpuUsPerRequestMedian),
            fmtUs(x.postgresCpuUsPerRequestMedian),
            name === 'baseline' ? '100 %' : `${ratio(name).toFixed(1)} %`,
            name === 'baseline' ? '-' : perRound(name).map((p) => p.toFixed(1)).join(', '),
            goal === null ? '-' : `>= ${goal} %`,
            goal === null ? '-' : ratio(name) >= goal ? 'met' : 'NOT MET',
          ];
        }),
        [false, true, true, true, true, true, true, false, false, false],
      ),
    );
    out('');
    out(`baseline: signed GET ${CHAINS_PATH} (${CHAINS.length} chains). new ETH: a new user per request, one key derivation (m/44'/60'/{app}'/0/i)`);
    out(`  and 3 address rows (ETH, BSC, POLYGON: the EVM namespace rule); new BTC: one key (m/84'/1'/{app}'/0/i), 1 row; repeat: existing users, no write`);
    out(`  but the nonce. µs/req columns are CPU time per request of the server process and of Postgres; "bad" = wrong code 0 answers + non-code-0 bodies;`);
    out(`  pg conns / active / lock wait / idle in tx: mean number of the server's Postgres connections in that state (pg_stat_activity every 250 ms).`);
    if (dbCheck) {
      out('');
      out('database check:');
      for (const l of dbCheck.lines) out(`  ${l}`);
    }
    out('');
    const goalsMet = (Object.keys(GOALS) as Array<keyof typeof GOALS>).filter((name) => ORDER.includes(name)).map((name) => ({ name, goal: GOALS[name], ratio: ratio(name), met: ratio(name) >= GOALS[name] }));
    for (const g of goalsMet) out(`goal ${g.name} >= ${g.goal}% of baseline: ${g.ratio.toFixed(1)} %, ${g.met ? 'met' : 'not met'}`);
    const noisy = noiseWarning(runs, NOISE_WARN_PERCENT);
    if (noisy) out(noisy.line);
    printFailures(out, failures);

    const resultsFile = writeResults('address-create.json', {
      benchmark: 'address-create',
      description: `signed POST ${CREATE_PATH} (new ETH, new BTC, repeat) req/s vs signed GET ${CHAINS_PATH} req/s on the same server`,
      date: new Date().toISOString(),
      machine,
      settings: { ...s, repeatUsers: repeatCount, autocannon: AUTOCANNON_VERSION, database: dbMode, chains: CHAINS },
      warmups,
      runs,
      summary: Object.fromEntries(
        ORDER.map((name) => [
          name,
          {
            ...sum[name],
            ratioPercent: Math.round(ratio(name) * 10) / 10,
            perRoundRatioPercent: perRound(name).map((p) => Math.round(p * 10) / 10),
            ...(name === 'baseline' ? {} : { goalPercent: GOALS[name], goalMet: ratio(name) >= GOALS[name] }),
          },
        ]),
      ),
      database: dbCheck ? { keys: dbCheck.keys, addresses: dbCheck.addresses, newUsers: dbCheck.newUsers } : null,
      precreate: { users: repeatCount, seconds: pre.seconds },
      correctness: { ok: failures.length === 0, failures },
      noisyRuns: (noisy?.runs ?? []).map((r) => ({ target: r.target, round: r.round, otherCpuPercent: r.cpuPercent.other })),
      ...(profileDir ? { cpuProfileDir: path.relative(process.cwd(), profileDir) } : {}),
    });
    out(`results: ${resultsFile}`);

    if (failures.length) return 1;
    if (s.enforceGoal && goalsMet.some((g) => !g.met)) return 1;
    return 0;
  } finally {
    await cleanup.run();
    printProfiles(profileDir, startedAt);
  }
}

runMain(main);
