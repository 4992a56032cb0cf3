import type { Transaction } from 'sequelize';
import type { TransactionLog } from '@wcs/core';
import type { TransferKind, TransferStatus } from './model';

/** Why a transfer ended FAILED: stable codes (docs/transfers.md). */
export type TransferFailCode =
  /** The adapter refused to craft it (dust, an invalid destination, the fee above what it moves). */
  | 'CRAFT_REFUSED'
  /** The node refused the signed transaction for good and does not have it. */
  | 'NODE_REJECTED'
  /** Mined, and failed on chain (an EVM revert). */
  | 'REVERTED'
  /** Expired too many times without landing (expiring chains). */
  | 'EXPIRED';

/** One transfer's change, made in the transaction the owner's hook runs in. */
export interface TransferChange {
  readonly id: string;
  readonly kind: TransferKind;
  readonly was: TransferStatus;
  readonly status: TransferStatus;
  /** The statuses reached by this change, in order (a mined, final transaction: CONFIRMING then SUCCESS). */
  readonly events: readonly TransferStatus[];
  readonly txHash: string | null;
  readonly sequence: string | null;
  /** Native base units: the most it can cost (signed) or what it cost (mined). */
  readonly fee: string | null;
  readonly feeFinal: boolean;
  /** What the signed transaction moves (the amount, or less the fee when the fee comes out of it). */
  readonly sentAmount: string | null;
  readonly blockHeight: string | null;
  readonly confirmations: number;
  readonly failCode: TransferFailCode | null;
  readonly failReason: string | null;
  /** Mined (CONFIRMING, SUCCESS, FAILED by a revert), on chains with event logs: the receipt's logs (a batch sweep's outcome per entry). */
  readonly logs?: readonly TransactionLog[];
}

/**
 * The business record behind a kind of transfer (a withdrawal, a collection item): told of every
 * change of its transfers in the transaction that makes it, so its own state and its callback
 * commit with the change or not at all.
 */
export interface TransferOwner {
  readonly kinds: readonly TransferKind[];
  onChange(t: Transaction, changes: readonly TransferChange[]): Promise<void>;
  /** For operator alerts about a transfer: what it is for (e.g. `withdrawal 12`) and details naming the record. */
  describe(t: Transaction, id: string): Promise<{ readonly what: string; readonly alertKind: string; readonly details: Record<string, unknown> }>;
}
