import { craftTransfer, paying, sequenceNode, withAmount } from '@wcs/core';
import type { AllocatedTransfer, ChainAdapter, KeyStore, TransferInput, TransferIntent, TransferNode } from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';
import type { HotWallets } from '../withdrawals/hot-wallets';
import { DEFAULT_BATCH_LIMITS, delegatedSweepFee } from './delegated-decisions';

/** A plain native transfer's gas on EVM chains: what the fee wallet's gas top-up itself costs. */
export const TOP_UP_GAS = 21_000n;

/** EVM inputs carry their gas limit and price (adapters/evm EvmTransferInput): read for top-up arithmetic only. */
export function evmGas(input: TransferInput): { gasLimit: bigint; price: bigint } {
  const price = (input.maxFeePerGas ?? input.gasPrice) as string;
  return { gasLimit: BigInt(input.gasLimit as string), price: BigInt(price) };
}

/** What one sweep would cost: the fee in native base units (a gas top-up's own fee included), or why it cannot be priced. */
export type SweepQuote = { readonly ok: true; readonly fee: bigint } | { readonly ok: false; readonly reason: string };

/** The sweep to price: out of a deposit address (or memo chain's shared deposit account) that holds what it moves. */
export interface SweepToPrice {
  readonly applicationId: number;
  readonly from: string;
  /** The deposit key's index (a memo chain's shared account: its key index). */
  readonly keyIndex: number;
  readonly contract: string | null;
  readonly amount: bigint;
  /** Where it goes: the hot wallet, or a pass-through application's merchant address. */
  readonly to: string;
  readonly memo: string | null;
  /** The policy sweeps by delegation (EVM, EIP-7702): priced as one entry of a batch, not as a top-up and a sweep. */
  readonly delegated?: boolean;
}

/**
 * Prices a sweep as the processor will make it (docs/collection.md, "Pricing a sweep"): the node's
 * input for the sweep itself, out of the address that holds the funds, crafted (never signed). So
 * the price never depends on what the destination holds: a token the hot wallet has never held is
 * priced like any other (the withdrawal fee quote, a transfer *from* the hot wallet, cannot be made
 * until the hot wallet holds some). Per family, the shape the processor gives the sweep:
 * - EVM native: the whole balance, the fee out of it, exact (tip = max fee);
 * - EVM token: the token transfer at an exact fee, plus the gas top-up's own 21000 gas at the same
 *   price (the top-up itself is not a fee: it is the sweep's gas);
 * - Solana: the hot wallet pays, the token account closed: maxFee counts the rent of a token
 *   account the sweep creates at the destination when it has none;
 * - memo chains: the shared account pays its own fee.
 * utxo chains are not priced here (their consolidations are priced per input by the fee quote).
 */
export class SweepPricer {
  constructor(
    private readonly nodeOf: (chain: ChainView) => TransferNode,
    private readonly wallets: HotWallets,
    private readonly keyStore: () => KeyStore,
    /** Entries per batch the delegated sweeps make (WCS_COLLECT_BATCH_MAX_ENTRIES): a delegated sweep pays its part of a batch's base gas. */
    private readonly batchEntries: number = DEFAULT_BATCH_LIMITS.maxEntries,
  ) {}

  async quote(chain: ChainView, adapter: ChainAdapter, s: SweepToPrice): Promise<SweepQuote> {
    try {
      return { ok: true, fee: await this.price(chain, adapter, s) };
    } catch (e) {
      return { ok: false, reason: e instanceof Error ? e.message : String(e) };
    }
  }

  private async price(chain: ChainView, adapter: ChainAdapter, s: SweepToPrice): Promise<bigint> {
    const payer = paying(adapter);
    const keyStore = this.keyStore();
    const node = this.nodeOf(chain);
    const native = s.contract === null;
    const evm = payer.spendModel === 'sequence' && adapter.addressing === 'hd';
    const solana = payer.spendModel === 'expiring' && adapter.addressing === 'hd';
    const fromPublicKey = await keyStore.getPublicKey({ applicationId: s.applicationId, spec: adapter.keySpec('deposit'), purpose: 'deposit', index: s.keyIndex });
    let base: TransferIntent = { from: s.from, fromPublicKey, to: s.to, memo: s.memo, contract: s.contract, amount: s.amount };
    if (solana) {
      const hot = await this.wallets.ensure(s.applicationId, chain);
      base = { ...base, feePayer: { address: hot.address, publicKey: await keyStore.getPublicKey(hot.ref) }, ...(native ? {} : { closeTokenAccount: true }) };
    }
    // a whole native balance leaving (fee out of the amount): the node is asked for a unit of it, as the pipeline does
    const feeFromAmount = native && !solana;
    let input = await node.transferInput(feeFromAmount ? { ...base, amount: 1n } : base);
    const sweeps = payer.spendModel === 'sequence' && evm ? payer.delegatedSweeps : undefined;
    if (s.delegated && sweeps) {
      // one entry of a full batch, with its authorization (the planner reads no code: the first sweep of an address, the dearer one), at the fee per gas now
      return delegatedSweepFee({ entryGas: sweeps.entryGas({ token: !native, authorize: true }), baseGas: sweeps.batchBaseGas, maxEntries: this.batchEntries, pricePerGas: evmGas(input).price });
    }
    if (evm && payer.spendModel === 'sequence' && payer.transfers.exactFee) input = payer.transfers.exactFee(input, null);
    let transfer: AllocatedTransfer;
    switch (payer.spendModel) {
      case 'sequence':
        transfer = { spendModel: 'sequence', request: { ...base, sequence: await sequenceNode(adapter, node).nextSequence(s.from) } };
        break;
      case 'expiring':
        transfer = { spendModel: 'expiring', request: base };
        break;
      case 'utxo':
        throw new Error('utxo consolidations are priced per input by the fee quote, not here');
    }
    if (feeFromAmount && payer.spendModel === 'sequence' && payer.transfers.maxFeeOf) return payer.transfers.maxFeeOf(transfer.request, input);
    const made = craftTransfer(payer, feeFromAmount ? withAmount(transfer, s.amount) : transfer, input);
    if (!made.ok) throw new Error(`the sweep's inputs fall ${made.shortfall} short`);
    const fee = made.unsigned.maxFee;
    // EVM tokens: the fee wallet's top-up is a plain transfer at the same price
    return evm && !native ? fee + TOP_UP_GAS * evmGas(input).price : fee;
  }
}
