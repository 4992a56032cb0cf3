/**
 * TON through the running service, with the TON adapter package (examples/adapter-ton, outside the
 * workspaces, its own package.json and lock file) installed from its folder by configuration
 * alone: no server code knows TON. The config file (WCS_CONFIG) names '@wcs/adapter-ton' in
 * `adapters` besides the six default packages, and defines a test chain of family 'ton' and its
 * tokens; the `wcs` processes find the package by name through NODE_PATH (a temporary folder with
 * an `@wcs/adapter-ton` symlink to the package's folder), as docs/adapters.md tells an operator.
 *
 * The chain is the real TVM: @ton/sandbox behind the package's toncenter-like HTTP API
 * (examples/adapter-ton/src/test-support/sandbox-server.ts), started in this test process and
 * given to the service as WCS_RPC_TEST_TON. A real TEP-74 jetton (USDT-like, 6 decimals) is deployed
 * with the package's fixtures; "user" and "jetton admin" are sandbox treasuries (funded wallets).
 *
 * Everything the service does is driven as a merchant and an operator do: `wcs app create` /
 * `set-callback` (CLI), the signed REST API (address/create, recharge/list, withdraw/batch-create,
 * withdraw/get), `wcs hotwallets` and `wcs deposits unattributed`, and signed RECHARGE / WITHDRAW
 * callbacks verified with the application's secret. Outcomes are read from the sandbox's state
 * (balances, jetton balances, the messages' comments).
 *
 * The set-up (sandbox, jetton, config, NODE_PATH, application, `wcs start`) is shared with
 * ton-collection.test.ts: support/ton-service.ts.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil, sleep } from './support/expect';
import { cliJson, describeCli, WcsProcess, type CliResult } from './support/processes';
import { ADDRESS_CREATE, type Recharge, type RechargeEvent, type Unattributed } from './support/recharge-types';
import type { BatchResult, Withdraw, WithdrawEvent } from './support/payouts';
import { TON_DIR, type Jetton, type TonPackage, type TonSandboxNode, type Treasury } from './support/ton-sandbox';
import { DEFAULT_ADAPTERS, TON, TON_CHAIN_ID as CHAIN_ID, TON_TOKEN, TonService, USDT_TOKEN, tonConfig } from './support/ton-service';

const BATCH = '/api/v1/wallet/withdraw/batch-create';
const GET = '/api/v1/wallet/withdraw/get';

describe('TON through the service (@wcs/adapter-ton from examples/, @ton/sandbox): addresses, Toncoin and jetton deposits, withdrawals, a bounce', function () {
  this.timeout(120_000);
  let s: TonService | null = null;
  let ton: TonPackage;
  let node: TonSandboxNode;
  let user: Treasury;
  let jetton: Jetton;
  let usdt = '';
  let pool: Pool;
  let tmp = '';
  let env: Record<string, string | undefined> = {};
  let proc: WcsProcess | null = null;
  let client: SigningClient;
  let app: { id: number; apiKey: string; apiSecret: string };
  let receiver: CallbackReceiver;
  const addr: Record<string, { address: string; memo: string }> = {};

  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const cli = (args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<CliResult> => s!.cli(args, extraEnv);
  const cliOk = (args: string[]) => s!.cliOk(args);
  const recharges = (): Promise<Recharge[]> => s!.recharges();
  const withdrawEvents = (id: number) => receiver.received.filter((r) => r.target === '/merchant/withdraw').map((r) => ({ r, e: JSON.parse(r.body.toString('utf8')) as WithdrawEvent })).filter(({ e }) => e.id === id);
  const batch = async (items: unknown[]): Promise<BatchResult> => expectOk(await client.post(BATCH, { items })) as BatchResult;
  const getWithdraw = async (id: number): Promise<Withdraw> => expectOk(await client.get(`${GET}?id=${id}`)) as Withdraw;
  const tonBalance = (a: string): Promise<bigint> => s!.tonBalance(a);
  const settled = (txHash: string): Promise<Recharge> => s!.settled(txHash);
  const lastTxTo = (a: string): string => s!.lastTxTo(a);
  const expectRechargeCallbacks = (id: number, statuses: string[]): Promise<RechargeEvent[]> => s!.expectRechargeCallbacks(id, statuses);
  const finished = async (id: number): Promise<Withdraw> => {
    const r = await pollUntil(() => getWithdraw(id), (w) => w.status === 'SUCCESS' || w.status === 'FAILED', 60_000, 100);
    expect(r.ok, `withdrawal ${id}: ${JSON.stringify(r.result)}\n${proc?.describe()}`).to.equal(true);
    return r.result;
  };
  const expectWithdrawCallbacks = async (id: number, last: 'SUCCESS' | 'FAILED'): Promise<WithdrawEvent[]> => {
    const r = await pollUntil(async () => withdrawEvents(id), (evs) => evs.some(({ e }) => e.status === last), 30_000, 50);
    expect(r.ok, `callbacks of withdrawal ${id}: ${JSON.stringify(r.result.map(({ e }) => e.status))}`).to.equal(true);
    await sleep(300);
    const got = withdrawEvents(id);
    for (const { r: req } of got) expect(verifyCallback(req, app.apiKey, app.apiSecret)).to.equal(null);
    return got.map(({ e }) => e);
  };

  before(async function () {
    this.timeout(90_000);
    s = await TonService.start({ appName: 'ton-merchant', callbacks: ['RECHARGE', 'WITHDRAW'] }, (started) => (s = started));
    ({ ton, node, user, jetton, usdt, pool, tmp, env, proc, client, app, receiver } = s);
  });

  after(async () => {
    await s?.stop();
  });

  describe('installed from its folder into the service by config alone (no server code changed)', () => {
    it('no server file names the package: the service finds it only through the config file\'s `adapters` and NODE_PATH', () => {
      const serverDir = path.dirname(require.resolve('@wcs/server/package.json'));
      const pkg = fs.readFileSync(path.join(serverDir, 'package.json'), 'utf8');
      expect(pkg).to.not.include('adapter-ton');
      const names = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? names(path.join(dir, d.name)) : [path.join(dir, d.name)]));
      const mentions = names(path.join(serverDir, 'src')).filter((f) => fs.readFileSync(f, 'utf8').includes('adapter-ton'));
      expect(mentions, 'server sources naming the TON package').to.deep.equal([]);
      expect(fs.realpathSync(path.join(env.NODE_PATH!, '@wcs', 'adapter-ton'))).to.equal(fs.realpathSync(TON_DIR));
    });

    it('`wcs config-check` passes with the package in `adapters`, and fails with a clear config error without it', async () => {
      const ok = await cli(['config-check']);
      expect(ok.code, describeCli(['config-check'], ok)).to.equal(0);
      const without = path.join(tmp, 'config-without-ton.json');
      fs.writeFileSync(without, JSON.stringify(tonConfig(usdt, DEFAULT_ADAPTERS)));
      const bad = await cli(['config-check'], { WCS_CONFIG: without });
      expect(bad.code, describeCli(['config-check'], bad)).to.not.equal(0);
      expect(bad.stderr + bad.stdout).to.match(/ton/);
      expect(bad.stderr + bad.stdout, describeCli(['config-check'], bad)).to.include('TON');
    });

    it('the chain is in the catalogue, scanned and paid: `wcs chains` and support/chains', async () => {
      const chains = (expectOk(await client.get('/api/v1/wallet/support/chains')) as Array<{ chainCode: string; chainId: number; depositDetection: string }>);
      expect(chains.map((c) => [c.chainId, c.chainCode, c.depositDetection])).to.deep.equal([[CHAIN_ID, 'TON', 'ENABLED']]);
    });
  });

  describe('addresses and deposits', () => {
    it('address/create: one shared address for the application, a numeric comment memo per user', async () => {
      for (const u of ['alice', 'bob']) {
        addr[u] = expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'TON', externalUserId: u })) as { address: string; memo: string };
        expect(addr[u]!.memo, u).to.match(/^[1-9][0-9]*$/);
      }
      expect(addr.bob!.address).to.equal(addr.alice!.address);
      expect(addr.bob!.memo).to.not.equal(addr.alice!.memo);
      // the shared address is a user-friendly test-network address the adapter parses
      expect(ton.parseAddress(addr.alice!.address).toString({ urlSafe: true, bounceable: false, testOnly: true })).to.equal(addr.alice!.address);
      const again = expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'TON', externalUserId: 'alice' })) as { address: string; memo: string };
      expect(again).to.deep.include(addr.alice!);
    });

    it('a Toncoin deposit with alice\'s comment is credited to alice: exact amount, memo, PENDING/CONFIRMED/SETTLED callbacks signed', async () => {
      const shared = ton.parseAddress(addr.alice!.address);
      await user.send({ to: shared, value: TON('1.5'), bounce: false, body: ton.commentCell(addr.alice!.memo) });
      const hash = lastTxTo(addr.alice!.address);
      const r = await settled(hash);
      expect(r).to.include({
        applicationId: app.id, chainId: CHAIN_ID, chainCode: 'TON', chainTokenId: TON_TOKEN, tokenSymbol: 'TON', contractAddress: null,
        externalUserId: 'alice', address: addr.alice!.address, memo: addr.alice!.memo, amount: '1.5', txHash: hash, failReason: null,
      });
      expect(r.fromAddress).to.equal(user.address.toString({ urlSafe: true, bounceable: false, testOnly: true }));
      const evs = await expectRechargeCallbacks(r.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
      for (const e of evs) expect(e).to.include({ event: 'recharge', applicationId: app.id, chainId: CHAIN_ID, chainTokenId: TON_TOKEN, amount: '1.5', txHash: hash, address: addr.alice!.address });
    });

    it('a jetton (USDT) deposit with bob\'s comment in the forward payload is credited to bob in the jetton\'s 6 decimals', async () => {
      await jetton.transfer(user, ton.parseAddress(addr.bob!.address), 25_500_000n, addr.bob!.memo);
      const hash = lastTxTo(addr.bob!.address);
      const r = await settled(hash);
      expect(r).to.include({
        chainId: CHAIN_ID, chainTokenId: USDT_TOKEN, tokenSymbol: 'USDT', contractAddress: usdt,
        externalUserId: 'bob', address: addr.bob!.address, memo: addr.bob!.memo, amount: '25.5', txHash: hash,
      });
      expect(r.fromAddress).to.equal(user.address.toString({ urlSafe: true, bounceable: false, testOnly: true }));
      const evs = await expectRechargeCallbacks(r.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
      for (const e of evs) expect(e).to.include({ chainTokenId: USDT_TOKEN, amount: '25.5', txHash: hash });
      expect(await jetton.balanceOf(ton.parseAddress(addr.bob!.address))).to.equal(25_500_000n);
    });

    it('a Toncoin deposit without a comment is not credited: an unattributed deposit (MEMO_MISSING) for the operator, no callback', async () => {
      const before = (await recharges()).length;
      const callbacks = receiver.received.length;
      await user.send({ to: ton.parseAddress(addr.alice!.address), value: TON('0.3'), bounce: false });
      const hash = lastTxTo(addr.alice!.address);
      const r = await pollUntil(async () => cliJson(['deposits', 'unattributed', '--json'], await cli(['deposits', 'unattributed', '--json'])) as Unattributed[], (rows) => rows.some((x) => x.txHash === hash), 30_000, 200);
      expect(r.ok, JSON.stringify(r.result)).to.equal(true);
      expect(r.result.filter((x) => x.txHash === hash)).to.have.length(1);
      expect(r.result.find((x) => x.txHash === hash)).to.include({ chainId: CHAIN_ID, chainCode: 'TON', tokenSymbol: 'TON', address: addr.alice!.address, memo: null, amount: '0.3', reason: 'MEMO_MISSING', rechargeId: null });
      await sleep(500);
      expect((await recharges()).length).to.equal(before);
      expect(receiver.received.length).to.equal(callbacks);
    });
  });

  describe('withdrawals from the hot wallet', () => {
    let hot = '';

    before(async function () {
      this.timeout(60_000);
      const w = await pollUntil(() => q<{ address: string }>('SELECT address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, CHAIN_ID]), (rows) => rows.length === 1, 30_000, 100);
      expect(w.ok, 'the service made the TON hot wallet').to.equal(true);
      hot = w.result[0]!.address;
      const listed = await cliOk(['hotwallets', '--app', String(app.id), '--json']) as unknown;
      expect(JSON.stringify(listed)).to.include(hot);
      // the operator funds it: 5 TON, 100 USDT
      await user.send({ to: ton.parseAddress(hot), value: TON('5'), bounce: false });
      await jetton.mint(ton.parseAddress(hot), 100_000_000n);
      const funded = await pollUntil(
        () => q<{ chain_token_id: number; on_chain: string }>('SELECT chain_token_id, on_chain::text AS on_chain FROM hot_wallet_balances WHERE chain_token_id = ANY($1::int[]) ORDER BY chain_token_id', [[TON_TOKEN, USDT_TOKEN]]),
        (rows) => rows.length === 2 && rows[0]!.on_chain === TON('5').toString() && rows[1]!.on_chain === '100000000', 30_000, 100);
      expect(funded.ok, `the ledger read the funding: ${JSON.stringify(funded.result)}\n${proc?.describe()}`).to.equal(true);
    });

    it('pays Toncoin with a comment from the hot wallet (deploying it): the destination receives the exact amount and the comment, SUCCESS callbacks signed', async () => {
      const to = ton.freshWallet(1, false);
      const r = await batch([{ appOrderNo: 'ton-1', chainCode: 'TON', chainTokenId: TON_TOKEN, toAddress: to, toMemo: 'order 1', amount: '1.25' }]);
      expect(r.items[0], JSON.stringify(r.items[0])).to.include({ success: true });
      const order = r.items[0]!.withdraw!;
      expect(order).to.include({ fromAddress: hot, toAddress: to, amount: '1.25' });
      const done = await finished(order.id);
      expect(done, JSON.stringify(done)).to.include({ status: 'SUCCESS', failReason: null });
      expect(await tonBalance(to)).to.equal(TON('1.25'));
      const dest = node.transactionsOf(ton.parseAddress(to));
      const body = dest[dest.length - 1]!.tx.inMessage!.body.beginParse();
      expect(body.loadUint(32)).to.equal(0);
      expect(body.loadStringTail()).to.equal('order 1');
      const hotLeft = await tonBalance(hot);
      expect(hotLeft < TON('5') - TON('1.25') && hotLeft > TON('3.5'), `the hot wallet paid 1.25 TON and a fee: ${hotLeft}`).to.equal(true);
      const evs = await expectWithdrawCallbacks(order.id, 'SUCCESS');
      expect(evs[evs.length - 1]).to.include({ event: 'withdraw', appOrderNo: 'ton-1', status: 'SUCCESS', amount: '1.25', txHash: done.txHash });
    });

    it('pays a jetton (USDT) through the hot wallet\'s jetton wallet: exact jetton amounts moved', async () => {
      const beforeUser = await jetton.balanceOf(user.address);
      const to = user.address.toString({ urlSafe: true, bounceable: true, testOnly: true });
      const r = await batch([{ appOrderNo: 'usdt-1', chainCode: 'TON', chainTokenId: USDT_TOKEN, toAddress: to, amount: '10.75' }]);
      expect(r.items[0], JSON.stringify(r.items[0])).to.include({ success: true });
      const order = r.items[0]!.withdraw!;
      const done = await finished(order.id);
      expect(done, JSON.stringify(done)).to.include({ status: 'SUCCESS', amount: '10.75' });
      expect(await jetton.balanceOf(user.address)).to.equal(beforeUser + 10_750_000n);
      expect(await jetton.balanceOf(ton.parseAddress(hot))).to.equal(100_000_000n - 10_750_000n);
      const evs = await expectWithdrawCallbacks(order.id, 'SUCCESS');
      expect(evs[evs.length - 1]).to.include({ appOrderNo: 'usdt-1', status: 'SUCCESS', amount: '10.75', chainTokenId: USDT_TOKEN });
    });

    it('a bounceable Toncoin transfer to an undeployed account bounces: the withdrawal is FAILED, the value came back, FAILED callback signed', async () => {
      const to = ton.freshWallet(2, true);
      const hotBefore = await tonBalance(hot);
      const r = await batch([{ appOrderNo: 'ton-bounce', chainCode: 'TON', chainTokenId: TON_TOKEN, toAddress: to, amount: '2' }]);
      expect(r.items[0], JSON.stringify(r.items[0])).to.include({ success: true });
      const order = r.items[0]!.withdraw!;
      const done = await finished(order.id);
      expect(done.status, JSON.stringify(done)).to.equal('FAILED');
      expect(await tonBalance(to)).to.equal(0n);
      const spent = hotBefore - (await tonBalance(hot));
      expect(spent > 0n && spent < TON('2'), `the 2 TON came back, only fees spent (${spent})`).to.equal(true);
      const evs = await expectWithdrawCallbacks(order.id, 'FAILED');
      expect(evs[evs.length - 1]).to.include({ appOrderNo: 'ton-bounce', status: 'FAILED', amount: '2' });
    });
  });
});
