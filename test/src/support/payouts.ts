/**
 * What the withdrawal e2e tests on anvil share: a random destination, waiting for the worker to
 * make an application's hot wallet and for the ledger to read its funding, and mining until an
 * order ends.
 */
import { expect } from 'chai';
import { mine } from '@wcs/adapter-evm/devnet';
import type { SigningClient } from '../client/signing-client';
import { expectOk, pollUntil } from './expect';

/** Reads the test database (a pg Pool or the service's own connection). */
export type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;

/** A random EVM address, lower case (the service answers it in EIP-55 form). */
export const freshEvmAddress = (): string => `0x${[...Array(40)].map(() => '0123456789abcdef'[Math.floor(Math.random() * 16)]).join('')}`;

/** The hot wallet address the worker made for the application on the chain. */
export async function waitForHotWallet(q: Query, applicationId: number, chainId: number, timeoutMs = 60_000): Promise<string> {
  const r = await pollUntil(() => q<{ address: string }>('SELECT address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2', [applicationId, chainId]), (rows) => rows.length === 1, timeoutMs, 100);
  expect(r.ok, 'the worker made the hot wallet').to.equal(true);
  return r.result[0]!.address;
}

/** Waits until the ledger has read a positive balance of every one of the tokens for the application. */
export async function waitForFunded(q: Query, applicationId: number, tokenIds: number[], timeoutMs = 30_000): Promise<void> {
  const r = await pollUntil(
    () => q<{ n: number }>(`SELECT count(*)::int AS n FROM hot_wallet_balances b JOIN hot_wallets h ON h.id = b.hot_wallet_id
                             WHERE h.application_id = $1 AND b.chain_token_id = ANY($2::int[]) AND b.on_chain > 0`, [applicationId, tokenIds]),
    (rows) => rows[0]!.n === tokenIds.length, timeoutMs, 100);
  expect(r.ok, 'the ledger read the funding').to.equal(true);
}

/** Mines a block at a time until the order ends (SUCCESS or FAILED) and checks which. */
export async function settleOnAnvil<W extends { status: string }>(client: SigningClient, anvilUrl: string, id: number, expected: 'SUCCESS' | 'FAILED' = 'SUCCESS', intervalMs = 200): Promise<W> {
  const r = await pollUntil(async () => {
    await mine(anvilUrl, 1);
    return expectOk(await client.get(`/api/v1/wallet/withdraw/get?id=${id}`)) as W;
  }, (w) => w.status === 'SUCCESS' || w.status === 'FAILED', 60_000, intervalMs);
  expect(r.result.status, JSON.stringify(r.result)).to.equal(expected);
  return r.result;
}

/** The withdrawal record as the API answers it (withdraw/get, create, each accepted batch item). */
export interface Withdraw {
  id: number; appOrderNo: string; chainCode: string; chainTokenId: number; token: string; amount: string; fee: string; fromAddress: string; toAddress: string;
  memo: string | null; txHash: string | null; blockHeight: number | null; confirmations: number; status: string; failReason: string | null;
  riskLevel: string | null; riskReason: string | null; callbackTaskId: number | null;
}
/** One item's result in a batch-create answer. */
export interface ItemResult { appOrderNo: string | null; success: boolean; withdraw: Withdraw | null; errorCode: number | null; errorMessage: string | null }
/** The batch-create answer. */
export interface BatchResult { total: number; successCount: number; failedCount: number; items: ItemResult[] }
/** The body of a `withdraw` callback. */
export interface WithdrawEvent { event: string; id: number; applicationId: number; appOrderNo: string; chainId: number; chainTokenId: number; toAddress: string; amount: string; txHash: string; status: string }
