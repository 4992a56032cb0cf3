/**
 * Stuck and dropped withdrawals on a real EVM node (anvil with automine off, so the transaction
 * waits in the pool): a transaction unmined past WCS_WITHDRAW_STUCK_MS is replaced at the same
 * nonce with higher fees, within WCS_WITHDRAW_FEE_CAP_TEST_ETH, and only one of the two is ever
 * mined; one still unmined when no more replacements are allowed raises one WITHDRAWAL_STUCK
 * operator alert; a transaction the node dropped (anvil_dropTransaction) is sent again as it was.
 * Either way the destination is paid once and the hot wallet's nonce moves by one.
 */
import { expect } from 'chai';
import { anvilRpc, sendNative, setAutomine, startAnvil, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { startTestService, type TestService } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { freshEvmAddress, settleOnAnvil, waitForFunded, waitForHotWallet } from './support/payouts';
import { expectOk, pollUntil } from './support/expect';

const CREATE = '/api/v1/wallet/withdraw/create';
const GET = '/api/v1/wallet/withdraw/get';
const ETH_TEST_CHAIN_ID = 102;
const ETH_TOKEN_ID = 10200;
const ETHER = 10n ** 18n;
const GWEI = 10n ** 9n;
/** The replacement fee cap: 500 gwei per gas. */
const CAP = 500n * GWEI;

interface Tx { hash: string; nonce: string; maxFeePerGas: string; maxPriorityFeePerGas: string; blockNumber: string | null }

describe('withdrawals: a stuck transaction replaced at the same nonce within the fee cap; a dropped one sent again', function () {
  this.timeout(240_000);
  let anvil: AnvilDevnet;
  let svc: TestService;
  let app: CreatedApplication;
  let client: SigningClient;
  let hot: string;
  const q = async <R>(sql: string, bind: unknown[] = []) => (await svc.service.storage.database.sequelize.query(sql, { bind }))[0] as R[];
  const fresh = freshEvmAddress;
  const attempts = (id: number) => q<{ attempt: number; tx_hash: string }>('SELECT attempt, tx_hash FROM withdraw_transactions WHERE withdrawal_id = $1 ORDER BY attempt', [id]);
  const nonce = async () => BigInt(await anvilRpc<string>(anvil.url, 'eth_getTransactionCount', [hot, 'latest']));
  const get = async (id: number) => expectOk(await client.get(`${GET}?id=${id}`)) as { status: string; txHash: string | null; fee: string };
  const settle = (id: number) => settleOnAnvil<{ status: string; txHash: string | null; fee: string }>(client, anvil.url, id);

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    svc = await startTestService({
      env: {
        WCS_RPC_TEST_ETH: anvil.url, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '500',
        WCS_WITHDRAW_STUCK_MS: '1500', WCS_WITHDRAW_BUMP_PERCENT: '25', WCS_WITHDRAW_FEE_CAP_TEST_ETH: CAP.toString(),
      },
    });
    app = await svc.createApp({ chains: ['ETH'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_TEST_CHAIN_ID);
    await sendNative(anvil.url, hot, 20n * ETHER);
    await waitForFunded(q, app.id, [ETH_TOKEN_ID]);
  });

  after(async () => {
    await svc?.stop();
    await anvil?.stop();
  });

  it('unmined past the stuck time: replaced at the same nonce with fees raised by at least the bump, never above the cap; only one is mined', async () => {
    const to = fresh();
    const before = await nonce();
    await setAutomine(anvil.url, false);
    let id: number;
    let first: Tx;
    let second: Tx;
    try {
      id = (expectOk(await client.post(CREATE, { appOrderNo: 'stuck-1', chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: to, amount: '0.5' })) as { id: number }).id;
      const signed = await pollUntil(async () => {
        const [a] = await attempts(id);
        return a ? anvilRpc<Tx | null>(anvil.url, 'eth_getTransactionByHash', [a.tx_hash]) : null;
      }, (t) => t !== null, 30_000, 50);
      expect(signed.ok, 'the first transaction is in the pool').to.equal(true);
      first = signed.result!;
      const replaced = await pollUntil(() => attempts(id), (rows) => rows.length >= 2, 30_000, 100);
      expect(replaced.ok, 'a replacement was signed').to.equal(true);
      const inPool = await pollUntil(() => anvilRpc<Tx | null>(anvil.url, 'eth_getTransactionByHash', [replaced.result[1]!.tx_hash]), (t) => t !== null, 10_000, 50);
      expect(inPool.ok, 'the replacement is in the pool').to.equal(true);
      second = inPool.result!;
      // the pool now holds the replacement (same nonce); the first is gone from it
      const pool = await pollUntil(() => anvilRpc<Tx | null>(anvil.url, 'eth_getTransactionByHash', [replaced.result[0]!.tx_hash]), (t) => t === null, 10_000, 100);
      expect(pool.ok, 'the replaced transaction left the pool').to.equal(true);
    } finally {
      await setAutomine(anvil.url, true);
    }
    expect(second!.nonce).to.equal(first!.nonce);
    expect(BigInt(second!.maxFeePerGas) * 100n >= BigInt(first!.maxFeePerGas) * 125n, 'max fee raised by at least 25 %').to.equal(true);
    expect(BigInt(second!.maxPriorityFeePerGas) * 100n >= BigInt(first!.maxPriorityFeePerGas) * 125n, 'tip raised by at least 25 %').to.equal(true);
    expect(BigInt(second!.maxFeePerGas) <= CAP).to.equal(true);
    const done = await settle(id!);
    const all = await attempts(id!);
    const mined = [];
    for (const x of all) {
      const t = await anvilRpc<Tx | null>(anvil.url, 'eth_getTransactionByHash', [x.tx_hash]);
      if (t?.blockNumber) mined.push(x.tx_hash);
    }
    expect(mined, 'exactly one of the signed transactions is mined').to.have.length(1);
    expect(done.txHash).to.equal(mined[0]);
    expect(await nonce()).to.equal(before + 1n);
    expect(BigInt(await anvilRpc<string>(anvil.url, 'eth_getBalance', [to, 'latest']))).to.equal(ETHER / 2n);
  });

  it('stuck and no longer replaceable (10 transactions signed): one WITHDRAWAL_STUCK alert naming the order and its transaction; still paid once', async () => {
    const to = fresh();
    const before = await nonce();
    await setAutomine(anvil.url, false);
    let id: number;
    let signed: Array<{ attempt: number; tx_hash: string }>;
    try {
      id = (expectOk(await client.post(CREATE, { appOrderNo: 'stuck-max', chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: to, amount: '0.125' })) as { id: number }).id;
      const alert = await pollUntil(
        () => q<{ chain_id: number; message: string; details: { withdrawal: string; txHash: string; attempt: number; reason: string } }>(
          `SELECT chain_id, message, details FROM operator_alerts WHERE kind = 'WITHDRAWAL_STUCK' AND details->>'withdrawal' = $1`, [String(id)]),
        (rows) => rows.length > 0, 90_000, 200);
      expect(alert.ok, 'a WITHDRAWAL_STUCK alert').to.equal(true);
      signed = await attempts(id);
      expect(signed, 'replaced until 10 transactions were signed, then no more').to.have.length(10);
      const a = alert.result[0]!;
      expect(a.chain_id).to.equal(ETH_TEST_CHAIN_ID);
      expect(a.details).to.deep.include({ withdrawal: String(id), txHash: signed[9]!.tx_hash, attempt: 10 });
      expect(a.details.reason).to.match(/10 transactions are signed for it, the most allowed/);
      expect(a.message).to.contain(signed[9]!.tx_hash).and.match(/stays BROADCASTED/);
      // the worker keeps tracking it but raises nothing more, and signs nothing more
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await q(`SELECT count(*)::int AS n FROM operator_alerts WHERE kind = 'WITHDRAWAL_STUCK' AND details->>'withdrawal' = $1`, [String(id)]), 'alerted once').to.deep.equal([{ n: 1 }]);
      expect(await attempts(id), 'no 11th transaction').to.have.length(10);
      expect((await get(id)).status).to.equal('BROADCASTED');
    } finally {
      await setAutomine(anvil.url, true);
    }
    const done = await settle(id!);
    expect(done.txHash).to.equal(signed![9]!.tx_hash);
    expect(await nonce()).to.equal(before + 1n);
    expect(BigInt(await anvilRpc<string>(anvil.url, 'eth_getBalance', [to, 'latest']))).to.equal(ETHER / 8n);
  });

  it('dropped by the node: the same signed bytes are sent again, and mined once', async () => {
    const to = fresh();
    const before = await nonce();
    await setAutomine(anvil.url, false);
    let id: number;
    let hash: string;
    try {
      id = (expectOk(await client.post(CREATE, { appOrderNo: 'dropped-1', chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: to, amount: '0.25' })) as { id: number }).id;
      const sent = await pollUntil(() => get(id), (w) => w.status === 'BROADCASTED', 30_000, 100);
      expect(sent.ok).to.equal(true);
      hash = sent.result.txHash!;
      await anvilRpc(anvil.url, 'anvil_dropTransaction', [hash]);
      expect(await anvilRpc(anvil.url, 'eth_getTransactionByHash', [hash])).to.equal(null);
      const back = await pollUntil(() => anvilRpc<Tx | null>(anvil.url, 'eth_getTransactionByHash', [hash]), (t) => t !== null, 10_000, 100);
      expect(back.ok, 'the worker sent it again').to.equal(true);
    } finally {
      await setAutomine(anvil.url, true);
    }
    const done = await settle(id!);
    expect(done.txHash).to.equal(hash!);
    expect((await attempts(id!)).map((x) => x.tx_hash), 'the same transaction, not a new one').to.deep.equal([hash!]);
    expect(await nonce()).to.equal(before + 1n);
    expect(BigInt(await anvilRpc<string>(anvil.url, 'eth_getBalance', [to, 'latest']))).to.equal(ETHER / 4n);
  });
});
