import { paying } from '@wcs/core';
import type { ChainAdapter, KeyStore, TransferNode } from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import type { StoredKey, TransferOptions, NewTransfer } from '../transfers/model';
import { balancesAll, transferInputs } from '../transfers/node-calls';
import { topUpAmount } from './decisions';
import type { FeeWallets } from './fee-wallets';
import { ITEM_CHUNK, type ItemRow, type Launch } from './processor-items';
import { evmGas, TOP_UP_GAS } from './sweep-quote';

/** What the top-up path needs of the processor: launching items with their transfers, waits, keys, sweeps. */
export interface TopUpHost {
  launch(list: readonly Launch[]): Promise<number>;
  wait(list: ReadonlyArray<{ id: string; reason: string }>): Promise<void>;
  depositKey(adapter: ChainAdapter, item: ItemRow): StoredKey;
  sweep(chain: ChainView, item: ItemRow, key: StoredKey, to: string, amount: bigint, options: TransferOptions): NewTransfer;
}

/**
 * The EVM top-up path (docs/collection.md, "Per chain family"; the `topup` sweep mode, and the
 * delegated one's fallback where EIP-7702 cannot run): the fee wallet tops up each token
 * address's gas, then the address sweeps.
 */
export class TopUpSweeper {
  constructor(
    private readonly nodeOf: (chain: ChainView) => TransferNode,
    private readonly feeWallets: FeeWallets,
    private readonly keyStore: () => KeyStore,
    private readonly logger: Logger,
    private readonly host: TopUpHost,
  ) {}

