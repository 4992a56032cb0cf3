import { QueryTypes, type Sequelize } from 'sequelize';
import type { BalanceReader } from '@wcs/core';
import { addAdjustments, type AdjustmentRow } from './records';

/**
 * Native coin a service transaction moved that its transfer record does not hold
 * (docs/reconciliation.md, "Per chain"): on Solana a token transfer paid by the hot wallet may
 * create the recipient's token account (its rent paid by the fee payer) and a sweep closes the
 * deposit address's token account (its rent refunded to the fee payer); the record holds the token
 * amount and the fee (meta.fee) only. Once the transaction is final, the fee payer's lamport change
 * is read from the node (BalanceReader.nativeChanges) and the part beyond the recorded fee is booked
 * as an ACCOUNT_RENT adjustment at the transaction's block. Each (transaction, address) is read once.
 */

/** A mined token transfer of the service whose fee payer's native change was not read yet. */
export interface UnreadTransfer {
  readonly id: string;
  readonly applicationId: number;
  readonly txHash: string;
  /** The fee payer (options.feePayer, else the sender). */
  readonly payer: string;
  /** The recorded fee, base units of the native coin. */
  readonly fee: bigint;
  readonly blockHeight: bigint;
}

/** What one read gives: the read to keep, and the adjustment when the change is not the recorded fee. */
export interface NativeRead {
  readonly transferId: string;
  readonly txHash: string;
  readonly address: string;
  readonly change: bigint;
  /** change + fee (the record's own effect on the payer is -fee); null when 0. */
  readonly adjustment: bigint | null;
}

/**
 * The reads and adjustments of transfers whose changes the node answered (null: not final yet,
 * asked again at a later pass). A token transfer takes only its fee from the payer's native coin in
 * the ledger, so anything else in the change is what the record does not hold.
 */
export function nativeReads(transfers: readonly UnreadTransfer[], changes: ReadonlyArray<bigint | null>): NativeRead[] {
  if (changes.length !== transfers.length) throw new Error(`nativeReads: ${changes.length} changes for ${transfers.length} transfers`);
  return transfers.flatMap((x, i) => {
    const change = changes[i];
    if (change === null || change === undefined) return [];
    const rest = change + x.fee;
    return [{ transferId: x.id, txHash: x.txHash, address: x.payer, change, adjustment: rest === 0n ? null : rest }];
  });
}

/** At most this many transfers are read per pass (the rest at the next ones). */
export const NATIVE_READS_PER_PASS = 500;

/**
 * Reads and books the changes of the chain's mined token transfers up to `height` not read yet
 * (CONFIRMING or SUCCESS, their fee final). A transfer at or below its payer's OPENING adjustment is
 * left alone: that opening balance already holds whatever it moved. Returns how many were booked.
 */
export async function bookNativeChanges(sequelize: Sequelize, reader: BalanceReader, chainId: number, nativeTokenId: number, height: bigint): Promise<number> {
  if (!reader.nativeChanges) return 0;
  const rows = await sequelize.query<{ id: string; application_id: number; tx_hash: string; payer: string; fee: string; block_height: string }>(
    `SELECT x.id::text AS id, x.application_id, x.tx_hash, coalesce(x.options->'feePayer'->>'address', x.from_address::text) AS payer, x.fee::text AS fee,
            x.block_height::text AS block_height
       FROM transfers x JOIN chain_tokens t ON t.id = x.chain_token_id
      WHERE x.chain_id = $1 AND t.contract IS NOT NULL AND x.status IN ('CONFIRMING','SUCCESS') AND x.fee_final AND x.fee IS NOT NULL
        AND x.tx_hash IS NOT NULL AND x.block_height IS NOT NULL AND x.block_height <= $3::bigint
        AND NOT EXISTS (SELECT 1 FROM reconcile_native_reads n WHERE n.chain_id = $1 AND n.tx_hash = x.tx_hash
                          AND n.address = coalesce(x.options->'feePayer'->>'address', x.from_address::text) COLLATE "C")
        AND NOT EXISTS (SELECT 1 FROM reconcile_adjustments a WHERE a.chain_id = $1 AND a.chain_token_id = $2 AND a.kind = 'OPENING'
                          AND a.address = coalesce(x.options->'feePayer'->>'address', x.from_address::text) COLLATE "C" AND a.height >= x.block_height)
      ORDER BY x.block_height, x.id LIMIT ${NATIVE_READS_PER_PASS}`,
    { bind: [chainId, nativeTokenId, height.toString()], type: QueryTypes.SELECT },
  );
  if (rows.length === 0) return 0;
  const transfers: UnreadTransfer[] = rows.map((r) => ({ id: r.id, applicationId: r.application_id, txHash: r.tx_hash, payer: r.payer, fee: BigInt(r.fee), blockHeight: BigInt(r.block_height) }));
  const reads = nativeReads(transfers, await reader.nativeChanges(transfers.map((x) => ({ txHash: x.txHash, address: x.payer }))));
  if (reads.length === 0) return 0;
  const byId = new Map(transfers.map((x) => [x.id, x]));
  const adjustments: AdjustmentRow[] = reads.flatMap((r): AdjustmentRow[] => {
    const x = byId.get(r.transferId)!;
    return r.adjustment === null ? [] : [{
      applicationId: x.applicationId, chainId, tokenId: nativeTokenId, address: r.address, amount: r.adjustment, kind: 'ACCOUNT_RENT', height: x.blockHeight, discrepancyId: null,
      note: `native coin transfer ${x.id}'s transaction moved beyond its recorded fee (token account rent), read from the node`, ref: r.txHash, createdBy: 'reconciliation',
    }];
  });
  await sequelize.transaction(async (t) => {
    await sequelize.query(
      `INSERT INTO reconcile_native_reads (chain_id, tx_hash, address, transfer_id, change)
       SELECT $1, u.tx, u.address, u.transfer::bigint, u.change::numeric FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS u(tx, address, transfer, change)
       ON CONFLICT DO NOTHING`,
      { bind: [chainId, reads.map((r) => r.txHash), reads.map((r) => r.address), reads.map((r) => r.transferId), reads.map((r) => r.change.toString())], transaction: t },
    );
    await addAdjustments(sequelize, t, adjustments);
  });
  return adjustments.length;
}
