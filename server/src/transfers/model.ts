import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { ChainAdapter, KeyPurpose, KeyRef, SignedAuthorization } from '@wcs/core';

/**
 * What an outgoing transaction is for (docs/transfers.md). SWEEP_BATCH: one EVM transaction
 * sweeping many EIP-7702 delegated deposit addresses through the batch sweeper; DEPLOY: the
 * deployment of one of the service's contracts (a deposit forwarder, the batch sweeper) through
 * the deterministic deployment proxy. Both move no value of their own (amount 0).
 */
export type TransferKind = 'PAYOUT' | 'SWEEP' | 'TOP_UP' | 'COLD_TRANSFER' | 'TRUSTLINE' | 'SWEEP_BATCH' | 'DEPLOY';

/** Kinds whose transaction is a contract call moving no value of its own (amount 0 allowed). */
export const CALL_KINDS: readonly TransferKind[] = ['SWEEP_BATCH', 'DEPLOY'];

/**
 * READY: to be signed. SIGNED: its bytes are stored, no node has taken them yet. BROADCASTED: a
 * node took them. CONFIRMING: in a block. SUCCESS / FAILED: final (FAILED also for a transfer
 * refused before or at its broadcast).
 */
export type TransferStatus = 'READY' | 'SIGNED' | 'BROADCASTED' | 'CONFIRMING' | 'SUCCESS' | 'FAILED';


/** A key the KeyStore holds for an application, as a transfer records it: never key material. */
export interface StoredKey {
  readonly purpose: KeyPurpose;
  readonly namespace: string;
  readonly index: number;
  readonly address: string;
}

/** The shape of a transfer beyond (from, to, memo, token, amount); JSON in transfers.options. */
export interface TransferOptions {
  /** utxo chains: exactly these inputs, each spent by its owner's key (a consolidation). Absent: the pipeline picks the hot wallet's outputs. */
  readonly inputs?: ReadonlyArray<{ readonly txHash: string; readonly vout: number; readonly amount: string; readonly owner: StoredKey }>;
  /** utxo chains: the fee comes out of the amount (the sum of the inputs); no change. */
  readonly subtractFee?: boolean;
  /** Another key pays the fee (Solana sweeps: the hot wallet). */
  readonly feePayer?: StoredKey;
  /** Solana token sweeps: close the emptied token account, its rent to the fee payer. */
  readonly closeTokenAccount?: boolean;
  /**
   * The fee charged is exactly the crafted maxFee (adapter.exactFee), at most `maxPerUnit` per
   * fee unit when set (a token sweep paid for by a measured top-up): nothing is left behind.
   */
  readonly exactFee?: { readonly maxPerUnit: string | null };
  /** A whole native balance leaves: the amount sent is `amount` less the crafted fee. */
  readonly feeFromAmount?: boolean;
  /** Stellar: the transfer opens `from`'s own trustline to its token (changeTrust, kind TRUSTLINE); amount 1, nothing moves. */
  readonly trustline?: boolean;
  /** EVM contract calls (SWEEP_BATCH, DEPLOY): the call data and the EIP-7702 authorizations the KeyStore signed (TransferIntent.call). */
  readonly call?: { readonly data: string; readonly authorizations: readonly SignedAuthorization[] };
}

export interface NewTransfer {
  readonly applicationId: number;
  readonly chainId: number;
  readonly chainTokenId: number;
  readonly kind: TransferKind;
  readonly key: StoredKey;
  readonly to: string;
  readonly memo: string | null;
  readonly amount: bigint;
  readonly options?: TransferOptions;
}

/** The KeyRef of a stored key on a chain; the namespace must be the adapter's for that purpose. */
export function keyRefOf(applicationId: number, adapter: ChainAdapter, key: StoredKey): KeyRef {
  const spec = adapter.keySpec(key.purpose);
  if (spec.namespace !== key.namespace) throw new Error(`a ${key.purpose} key of namespace ${key.namespace} is not ${adapter.chain.code}'s (${spec.namespace})`);
  return { applicationId, spec, purpose: key.purpose, index: key.index };
}

/** Inserts transfers in READY, in order, in the caller's transaction; returns their ids (text). */
export async function createTransfers(sequelize: Sequelize, t: Transaction, list: readonly NewTransfer[]): Promise<string[]> {
  if (list.length === 0) return [];
  const rows = await sequelize.query<{ id: string }>(
    `INSERT INTO transfers (application_id, chain_id, chain_token_id, kind, key_purpose, key_namespace, key_index, from_address, to_address, memo, amount, options, status)
     SELECT u.app, u.chain, u.token, u.kind, u.purpose, u.ns, u.idx, u.from_address, u.to_address, u.memo, u.amount::numeric, u.options::jsonb, 'READY'
       FROM unnest($1::int[], $2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])
            WITH ORDINALITY AS u(app, chain, token, kind, purpose, ns, idx, from_address, to_address, memo, amount, options, n)
      ORDER BY u.n
     RETURNING id::text AS id`,
    {
      bind: [
        list.map((x) => x.applicationId), list.map((x) => x.chainId), list.map((x) => x.chainTokenId), list.map((x) => x.kind),
        list.map((x) => x.key.purpose), list.map((x) => x.key.namespace), list.map((x) => x.key.index), list.map((x) => x.key.address),
        list.map((x) => x.to), list.map((x) => x.memo), list.map((x) => x.amount.toString()), list.map((x) => JSON.stringify(x.options ?? {})),
      ],
      type: QueryTypes.SELECT,
      transaction: t,
    },
  );
  return rows.map((r) => r.id);
}
