import { z } from 'zod';
import { success } from './common';

/** Chains and tokens of the catalogue (support/chains, support/tokens) and the readiness checks (/readyz). */

export const Chain = z.object({
  chainId: z.int(),
  chainCode: z.string(),
  chainName: z.string(),
  family: z.string().describe("The chain's adapter family: bitcoin, evm, solana, xrp, stellar, eos, or the family of an adapter package the operator installed (e.g. ton)."),
  network: z.string(),
  nativeSymbol: z.string(),
  decimals: z.int(),
  minConfirmations: z.int(),
  memoRequired: z.boolean(),
  evmChainId: z.int().nullable(),
  depositDetection: z.enum(['ENABLED', 'NO_RPC', 'NOT_SUPPORTED']).describe("Whether deposits on this chain are detected by this service: ENABLED (an RPC endpoint is configured, WCS_RPC_<ENV>_<CODE>, and the chain's adapter scans), NO_RPC (no endpoint configured: deposits are not detected), NOT_SUPPORTED (the adapter cannot scan)."),
}).meta({ id: 'Chain' });
export type Chain = z.infer<typeof Chain>;

export const Token = z.object({
  chainTokenId: z.int(),
  chainId: z.int(),
  chainCode: z.string(),
  symbol: z.string(),
  name: z.string(),
  contractAddress: z.string().nullable(),
  decimals: z.int(),
  native: z.boolean(),
}).meta({ id: 'Token' });
export type Token = z.infer<typeof Token>;

export const ReadyChecks = z.strictObject({
  database: z.string().describe('ok, pending migrations <versions>, or unreachable: <reason>').optional(),
  credentialCache: z.string().describe('listening (API secrets cached, invalidated by notifications) or bypassed (read from the database on each request)').optional(),
  keystore: z.string().describe('ok; locked; or unavailable: <reason> when the key store could not be opened yet (wrong passphrase or PIN, HSM unreachable, token absent: retried in the background, 1 s doubling to 30 s, ready without a restart) or reports itself unusable (e.g. a PKCS#11 token that is gone)').optional(),
}).catchall(z.string()).meta({ id: 'ReadyChecks', description: 'One entry per check; a value other than ok / listening / bypassed says what failed.' });
export type ReadyChecks = z.infer<typeof ReadyChecks>;

export const ChainListEnvelope = success(z.array(Chain)).meta({ id: 'ChainListEnvelope' });
export type ChainListEnvelope = z.infer<typeof ChainListEnvelope>;

export const TokenListEnvelope = success(z.array(Token)).meta({ id: 'TokenListEnvelope' });
export type TokenListEnvelope = z.infer<typeof TokenListEnvelope>;