  /**
   * EVM: native items sweep at once; token items need gas at the address: the sweep's exact fee at
   * the current price, less what the address holds, comes from the fee wallet first (TOPPING_UP),
   * once per item; FUNDED items (their top-up confirmed) sweep, paying at most the measured price.
   */
  async sweep(chain: ChainView, adapter: ChainAdapter, ready: ReadonlyArray<{ item: ItemRow; to: string; memo: string | null }>): Promise<number> {
    const node = this.nodeOf(chain);
    const payer = paying(adapter);
    // EVM is a sequence chain: its crafter makes a sweep's fee exact (EIP-1559)
    const exactFee = payer.spendModel === 'sequence' && payer.transfers.exactFee ? payer.transfers.exactFee.bind(payer.transfers) : null;
    const nativeToken = chain.tokens.find((t) => t.contract === null)!;
    const natives = ready.filter((r) => r.item.contract === null);
    const launchNatives = () => this.host.launch(natives.map(({ item, to }) => ({
      item, to, status: 'SWEEPING' as const,
      transfer: this.host.sweep(chain, item, this.host.depositKey(adapter, item), to, BigInt(item.amount), { feeFromAmount: true, exactFee: { maxPerUnit: null } }),
    })));
    const tokens = ready.filter((r) => r.item.contract !== null);
    if (tokens.length === 0) return launchNatives();
    let made = 0;
    const keyStore = this.keyStore();
    // every token item's sweep input in one set-based read (a JSON-RPC batch), the gas at each address beside it
    const requests = await Promise.all(tokens.map(async (r) => {
      const key = this.host.depositKey(adapter, r.item);
      const publicKey = await keyStore.getPublicKey({ applicationId: r.item.application_id, spec: adapter.keySpec('deposit'), purpose: 'deposit', index: key.index });
      return { r, key, request: { from: r.item.from_address, fromPublicKey: publicKey, to: r.to, memo: null, contract: r.item.contract, amount: BigInt(r.item.amount) } };
    }));
    // a FUNDED item was measured when its top-up was sized (gas limit and price stored): only the gas at its address is read again
    const measured = (r: (typeof tokens)[number]) => (r.item.status === 'FUNDED' && r.item.source.gasLimit !== undefined && r.item.fee_per_unit !== null
      ? { gasLimit: BigInt(r.item.source.gasLimit), price: BigInt(r.item.fee_per_unit) } : null);
    const toEstimate = requests.filter((x) => measured(x.r) === null);
    const [inputs, gasAt] = await Promise.all([
      transferInputs(node, toEstimate.map((x) => x.request)),
      balancesAll(node, requests.map((x) => ({ address: x.r.item.from_address, contract: null }))),
    ]);
    const inputOf = new Map(toEstimate.map((x, i) => [x, inputs[i]!]));
    const unread: Array<{ id: string; reason: string }> = [];
    const reads = requests.map((x, i) => {
      const known = measured(x.r);
      const input = known === null ? inputOf.get(x)! : null;
      const gasAtAddress = gasAt[i]!;
      if (input instanceof Error || gasAtAddress instanceof Error) {
        const error = input instanceof Error ? input : (gasAtAddress as Error);
        this.logger.warn('collection: gas not read; tried again next step', { chain: chain.code, item: x.r.item.id, error });
        unread.push({ id: x.r.item.id, reason: `the sweep's gas could not be read from the node (tried again next step): ${error.message}` });
        return null;
      }
      return { r: x.r, key: x.key, gasAtAddress, gas: known ?? evmGas(exactFee ? exactFee(input!, null) : input!) };
    });
    const sweeps: Launch[] = [];
    const topups: Launch[] = [];
    const waiting: Array<{ id: string; reason: string }> = [...unread];
    const byApp = new Map<number, bigint>();
    for (const x of reads) {
      if (!x) continue;
      const { r, key, gasAtAddress, gas } = x;
      const funded = r.item.status === 'FUNDED';
      // the price: measured when the top-up was sized (FUNDED), else now; never more than the address's gas pays for
      const price = funded && r.item.fee_per_unit !== null && BigInt(r.item.fee_per_unit) < gas.price ? BigInt(r.item.fee_per_unit) : gas.price;
      const need = gas.gasLimit * price;
      const short = topUpAmount(need, gasAtAddress);
      if (short === 0n || funded) {
        const affordable = gasAtAddress / gas.gasLimit;
        const cap = affordable < price ? affordable : price;
        if (cap === 0n) {
          waiting.push({ id: r.item.id, reason: `the address holds ${gasAtAddress} wei of gas, the sweep needs ${need}` });
          continue;
        }
        sweeps.push({ item: r.item, to: r.to, status: 'SWEEPING', transfer: this.host.sweep(chain, r.item, key, r.to, BigInt(r.item.amount), { exactFee: { maxPerUnit: cap.toString() } }) });
        continue;
      }
      const fee = await this.feeWallets.ensure(r.item.application_id, chain);
      const spare = byApp.get(r.item.application_id) ?? (await this.feeWallets.spendable(chain, fee));
      // the top-up's own fee: a plain transfer at the same price
      const cost = short + TOP_UP_GAS * gas.price;
      if (spare < cost) {
        waiting.push({ id: r.item.id, reason: `the fee wallet ${fee.address} holds too little for a top-up of ${short} wei (fund it)` });
        if (await this.feeWallets.alertLow(chain, fee.address, r.item.application_id, spare, cost, 'a gas top-up', 'token sweeps')) this.logger.warn('fee wallet too poor for a gas top-up: sweeps wait', { chain: chain.code, applicationId: r.item.application_id, address: fee.address });
        continue;
      }
      byApp.set(r.item.application_id, spare - cost);
      topups.push({
        item: r.item, to: r.to, status: 'TOPPING_UP', feePerUnit: price, gasLimit: gas.gasLimit,
        transfer: { applicationId: r.item.application_id, chainId: chain.id, chainTokenId: nativeToken.id, kind: 'TOP_UP', key: fee.key, to: r.item.from_address, memo: null, amount: short },
      });
    }
    await this.host.wait(waiting);
    // token work first (a top-up's confirmations are the long pole), then the native sweeps
    const tokenWork = (await this.host.launch(topups)) + (await this.host.launch(sweeps));
    made += tokenWork;
    // while a full queue of token items is being launched, the native sweeps wait a step, so the
    // top-ups are signed first and confirm while the natives are signed; token items that wait
    // (a poor fee wallet) launch nothing and hold nothing up
    const moreTokens = tokens.filter((r) => r.item.status === 'PLANNED').length >= ITEM_CHUNK;
    if (tokenWork > 0 && moreTokens && natives.length > 0) return made;
    made += await launchNatives();
    return made;
  }
}
