/**
 * The examples of sdk/README.md, run as written, so that the README cannot rot: every ```ts block
 * is tagged `example=<name>`; each is extracted, type-checked against the published declarations
 * (TypeScript, NodeNext resolution of `@wcs/sdk` through its package.json exports), compiled to an
 * ES module and run with node against a real service (real Postgres): the client examples as
 * scripts, the webhook examples as the merchant's receiver the service delivers real callbacks to
 * (express as written; the Next.js route handler served through a tiny Request/Response bridge).
 */
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { enqueueCallback, TOKENS, type BizType, type CallbackService, type CreatedApplication } from '@wcs/server';
import { startTestService, type TestService, TEST_ACTOR } from '@wcs/server/testing';
import { pollUntil } from './support/expect';

const ROOT = path.resolve(__dirname, '../..');
const README = path.join(ROOT, 'sdk', 'README.md');

interface Example {
  name: string;
  code: string;
  line: number;
}

/** The tagged ```ts blocks of the README; an untagged ts block is an error (it would go untested). */
export function readmeExamples(markdown: string): Example[] {
  const out: Example[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^```(ts|typescript|js|javascript)\b(.*)$/.exec(lines[i]!);
    if (!m) continue;
    const tag = /\bexample=([\w-]+)/.exec(m[2]!);
    if (!tag) throw new Error(`sdk/README.md:${i + 1}: a \`\`\`${m[1]} block without example=<name> would not be tested`);
    const start = i + 1;
    let j = start;
    while (j < lines.length && !/^```\s*$/.test(lines[j]!)) j++;
    out.push({ name: tag[1]!, code: lines.slice(start, j).join('\n') + '\n', line: i + 1 });
    i = j;
  }
  return out;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('sdk/README.md examples, compiled and run against the real service', function () {
  this.timeout(120_000);
  let svc: TestService;
  let app: CreatedApplication;
  let dir: string;
  let examples: Example[];
  const children: ChildProcess[] = [];

  const file = (name: string) => path.join(dir, `${name}.mjs`);
  const env = (): NodeJS.ProcessEnv => ({
    ...process.env,
    WCS_BASE_URL: svc.url,
    WCS_API_KEY: app.apiKey,
    WCS_API_SECRET: app.apiSecret,
    WCS_CURSOR_FILE: path.join(dir, 'cursor.txt'),
    PORT: '0',
  });

  function runScript(name: string): Promise<Run> {
    return new Promise((resolve) => {
      const c = spawn(process.execPath, [file(name)], { env: env(), cwd: dir });
      let stdout = '';
      let stderr = '';
      c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      c.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** Starts a long-running example (a receiver); resolves with its port once it prints it. */
  async function startServer(script: string): Promise<{ port: number; output: () => string }> {
    const c = spawn(process.execPath, [script], { env: env(), cwd: dir });
    children.push(c);
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const r = await pollUntil(async () => /port: (\d+)/.exec(stdout), (m) => m !== null || c.exitCode !== null, 15_000, 20);
    if (!r.result) throw new Error(`${script} did not start: ${stdout}\n${stderr}`);
    return { port: Number(r.result[1]), output: () => stdout + stderr };
  }

  const callbacks = () => svc.service.storage.container.resolve<CallbackService>(TOKENS.CallbackService);
  const enqueue = (bizType: BizType, bizId: number, payload: Record<string, unknown>) => {
    const s = svc.service.storage.database.sequelize;
    return s.transaction((t) => enqueueCallback(s, t, { applicationId: app.id, bizType, bizId, payload }));
  };
  const pointCallbacksAt = async (url: string) => {
    for (const b of ['RECHARGE', 'WITHDRAW'] as const) await svc.service.storage.applications.setCallback(TEST_ACTOR, app.id, b, url);
  };
  const taskStatus = async (id: number) => {
    const [row] = (await svc.service.storage.database.sequelize.query('SELECT status, last_error FROM callback_tasks WHERE id = $1', { bind: [id] }))[0] as Array<{ status: string; last_error: string | null }>;
    return row;
  };
  const delivered = async (ids: number[]) => {
    const r = await pollUntil(async () => Promise.all(ids.map(taskStatus)), (rows) => rows.every((x) => x?.status === 'SUCCESS'), 20_000, 50);
    expect(r.ok, `tasks ${ids.join(', ')}: ${JSON.stringify(r.result)}`).to.equal(true);
  };
  const waitOutput = async (output: () => string, re: RegExp) => {
    const r = await pollUntil(async () => output(), (o) => re.test(o), 10_000, 20);
    expect(r.ok, `waiting for ${re} in:\n${r.result}`).to.equal(true);
  };
  const rechargeEvent = (id: number, address: string, txStatus: string) => ({
    event: 'recharge', id, applicationId: app.id, chainId: 102, chainTokenId: 10200, address, amount: '0.25',
    txHash: '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060', blockHeight: 7412345, txStatus,
    confirmations: txStatus === 'SETTLED' ? -1 : 3, minConfirmations: txStatus === 'SETTLED' ? -1 : 3,
  });

  before(async () => {
    examples = readmeExamples(fs.readFileSync(README, 'utf8'));
    // the examples run as ES modules, i.e. on the SDK's ESM build, which the root `tsc -b` does not make (sdk's npm run build does):
    // build it from the current sources (tsconfig.esm.json, then the {"type":"module"} marker)
    const sdk = path.join(ROOT, 'sdk');
    for (const args of [[require.resolve('typescript/bin/tsc'), '-p', path.join(sdk, 'tsconfig.esm.json')], [path.join(sdk, 'scripts', 'esm-package.mjs')]]) {
      const b = spawnSync(process.execPath, args, { cwd: sdk, encoding: 'utf8' });
      if (b.status !== 0) throw new Error(`building the SDK's ESM output failed: ${b.stdout}${b.stderr}`);
    }
    // under the repository, so that `@wcs/sdk`, express and their types resolve from its node_modules
    fs.mkdirSync(path.join(ROOT, 'test', 'dist'), { recursive: true });
    dir = fs.mkdtempSync(path.join(ROOT, 'test', 'dist', 'readme-'));
    svc = await startTestService({ env: { WCS_CALLBACK_POLL_MS: '50' } });
    app = await svc.createApp({ name: 'readme merchant', chains: ['ETH', 'BTC'] });
  });

  after(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await svc?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('every ts block is a tagged example, with a unique name', () => {
    const names = examples.map((e) => e.name);
    expect(names).to.deep.equal(['client', 'withdraw', 'pagination', 'express', 'express-before', 'nextjs', 'dedupe', 'feed']);
    expect(new Set(names).size).to.equal(names.length);
  });

  it('the examples type-check against the published declarations (strict), and compile', () => {
    for (const e of examples) fs.writeFileSync(path.join(dir, `${e.name}.mts`), e.code);
    const options: ts.CompilerOptions = {
      module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, lib: ['lib.es2022.d.ts'],
      strict: true, noEmit: true, types: ['node'], esModuleInterop: true, skipLibCheck: true, typeRoots: [path.join(ROOT, 'node_modules', '@types')],
    };
    const program = ts.createProgram(examples.map((e) => path.join(dir, `${e.name}.mts`)), options);
    const diags = ts.getPreEmitDiagnostics(program);
    const text = ts.formatDiagnostics(diags, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' });
    expect(diags.length, text).to.equal(0);
    // the SDK resolved to its ESM declarations through the exports map
    const sdkFile = program.getSourceFiles().map((s) => s.fileName).find((f) => f.includes(`${path.sep}sdk${path.sep}dist${path.sep}`));
    expect(sdkFile, 'the examples import the built @wcs/sdk').to.match(/sdk\/dist\/esm\//);
    for (const e of examples) {
      const js = ts.transpileModule(e.code, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 }, fileName: `${e.name}.mts` }).outputText;
      fs.writeFileSync(file(e.name), js);
    }
  });

  it('client: chains, an idempotent address, validation, a typed refusal', async () => {
    const r = await runScript('client');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^chains: (ETH,BTC|BTC,ETH)$/m);
    expect(r.stdout).to.match(/^deposit address: 0x[0-9a-fA-F]{40}$/m);
    expect(r.stdout).to.match(/^valid: true canonical: 0x[0-9a-fA-F]{40}$/m);
    expect(r.stdout).to.match(/^refused: CHAIN_UNKNOWN /m);
    // run twice: the same address (idempotent)
    const again = await runScript('client');
    expect(/deposit address: (\S+)/.exec(again.stdout)![1]).to.equal(/deposit address: (\S+)/.exec(r.stdout)![1]);
  });

  it('withdraw: a business refusal, typed (no chain node here: 1007004001)', async () => {
    const r = await runScript('withdraw');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal('withdrawal refused: 1007004001 WITHDRAW_CHAIN_UNAVAILABLE');
  });

  it('pagination: one page, then every confirmed deposit', async () => {
    const [addr] = (await svc.service.storage.database.sequelize.query(`SELECT id, address FROM addresses WHERE application_id = $1 AND external_user_id = 'user-42' AND chain_id = 102`, { bind: [app.id] }))[0] as Array<{ id: string; address: string }>;
    await svc.service.storage.database.sequelize.query(
      `INSERT INTO recharges (application_id, chain_id, chain_token_id, address_id, external_user_id, address, from_address, tx_hash, position, amount,
                              block_height, block_hash, tx_status, confirmations, min_confirmations, confirmed_at)
       SELECT $1, c.id, t.id, $2, 'user-42', $3, '0x742d35Cc6634C0532925a3b844Bc454e4438f44e', '0x' || repeat('ab', 32), -1, 250000000000000000,
              7412345, '0x' || repeat('cd', 32), 'CONFIRMED', c.confirmations, c.confirmations, now()
         FROM chains c JOIN chain_tokens t ON t.chain_id = c.id AND t.contract IS NULL
        WHERE c.code = 'ETH' AND c.environment = 'test'`,
      { bind: [app.id, addr!.id, addr!.address] },
    );
    const r = await runScript('pagination');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^tasks: 0 of 0$/m);
    expect(r.stdout).to.match(/^deposit \d+: 0\.25 ETH for user-42$/m);
    expect(r.stdout).to.match(/^confirmed deposits: 1$/m);
  });

  it('express (express.json with captureRawBody): the service delivers test, recharge and withdraw callbacks; each verified, handled once, ACKed', async () => {
    const { port, output } = await startServer(file('express'));
    await pointCallbacksAt(`http://127.0.0.1:${port}/wcs/callbacks`);
    const address = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';
    const tasks = [
      await callbacks().sendTest(TEST_ACTOR, app.id, 'RECHARGE'),
      await enqueue('RECHARGE', 901, rechargeEvent(901, address, 'CONFIRMED')),
      await enqueue('RECHARGE', 901, rechargeEvent(901, address, 'SETTLED')),
      await enqueue('WITHDRAW', 77, { event: 'withdraw', id: 77, applicationId: app.id, appOrderNo: 'order-1001', chainId: 102, chainTokenId: 10200, toAddress: address, amount: '0.1', txHash: '0xabc', status: 'SUCCESS' }),
    ];
    await delivered(tasks.map((t) => Number(t.id)));
    await waitOutput(output, /order order-1001 is SUCCESS/);
    expect(output()).to.include('test event for RECHARGE');
    expect(output()).to.include('deposit 901 is CONFIRMED');
    expect(output()).to.include(`credit 0.25 of token 10200 to ${address}`);
    // the SETTLED callback again (a resend): ACKed by the seen-set, not credited twice
    await callbacks().resend(TEST_ACTOR, app.id, Number(tasks[2]!.id));
    const r = await pollUntil(async () => (await svc.service.storage.database.sequelize.query('SELECT count(*)::int AS n FROM callback_attempts WHERE callback_task_id = $1 AND accepted', { bind: [Number(tasks[2]!.id)] }))[0] as Array<{ n: number }>, (rows) => rows[0]!.n === 2, 20_000, 50);
    expect(r.ok).to.equal(true);
    expect(output().match(/credit 0\.25/g)).to.have.length(1);
  });

  it('express-before (the route mounted before express.json()): verified and ACKed', async () => {
    const { port, output } = await startServer(file('express-before'));
    await pointCallbacksAt(`http://127.0.0.1:${port}/wcs/callbacks`);
    const t = await callbacks().sendTest(TEST_ACTOR, app.id, 'WITHDRAW');
    await delivered([Number(t.id)]);
    await waitOutput(output, /verified test \(nonce [0-9a-f]{32}\)/);
  });

  it('nextjs (the route handler, served by a Request/Response bridge): verified and ACKed', async () => {
    const bridge = path.join(dir, 'nextjs-server.mjs');
    fs.writeFileSync(bridge, `
      import http from 'node:http';
      import { POST } from './nextjs.mjs';
      const server = http.createServer(async (req, res) => {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        const request = new Request('http://' + req.headers.host + req.url, { method: req.method, headers: req.headers, body: req.method === 'POST' ? Buffer.concat(chunks) : undefined });
        const response = await POST(request);
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      });
      server.listen(0, '127.0.0.1', () => console.log('listening on', server.address()));
    `);
    const { port, output } = await startServer(bridge);
    await pointCallbacksAt(`http://127.0.0.1:${port}/api/wcs/callbacks?from=wcs`);
    const t = await enqueue('RECHARGE', 902, rechargeEvent(902, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', 'SETTLED'));
    await delivered([Number(t.id)]);
    await waitOutput(output, /received recharge, key recharge:902:SETTLED/);
  });

  it('dedupe: the key, and one handling for three deliveries', async () => {
    const r = await runScript('dedupe');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.trim().split('\n')).to.deep.equal([
      'key: recharge:7:SETTLED',
      'crediting 0.25 once',
      'delivery 1: handled',
      'delivery 2: duplicate, acknowledged',
      'delivery 3: duplicate, acknowledged',
    ]);
  });

  it('feed: catches up on every event the webhooks carried, saves the cursor; the next run finds nothing new, then only what is new', async () => {
    const [{ n }] = (await svc.service.storage.database.sequelize.query('SELECT count(*)::int AS n FROM callback_tasks WHERE application_id = $1', { bind: [app.id] }))[0] as Array<{ n: number }>;
    const first = await pollUntil(() => runScript('feed'), (r) => r.stdout.includes(`caught up: ${n} events`), 10_000, 100);
    expect(first.result.code, first.result.stderr).to.equal(0);
    expect(first.ok, first.result.stdout).to.equal(true);
    expect(first.result.stdout).to.match(/^RECHARGE recharge:901:SETTLED$/m);
    expect(first.result.stdout).to.match(/^WITHDRAW withdraw:order-1001:SUCCESS$/m);
    expect(first.result.stdout).to.match(/^RECHARGE test event \d+$/m);
    expect(fs.readFileSync(path.join(dir, 'cursor.txt'), 'utf8')).to.match(/^[A-Za-z0-9_-]+$/);
    const second = await runScript('feed');
    expect(second.stdout.trim()).to.equal('caught up: 0 events');
    await enqueue('WITHDRAW', 78, { event: 'withdraw', id: 78, applicationId: app.id, appOrderNo: 'order-1002', chainId: 102, chainTokenId: 10200, toAddress: '0xabc', amount: '1', txHash: '', status: 'FAILED' });
    const third = await pollUntil(() => runScript('feed'), (r) => r.stdout.includes('caught up: 1 events'), 10_000, 100);
    expect(third.ok, third.result.stdout).to.equal(true);
    expect(third.result.stdout).to.match(/^WITHDRAW withdraw:order-1002:FAILED$/m);
  });
});
