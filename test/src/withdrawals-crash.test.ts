/**
 * Exactly once across a crash: the payout worker (`wcs start --workers-only`, a child process) is
 * killed with SIGKILL between signing and broadcast, and after the node has the transaction but
 * before the worker heard back. The node is a real anvil; between them sits a JSON-RPC relay that
 * can hold `eth_sendRawTransaction` requests (the crash comes while the send is in flight: the
 * signed transaction is stored, the node never got it) or pass them on and withhold the answer
 * (the node has it, the worker does not know). After a restart each order ends SUCCESS with one
 * on-chain transaction: the hot wallet's nonce moved by one per order, the destination received
 * the amount once, and no second transaction was ever signed for the order.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { anvilRpc, sendNative, startAnvil, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { WcsService } from '@wcs/server';
import { createTestDatabase, freePort, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { freshEvmAddress, settleOnAnvil, waitForHotWallet } from './support/payouts';
import { expectOk, pollUntil } from './support/expect';
import { WcsProcess } from './support/processes';

const CREATE = '/api/v1/wallet/withdraw/create';
const ETH_TEST_CHAIN_ID = 102;
const ETH_TOKEN_ID = 10200;
const ETHER = 10n ** 18n;

type RelayMode = 'pass' | 'hold-send' | 'send-then-hang';

/** A JSON-RPC relay in front of anvil that can hold or swallow the answers to eth_sendRawTransaction. */
class Relay {
  mode: RelayMode = 'pass';
  /** eth_sendRawTransaction requests seen, with what the relay did. */
  readonly sends: Array<{ mode: RelayMode; forwarded: boolean }> = [];
  private readonly held: ServerResponse[] = [];
  private server: Server | null = null;
  constructor(private readonly target: string) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let calls: Array<{ method?: string }> = [];
    try {
      const parsed = JSON.parse(body) as unknown;
      calls = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ method?: string }>;
    } catch {
      /* forwarded as it is */
    }
    const isSend = calls.some((c) => c.method === 'eth_sendRawTransaction');
    const mode = this.mode;
    if (isSend && mode === 'hold-send') {
      this.sends.push({ mode, forwarded: false });
      this.held.push(res); // never answered, never forwarded
      return;
    }
    const answer = await fetch(this.target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await answer.text();
    if (isSend) this.sends.push({ mode, forwarded: true });
    if (isSend && mode === 'send-then-hang') {
      this.held.push(res); // the node has it; the caller never hears
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(text);
  }

  async stop(): Promise<void> {
    for (const r of this.held.splice(0)) r.destroy();
    if (!this.server) return;
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}

describe('withdrawals: kill -9 of the payout worker around the broadcast (one on-chain transaction per order)', function () {
  this.timeout(240_000);
  let anvil: AnvilDevnet;
  let relay: Relay;
  let relayUrl: string;
  let db: TestDatabase;
  let api: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let workers: WcsProcess | null = null;
  let hot: string;
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const fresh = freshEvmAddress;
  const startWorkers = async () => {
    const env = { ...process.env, ...testEnv(db.url, { WCS_RPC_TEST_ETH: relayUrl, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_RPC_TIMEOUT_MS: '60000' }) };
    workers = WcsProcess.spawn(['start', '--workers-only'], env, await freePort());
  };
  const kill9 = async () => {
    const r = await workers!.stop('SIGKILL');
    expect(r.signal).to.equal('SIGKILL');
    workers = null;
  };
  const nonce = async () => BigInt(await anvilRpc<string>(anvil.url, 'eth_getTransactionCount', [hot, 'latest']));
  const signedTxs = (id: number) => q<{ attempt: number; tx_hash: string }>('SELECT attempt, tx_hash FROM withdraw_transactions WHERE withdrawal_id = $1 ORDER BY attempt', [id]);
  const settle = (id: number) => settleOnAnvil<{ status: string; txHash: string | null }>(client, anvil.url, id);

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    relay = new Relay(anvil.url);
    relayUrl = await relay.start();
    await prepareTestKeystore();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    api = await WcsService.start(testConfig(db.url), testLogger(), { api: true, workers: false });
    app = await api.storage.applications.create(TEST_ACTOR, { name: 'crash', environment: 'test', chains: ['ETH'] });
    client = new SigningClient(api.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    await startWorkers();
    hot = await waitForHotWallet(q, app.id, ETH_TEST_CHAIN_ID);
    await sendNative(anvil.url, hot, 100n * ETHER);
    const funded = await pollUntil(
      () => q<{ on_chain: string }>(`SELECT b.on_chain::text AS on_chain FROM hot_wallet_balances b JOIN hot_wallets h ON h.id = b.hot_wallet_id WHERE h.id IN (SELECT id FROM hot_wallets WHERE application_id = $1) AND b.chain_token_id = $2`, [app.id, ETH_TOKEN_ID]),
      (rows) => rows[0]?.on_chain === (100n * ETHER).toString(), 30_000, 100);
    expect(funded.ok, 'the ledger read the funding').to.equal(true);
  });

  after(async () => {
    await workers?.stop('SIGKILL');
    await api?.stop();
    await pool?.end();
    await db?.drop();
    await relay?.stop();
    await anvil?.stop();
  });

  /**
   * One order through a crash: the relay set to `mode`, the order placed, `whileDown` checked once
   * the worker is at the crash point and killed, then a restart with the relay passing everything:
   * the order ends SUCCESS with the stored transaction, the only one ever signed for it.
   */
  const throughCrash = async (mode: Exclude<RelayMode, 'pass'>, appOrderNo: string, amount: string, units: bigint, atCrashPoint: (txHash: string, id: number) => Promise<void>) => {
    const to = fresh();
    const before = await nonce();
    relay.mode = mode;
    const order = expectOk(await client.post(CREATE, { appOrderNo, chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: to, amount })) as { id: number };
    const reached = await pollUntil(async () => relay.sends.filter((s) => s.mode === mode).length, (n) => n >= 1, 30_000, 50);
    expect(reached.ok, 'the worker signed and began to send').to.equal(true);
    const [stored] = await signedTxs(order.id);
    expect(stored, 'the signed transaction is stored before the send').to.not.equal(undefined);
    await atCrashPoint(stored!.tx_hash, order.id);
    await kill9();
    if (mode === 'hold-send') {
      expect(await anvilRpc(anvil.url, 'eth_getTransactionByHash', [stored!.tx_hash]), 'the node never got it').to.equal(null);
      expect(await nonce()).to.equal(before);
    }
    relay.mode = 'pass';
    await startWorkers();
    const done = await settle(order.id);
    expect(done.txHash).to.equal(stored!.tx_hash);
    expect(await signedTxs(order.id)).to.deep.equal([{ attempt: 1, tx_hash: stored!.tx_hash }]);
    expect(await nonce()).to.equal(before + 1n);
    expect(BigInt(await anvilRpc<string>(anvil.url, 'eth_getBalance', [to, 'latest']))).to.equal(units);
  };

  it('killed after signing, while the send is in flight (the node never got it): after a restart the stored transaction is sent, mined once', async () => {
    await throughCrash('hold-send', 'crash-before-send', '1.5', 3n * ETHER / 2n, async () => undefined);
  });

  it('killed after the node took the transaction but before the worker heard back: after a restart it is recognised, not sent anew', async () => {
    await throughCrash('send-then-hang', 'crash-after-send', '2.25', 9n * ETHER / 4n, async (txHash, id) => {
      const onNode = await pollUntil(() => anvilRpc(anvil.url, 'eth_getTransactionByHash', [txHash]), (tx) => tx !== null, 10_000, 50);
      expect(onNode.ok, 'the node has the transaction').to.equal(true);
      expect((await q<{ status: string }>('SELECT status FROM withdrawals WHERE id = $1', [id]))[0]!.status, 'the worker never heard back').to.equal('PROCESSING');
    });
  });
});
