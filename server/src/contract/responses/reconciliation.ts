import { z } from 'zod';

/** Reconciliation (docs/reconciliation.md): the balances of reconciliation/balances. */

export const ReconciliationBalance = z.object({
  chainId: z.int(),
  chainCode: z.string(),
  chainTokenId: z.int(),
  tokenSymbol: z.string(),
  contractAddress: z.string().describe('Token contract / mint / issuer; "" for the native coin.'),
  addressCount: z.int().describe('Custody addresses summed.'),
  ledgerBalance: z.string().describe("What the service's ledger expects the addresses to hold, a decimal string in token units."),
  chainBalance: z.string().describe('What the node reported they hold, a decimal string in token units.'),
  difference: z.string().describe('chainBalance - ledgerBalance; negative when the chain holds less.'),
  explained: z.string().describe('The part of the difference explained (transfers in flight, deposits pending, recorded outflows), signed.'),
  unexplained: z.string().describe('The rest, signed: "0" when every difference is explained.'),
  blockHeight: z.int().describe('The highest block the balances were read at.'),
  blockHash: z.string().describe('The hash of that block where the chain has one; "" otherwise.'),
  oldestBlockHeight: z.int().describe('The lowest block one of the balances was read at (equal to blockHeight after a full pass).'),
  reconcileTime: z.string().describe('When the latest of them was reconciled (yyyy-MM-ddTHH:mm:ss, server local time, as every time in the API).'),
  oldestReconcileTime: z.string().describe('When the oldest of them was reconciled.'),
  openDiscrepancies: z.int().describe('Unexplained differences of this token still open for the operator.'),
}).meta({ id: 'ReconciliationBalance', description: "One chain and token of the application: the ledger against the chain, summed over its custody addresses' latest reconciliation." });
export type ReconciliationBalance = z.infer<typeof ReconciliationBalance>;
