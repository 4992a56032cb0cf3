/**
 * `wcs --json` makes every error one JSON document on stdout, `{"error": {"code", "name", "msg"}}`,
 * with the documented exit code: 2 for usage errors (commander's own, raised before a command's
 * --json is parsed, and bad option values), 1 for runtime errors. `wcs --version` prints the
 * server package's version.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'chai';
import * as pg from 'pg';
import { createTestDatabase, testEnv, type TestDatabase } from '@wcs/server/testing';
import { Codes } from './support/expect';
import { cliJson, describeCli, runCli } from './support/processes';

type Env = Record<string, string | undefined>;

describe('wcs --json errors, exit codes and --version', function () {
  let db: TestDatabase;
  let env: Env;

  before(async function () {
    db = await createTestDatabase();
    env = { ...process.env, ...testEnv(db.url) };
  });
  after(async function () {
    if (db) await db.drop();
  });

  /** Runs the command, asserts the exit code, an empty stderr and one JSON error document; returns error. */
  async function jsonError(args: string[], exit: number): Promise<{ code: string | number | null; name: string; msg: string }> {
    const r = await runCli(args, env);
    expect(r.code, describeCli(args, r)).to.equal(exit);
    expect(r.stderr, describeCli(args, r)).to.equal('');
    const out = cliJson(args, r);
    expect(Object.keys(out.error).sort(), describeCli(args, r)).to.deep.equal(['code', 'msg', 'name']);
    return out.error;
  }

  it('usage errors (unknown command, unknown option, missing option or argument) are JSON with exit 2', async function () {
    expect(await jsonError(['bogus', '--json'], 2)).to.deep.equal({ code: 'commander.unknownCommand', name: 'UsageError', msg: "unknown command 'bogus'" });
    expect(await jsonError(['app', 'list', '--bogus', '--json'], 2)).to.deep.equal({ code: 'commander.unknownOption', name: 'UsageError', msg: "unknown option '--bogus'" });
    expect(await jsonError(['app', 'show', '--json'], 2)).to.deep.equal({ code: 'commander.missingMandatoryOptionValue', name: 'UsageError', msg: "required option '--app <id>' not specified" });
    expect(await jsonError(['withdraw', 'approve', '--json'], 2)).to.include({ code: 'commander.missingArgument', name: 'UsageError' });
    expect(await jsonError(['app', 'list', 'extra', '--json'], 2)).to.include({ code: 'commander.excessArguments', name: 'UsageError' });
  });

  it('option value errors (choices, a bad id, a bad argument) are JSON with exit 2', async function () {
    const env1 = await jsonError(['app', 'create', '--name', 'X', '--env', 'prod', '--json'], 2);
    expect(env1).to.include({ code: 'commander.invalidArgument', name: 'UsageError' });
    expect(env1.msg).to.include('--env').and.to.include('prod').and.to.include('test, live');
    const id = await jsonError(['app', 'show', '--app', 'abc', '--json'], 2);
    expect(id).to.include({ code: 'commander.invalidArgument', name: 'UsageError' });
    expect(id.msg).to.include('--app').and.to.include('abc');
    expect(await jsonError(['withdraw', 'allowlist-only', 'maybe', '--app', '1', '--json'], 2)).to.deep.equal({
      code: 'commander.invalidArgument', name: 'UsageError', msg: 'allowlist-only: say on or off, got "maybe"',
    });
    expect(await jsonError(['start', '--api-only', '--workers-only', '--json'], 2)).to.include({ code: 'commander.conflictingOption' });
  });

  it('without --json a usage error is commander\'s text on stderr, stdout empty, exit 2', async function () {
    const args = ['app', 'show', '--app', 'abc'];
    const r = await runCli(args, env);
    expect(r.code, describeCli(args, r)).to.equal(2);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.match(/^error: option '--app <id>' argument 'abc' is invalid/);
  });

  it('runtime errors are JSON with the catalogue code and exit 1; without --json one line, no stack', async function () {
    expect(await jsonError(['app', 'show', '--app', '999', '--json'], 1)).to.include({ code: Codes.APPLICATION_NOT_FOUND, name: 'APPLICATION_NOT_FOUND' });
    const bad = await jsonError(['app', 'create', '--name', 'X', '--env', 'test', '--chains', 'NOPE', '--json'], 1);
    expect(bad).to.include({ code: Codes.CHAIN_UNKNOWN });
    const args = ['app', 'show', '--app', '999'];
    const r = await runCli(args, env);
    expect(r.code, describeCli(args, r)).to.equal(1);
    expect(r.stdout).to.equal('');
    expect(r.stderr.trim().split('\n'), r.stderr).to.have.length(1);
    expect(r.stderr).to.match(/^wcs: .*999/);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT count(*)::int AS n FROM applications');
      expect(rows[0].n, 'a refused command created nothing').to.equal(0);
    } finally {
      await client.end();
    }
  });

  it('--chains errors name the valid codes of the environment; EOS without a deposit account cannot be enabled (create, set-chains), nothing changes', async function () {
    const testCodes = (cliJson(['chains'], await runCli(['chains', '--env', 'test', '--json'], env)) as Array<{ code: string }>).map((c) => c.code).sort();
    expect(testCodes).to.include.members(['BTC', 'EOS', 'ETH']);
    const unknown = await jsonError(['app', 'create', '--name', 'X', '--env', 'test', '--chains', 'ETH,NOPE', '--json'], 1);
    expect(unknown).to.include({ code: Codes.CHAIN_UNKNOWN });
    expect(unknown.msg).to.include(`NOPE (valid: ${testCodes.join(', ')})`);
    const eos = await jsonError(['app', 'create', '--name', 'X', '--env', 'test', '--chains', 'ETH,EOS', '--json'], 1);
    expect(eos).to.include({ code: Codes.CHAIN_NOT_CONFIGURED, name: 'CHAIN_NOT_CONFIGURED' });
    expect(eos.msg).to.match(/^EOS cannot be enabled: .*depositAccount/);
    const created = cliJson([], await runCli(['app', 'create', '--name', 'Y', '--env', 'test', '--chains', 'ETH', '--json'], env));
    const refused = await jsonError(['app', 'set-chains', '--app', String(created.id), '--chains', 'EOS,ETH', '--json'], 1);
    expect(refused).to.include({ code: Codes.CHAIN_NOT_CONFIGURED });
    const unknown2 = await jsonError(['app', 'set-chains', '--app', String(created.id), '--chains', 'ETHX', '--json'], 1);
    expect(unknown2.msg).to.include('(valid: ');
    const shown = cliJson([], await runCli(['app', 'show', '--app', String(created.id), '--json'], env));
    expect(shown.chains).to.deep.equal(['ETH']);
    const list = cliJson([], await runCli(['app', 'list', '--json'], env)) as Array<{ name: string }>;
    expect(list.map((a) => a.name)).to.deep.equal(['Y']);
  });

  it('`wcs hotwallets` says why an enabled chain has no hot wallet', async function () {
    const app = cliJson([], await runCli(['app', 'create', '--name', 'Z', '--env', 'test', '--chains', 'ETH,BTC', '--json'], env));
    const args = ['hotwallets', '--app', String(app.id), '--json'];
    const rows = cliJson(args, await runCli(args, env)) as Array<{ chainCode: string; address: string | null; reason: string }>;
    expect(rows.map((r) => [r.chainCode, r.address, r.reason])).to.deep.equal([
      ['ETH', null, 'no RPC endpoint (set WCS_RPC_TEST_ETH)'],
      ['BTC', null, 'no RPC endpoint (set WCS_RPC_TEST_BTC)'],
    ]);
    const withRpc = cliJson(args, await runCli(args, { ...env, WCS_RPC_TEST_ETH: 'http://127.0.0.1:9' })) as Array<{ chainCode: string; reason: string }>;
    expect(withRpc.find((r) => r.chainCode === 'ETH')?.reason).to.match(/^not made yet: a running worker \(wcs start\)/);
    const human = await runCli(['hotwallets', '--app', String(app.id)], env);
    expect(human.stdout).to.include(`app ${app.id} test:BTC no hot wallet: no RPC endpoint (set WCS_RPC_TEST_BTC)`);
  });

  it('`wcs --version` and `wcs -V` print the server package version', async function () {
    const version = JSON.parse(fs.readFileSync(path.join(path.dirname(require.resolve('@wcs/server/package.json')), 'package.json'), 'utf8')).version;
    expect(version).to.match(/^\d+\.\d+\.\d+/);
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag], env);
      expect(r.code, describeCli([flag], r)).to.equal(0);
      expect(r.stdout.trim()).to.equal(version);
    }
  });
});
