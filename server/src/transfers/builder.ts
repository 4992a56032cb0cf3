import { paying } from '@wcs/core';
import type { ChainAdapter, KeyRef, KeyStore, PublicKey, SpendableOutput, TransferInput, TransferKey, TransferRequest, UnsignedTransfer } from '@wcs/core';
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
  async requestOf(adapter: ChainAdapter, r: TransferRow): Promise<{ base: TransferRequest; keys: Map<string, KeyRef>; fixedInputs: SpendableOutput[] | null }> {
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
    const base: TransferRequest = {
      from: from.address, fromPublicKey: from.publicKey, to: r.to_address, memo: r.memo, contract: r.contract, amount: BigInt(r.amount),
      ...(o.subtractFee ? { subtractFee: true } : {}),
      ...(o.feePayer ? { feePayer: await resolve(o.feePayer) } : {}),
      ...(o.closeTokenAccount ? { closeTokenAccount: true } : {}),
    };
    return { base, keys, fixedInputs };
  }

  /**
   * What the node is asked for the input: the request itself, except for a whole balance leaving
   * (feeFromAmount), where the node could not estimate sending all of it before the fee is taken
   * off: then a unit of it (the same transaction shape, so the same gas).
   */
  inputRequest(r: TransferRow, base: TransferRequest): TransferRequest {
    return r.options?.feeFromAmount ? { ...base, amount: 1n } : base;
  }

  /** The input a transfer is crafted on: the node's, made exact-fee where the transfer asks. */
  shapeInput(adapter: ChainAdapter, r: TransferRow, input: TransferInput): TransferInput {
    const exact = r.options?.exactFee;
    const crafter = paying(adapter).transfers;
    if (!exact || !crafter.exactFee) return input;
    return crafter.exactFee(input, exact.maxPerUnit === null ? null : BigInt(exact.maxPerUnit));
  }

  /** Crafts at the allocated request; a fee taken out of a whole balance is subtracted first. */
  craft(adapter: ChainAdapter, r: TransferRow, request: TransferRequest, input: TransferInput): { request: TransferRequest; unsigned: UnsignedTransfer; sent: bigint } {
    const crafter = paying(adapter).transfers;
    let req = request;
    if (r.options?.feeFromAmount) {
      const fee = crafter.maxFeeOf ? crafter.maxFeeOf(request, input) : crafter.craft(request, input).maxFee;
      if (request.amount <= fee) throw new Error(`the fee ${fee} is not below the ${request.amount} to move`);
      req = { ...request, amount: request.amount - fee };
    }
    const unsigned = crafter.craft(req, input);
    const sent = req.subtractFee ? req.amount - unsigned.maxFee : req.amount;
    return { request: req, unsigned, sent };
  }
}
