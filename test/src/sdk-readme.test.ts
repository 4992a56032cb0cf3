/**
 * The examples of sdk/README.md, run as written, so that the README cannot rot: every ```ts block
 * is tagged `example=<name>`; each is extracted, type-checked against the published declarations
 * (TypeScript, NodeNext resolution of `@wcs/sdk` through its package.json exports), compiled to an
 * ES module and run with node against a real service (real Postgres): the client examples as
 * scripts, the webhook examples as the merchant's receiver the service delivers real callbacks to
 * (express as written; the Next.js route handler served through a tiny Request/Response bridge).
 *
 * They run as a merchant meets the SDK: @wcs/sdk packed by `npm pack` from a copy of sdk/ (its
 * prepack build run there: scripts/lib/pack.js, as scripts/pack-check.js packs it), installed from
 * that tarball with express and the types the examples use into an empty project in the system's
 * temporary folder, outside the repository (no workspace link, no NODE_PATH, no node_modules of the
 * repository up the tree); the examples are type-checked, compiled and run in that project. Only
 * TypeScript itself (the compiler and its lib files) comes from the repository.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';
import { enqueueCallback, TOKENS, type BizType, type CallbackService, type CreatedApplication } from '@wcs/server';
import { startTestService, type TestService, TEST_ACTOR } from '@wcs/server/testing';
import { pollUntil } from './support/expect';

const ROOT = path.resolve(__dirname, '../..');
const README = path.join(ROOT, 'sdk', 'README.md');

/** scripts/lib/pack.js (CommonJS, shared with scripts/pack-check.js): what this file uses of it. */
interface PackLib {
  childEnv(): NodeJS.ProcessEnv;
  run(cmd: string, args: string[], cwd: string): Promise<string>;
  packSdk(tmp: string, dest: string): Promise<{ name: string; version: string; file: string; files: string[] }>;
  npm: string;
  /** The commands running now, each its own process group. */
  children: Set<ChildProcess>;
}
const packLib = require(path.join(ROOT, 'scripts', 'lib', 'pack.js')) as PackLib;

/** What the examples import besides @wcs/sdk, at the versions the repository's lock file installs (the npm cache has them). */
const EXAMPLE_DEPS = ['express', '@types/express', '@types/node'].map((name) => {
  const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  return `${name}@${version}`;
});

/** True when `file` (its real path) lies inside `dir`. */
const inside = (file: string, dir: string) => fs.realpathSync(file).startsWith(fs.realpathSync(dir) + path.sep);

/**
 * Packs @wcs/sdk and installs the tarball, with EXAMPLE_DEPS, into `<tmp>/project`, a new empty
 * project; resolves with the project's folder and the tarball's name once `@wcs/sdk` resolves from
 * there to the installed copy (not a link back into the repository).
 */
