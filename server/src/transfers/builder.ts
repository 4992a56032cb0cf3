import { craftTransfer, paying, withAmount } from '@wcs/core';
import type { AllocatedTransfer, ChainAdapter, KeyRef, KeyStore, PayingAdapter, PublicKey, SpendableOutput, TransferInput, TransferIntent, TransferKey, UnsignedTransfer } from '@wcs/core';
import { keyRefOf, type StoredKey } from './model';
import type { TransferRow } from './rows';

/**
 * From a stored transfer to what its adapter crafts: the request (every signing key resolved to
 * its KeyRef and public key, cached: a key's public key never changes), the node input it asks
 * for, the input shaped for an exact fee, and the crafted transaction with a fee taken out of a
 * whole balance. No I/O beyond the key store's public keys.
 */
export class TransferBuilder {
  private readonly publicKeys = new Map<string, PublicKey>();

  constructor(private readonly keyStore: () => KeyStore) {}

  private async publicKey(ref: KeyRef): Promise<PublicKey> {
    const k = `${ref.applicationId}/${ref.purpose}/${ref.spec.namespace}/${ref.index}`;
    let key = this.publicKeys.get(k);
    if (!key) {
      key = await this.keyStore().getPublicKey(ref);
      this.publicKeys.set(k, key);
    }
    return key;
  }

  /** The transfer's request without allocation, and every key that may sign for it by address. */
  async requestOf(adapter: ChainAdapter, r: TransferRow): Promise<{ base: TransferIntent; keys: Map<string, KeyRef>; fixedInputs: SpendableOutput[] | null }> {
    const keys = new Map<string, KeyRef>();
    const resolve = async (k: StoredKey): Promise<TransferKey> => {
      const ref = keyRefOf(r.application_id, adapter, k);
      keys.set(k.address, ref);
      return { address: k.address, publicKey: await this.publicKey(ref) };
    };
    const from = await resolve({ purpose: r.key_purpose, namespace: r.key_namespace, index: r.key_index, address: r.from_address });
    const o = r.options ?? {};
    const fixedInputs = o.inputs
      ? await Promise.all(o.inputs.map(async (i) => ({ txHash: i.txHash, vout: i.vout, amount: BigInt(i.amount), owner: await resolve(i.owner) })))
      : null;
    if (fixedInputs !== null && o.subtractFee !== true) throw new Error(`transfer ${r.id}: fixed inputs are a consolidation, whose fee comes out of the amount (subtractFee)`);
    const base: TransferIntent = {
      from: from.address, fromPublicKey: from.publicKey, to: r.to_address, memo: r.memo, contract: r.contract, amount: BigInt(r.amount),
      ...(o.feePayer ? { feePayer: await resolve(o.feePayer) } : {}),
      ...(o.closeTokenAccount ? { closeTokenAccount: true } : {}),
      ...(o.trustline ? { trustline: true as const } : {}),
      ...(o.call ? { call: { data: o.call.data, authorizations: o.call.authorizations } } : {}),
    };
    return { base, keys, fixedInputs };
  }

  /**
   * What the node is asked for the input: the request itself, except for a whole balance leaving
   * (feeFromAmount), where the node could not estimate sending all of it before the fee is taken
   * off: then a unit of it (the same transaction shape, so the same gas).
   */
  inputRequest(r: TransferRow, base: TransferIntent): TransferIntent {
    return r.options?.feeFromAmount ? { ...base, amount: 1n } : base;
  }

  /** The input a transfer is crafted on: the node's, made exact-fee where the transfer asks. */
  shapeInput(adapter: ChainAdapter, r: TransferRow, input: TransferInput): TransferInput {
    const exact = r.options?.exactFee;
    if (!exact) return input;
    const payer = paying(adapter);
    // only a sequence chain's crafter can make the fee charged exact (EVM under EIP-1559)
    if (payer.spendModel !== 'sequence' || !payer.transfers.exactFee) return input;
    return payer.transfers.exactFee(input, exact.maxPerUnit === null ? null : BigInt(exact.maxPerUnit));
  }

  /**
   * Crafts at the allocation; a fee taken out of a whole balance is subtracted first. Inputs that
   * fall short (utxo chains) are the typed result `ok: false`; any other refusal is thrown.
   */
  craft(adapter: ChainAdapter, r: TransferRow, transfer: AllocatedTransfer, input: TransferInput): CraftedTransfer {
    const payer = paying(adapter);
    let t = transfer;
    if (r.options?.feeFromAmount) {
      const fee = feeOf(payer, transfer, input);
      if (transfer.request.amount <= fee) throw new Error(`the fee ${fee} is not below the ${transfer.request.amount} to move`);
      t = withAmount(transfer, transfer.request.amount - fee);
    }
    const made = craftTransfer(payer, t, input);
    if (!made.ok) return made;
    const sent = t.spendModel === 'utxo' && t.request.subtractFee === true ? t.request.amount - made.unsigned.maxFee : t.request.amount;
    return { ok: true, transfer: t, unsigned: made.unsigned, sent };
  }
}

/** A crafted transfer (at its final allocation and amount, with what it sends), or inputs short by `shortfall`. */
export type CraftedTransfer =
  | { readonly ok: true; readonly transfer: AllocatedTransfer; readonly unsigned: UnsignedTransfer; readonly sent: bigint }
  | { readonly ok: false; readonly reason: 'INSUFFICIENT_INPUTS'; readonly shortfall: bigint };

/** The sequence a transfer was allocated (sequence chains), else null. */
export function sequenceOf(transfer: AllocatedTransfer): bigint | null {
  return transfer.spendModel === 'sequence' ? transfer.request.sequence : null;
}

/** What a transfer pays in fees at most, without its amount mattering: the crafter's maxFeeOf, else one craft. */
function feeOf(payer: PayingAdapter, transfer: AllocatedTransfer, input: TransferInput): bigint {
  if (payer.spendModel === 'sequence' && payer.transfers.maxFeeOf) return payer.transfers.maxFeeOf(transfer.request, input);
  const made = craftTransfer(payer, transfer, input);
  if (!made.ok) throw new Error(`the inputs fall ${made.shortfall} short of the amount and fee`);
  return made.unsigned.maxFee;
}