async function installPackedSdk(tmp: string): Promise<{ project: string; tarball: string }> {
  const packs = path.join(tmp, 'packs');
  fs.mkdirSync(packs);
  let sdk: Awaited<ReturnType<PackLib['packSdk']>>;
  try {
    sdk = await packLib.packSdk(tmp, packs);
  } catch (e) {
    throw new Error(`packing @wcs/sdk (npm pack of a copy of sdk/, its prepack build) failed: ${(e as Error).message}`);
  }
  const project = path.join(tmp, 'project');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'wcs-sdk-readme-merchant', version: '1.0.0', private: true }, null, 2));
  try {
    await packLib.run(packLib.npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', sdk.file, ...EXAMPLE_DEPS], project);
  } catch (e) {
    throw new Error(`installing the packed @wcs/sdk (${path.basename(sdk.file)}) and ${EXAMPLE_DEPS.join(', ')} into the empty project ${project} failed: ${(e as Error).message}`);
  }
  const installed = path.join(project, 'node_modules', '@wcs', 'sdk');
  if (fs.lstatSync(installed).isSymbolicLink()) throw new Error(`${installed} is a link, not the installed tarball`);
  return { project, tarball: path.basename(sdk.file) };
}

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
  let tmp: string;
  /** The merchant's project: the packed SDK installed, the examples written, compiled and run there. */
  let dir: string;
  let tarball: string;
  let examples: Example[];
  const children: ChildProcess[] = [];

  const file = (name: string) => path.join(dir, `${name}.mjs`);
  const env = (): NodeJS.ProcessEnv => ({
    ...packLib.childEnv(),
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
    // outside the repository: nothing resolves from its node_modules by walking up the tree
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-sdk-readme-')));
    if (inside(tmp, ROOT)) throw new Error(`the temporary folder ${tmp} is inside the repository ${ROOT}: set TMPDIR elsewhere`);
    // the pack and install (npm, tsc) while the service starts; both settle before a failure is thrown (after() stops the service)
    const [installed, started] = await Promise.allSettled([
      installPackedSdk(tmp),
      (async () => {
        svc = await startTestService({ env: { WCS_CALLBACK_POLL_MS: '50' } });
        app = await svc.createApp({ name: 'readme merchant', chains: ['ETH', 'BTC'] });
      })(),
    ]);
    if (installed.status === 'rejected') throw installed.reason;
    if (started.status === 'rejected') throw started.reason;
    dir = installed.value.project;
    tarball = installed.value.tarball;
  });

  after(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    // a pack or install still running (a before() that timed out): its whole process group
    for (const c of packLib.children) {
      try {
        process.kill(-c.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await svc?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('@wcs/sdk, express and their types resolve from the merchant project to what was installed there (the packed SDK, not the workspace)', () => {
    const req = (spec: string) => require.resolve(spec, { paths: [dir] });
    for (const spec of ['@wcs/sdk', '@wcs/sdk/package.json', 'express', '@types/express/package.json', '@types/node/package.json']) {
      expect(inside(req(spec), dir), `${spec} resolves to ${req(spec)}, outside ${dir}`).to.equal(true);
    }
    expect(path.dirname(req('@wcs/sdk/package.json'))).to.equal(path.join(dir, 'node_modules', '@wcs', 'sdk'));
    const lock = JSON.parse(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string; link?: boolean }> };
    expect(lock.packages['node_modules/@wcs/sdk']?.link, 'installed, not linked').to.equal(undefined);
    expect(lock.packages['node_modules/@wcs/sdk']?.resolved, 'installed from the tarball just packed').to.match(new RegExp(`^file:.*${tarball.replace(/[.]/g, '\\.')}$`));
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
      strict: true, noEmit: true, types: ['node'], esModuleInterop: true, skipLibCheck: true, typeRoots: [path.join(dir, 'node_modules', '@types')],
    };
    const program = ts.createProgram(examples.map((e) => path.join(dir, `${e.name}.mts`)), options);
    const diags = ts.getPreEmitDiagnostics(program);
    const text = ts.formatDiagnostics(diags, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' });
    expect(diags.length, text).to.equal(0);
    // the SDK resolved to its ESM declarations through the exports map
    const sdkFile = program.getSourceFiles().map((s) => s.fileName).find((f) => f.includes(`${path.sep}sdk${path.sep}dist${path.sep}`));
    expect(sdkFile, 'the examples import the built @wcs/sdk').to.match(/sdk\/dist\/esm\//);
    // ... the packed one, installed in the project; and nothing but TypeScript's own lib files comes from elsewhere (the repository)
    expect(sdkFile!.startsWith(path.join(dir, 'node_modules', '@wcs', 'sdk', 'dist', 'esm') + path.sep), sdkFile).to.equal(true);
    const tsLib = path.dirname(require.resolve('typescript/lib/lib.d.ts'));
    const outside = program.getSourceFiles().map((s) => s.fileName).filter((f) => !f.startsWith(dir + path.sep) && !f.startsWith(tsLib + path.sep));
    expect(outside, 'declarations read from outside the merchant project').to.deep.equal([]);
    expect(program.getSourceFiles().some((s) => s.fileName.startsWith(path.join(dir, 'node_modules', '@types', 'express') + path.sep)), 'express types from the project').to.equal(true);
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
