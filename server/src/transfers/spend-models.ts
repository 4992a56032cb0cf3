import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { paying, sequenceNode, type AllocatedTransfer, type ChainAdapter, type SpendableOutput, type SpendModel, type TransferInput, type TransferIntent, type TransferNode, type UtxoCrafter, type UtxoPaymentRequest } from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';

/** What a strategy needs of a transfer being signed. */
export interface Allocatable {
  readonly id: string;
  readonly applicationId: number;
  readonly fromAddress: string;
  /** utxo: inputs fixed by the owner (a consolidation); else the hot wallet's outputs are picked. */
  readonly fixedInputs: readonly SpendableOutput[] | null;
}

/**
 * One signing round's allocation, inside the transaction that stores the signed bytes: what
 * each transfer is built on (a sequence, inputs, or nothing), committed with them.
 */
export interface Allocation {
  /** The transfer at its allocated sequence / inputs; null: not now (too few confirmed outputs). */
  allocate(x: Allocatable, base: TransferIntent, input: TransferInput): AllocatedTransfer | null;
  /** `transfer` was signed and will be stored: what it holds is taken. */
  taken(x: Allocatable, transfer: AllocatedTransfer): void;
  /** Writes what was taken, in the round's transaction. */
  commit(t: Transaction): Promise<void>;
}

/** Reads before the round's transaction (node calls are never made under row locks). */
export interface SpendStrategy {
  readonly model: SpendModel;
  prepare(node: TransferNode, transfers: readonly Allocatable[]): Promise<unknown>;
  begin(t: Transaction, prepared: unknown, transfers: readonly Allocatable[]): Promise<Allocation>;
}

/**
 * `sequence` chains: per sending address, the allocator row is locked for the round and hands out
 * consecutive sequences from max(stored next, the node's next): no gaps, each used once; the next
 * value is stored with the signed transfers that consumed them.
 */
class SequenceStrategy implements SpendStrategy {
  readonly model = 'sequence' as const;
  constructor(private readonly sequelize: Sequelize, private readonly chain: ChainView, private readonly adapter: ChainAdapter) {}

  async prepare(transferNode: TransferNode, transfers: readonly Allocatable[]): Promise<Map<string, bigint>> {
    const node = sequenceNode(this.adapter, transferNode);
    const senders = [...new Set(transfers.map((x) => x.fromAddress))];
    if (node.nextSequences) {
      // one round trip; a sender the node could not answer for fails the round, as the single call would (tried again next step)
      const answers = await node.nextSequences(senders);
      const fault = answers.find((x): x is Error => x instanceof Error);
      if (fault) throw fault;
      return new Map(senders.map((a, i) => [a, answers[i] as bigint] as const));
    }
    return new Map(await Promise.all(senders.map(async (a) => [a, await node.nextSequence(a)] as const)));
  }

  async begin(t: Transaction, prepared: unknown, transfers: readonly Allocatable[]): Promise<Allocation> {
    const floors = prepared as Map<string, bigint>;
    const next = new Map<string, bigint>();
    const claimed = new Map<string, bigint>();
    // every sender's row in one statement, claimed in address order (two rounds never lock rows in opposite orders)
    const senders = [...new Set(transfers.map((x) => x.fromAddress))].sort();
    const rows = await this.sequelize.query<{ address: string; next: string }>(
      `INSERT INTO sequence_allocators (chain_id, address, next_sequence)
       SELECT $1, u.address, u.floor::numeric FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS u(address, floor, n) ORDER BY u.n
       ON CONFLICT (chain_id, address) DO UPDATE SET next_sequence = GREATEST(sequence_allocators.next_sequence, EXCLUDED.next_sequence)
       RETURNING address, next_sequence::text AS next`,
      { bind: [this.chain.id, senders, senders.map((a) => (floors.get(a) ?? 0n).toString())], type: QueryTypes.SELECT, transaction: t },
    );
    for (const r of rows) {
      next.set(r.address, BigInt(r.next));
      claimed.set(r.address, BigInt(r.next));
    }
    const { sequelize, chain } = this;
    const nextOf = (address: string): bigint => {
      const n = next.get(address);
      if (n === undefined) throw new Error(`${chain.code}: no sequence was claimed for ${address} in this round`);
      return n;
    };
    return {
      allocate: (x, base) => ({ spendModel: 'sequence', request: { ...base, sequence: nextOf(x.fromAddress) } }),
      taken: (x, transfer) => {
        if (transfer.spendModel !== 'sequence') throw new TypeError(`${chain.code}: a ${transfer.spendModel} transfer in a sequence round`);
        next.set(x.fromAddress, transfer.request.sequence + 1n);
      },
      async commit(tx) {
        const moved = [...next].filter(([a, n]) => claimed.get(a) !== n);
        if (moved.length === 0) return;
        await sequelize.query(
          `UPDATE sequence_allocators a SET next_sequence = u.next::numeric, updated_at = now() FROM unnest($2::text[], $3::text[]) AS u(address, next)
            WHERE a.chain_id = $1 AND a.address = u.address`,
          { bind: [chain.id, moved.map(([a]) => a), moved.map(([, n]) => n.toString())], transaction: tx },
        );
      },
    };
  }
}

/**
 * `utxo` chains: a transfer with fixed inputs (a consolidation) spends exactly those; any other
 * spends confirmed outputs of its application's hot wallet, chosen by the adapter's input
 * selection (Bitcoin: branch-and-bound, else largest first), each output marked spent by the
 * transfer in the round's transaction, so no output is spent twice.
 */
class UtxoStrategy implements SpendStrategy {
  readonly model = 'utxo' as const;
  constructor(private readonly sequelize: Sequelize, private readonly chain: ChainView, private readonly crafter: UtxoCrafter) {}

  async prepare(): Promise<null> {
    return null;
  }

  async begin(t: Transaction, _prepared: unknown, transfers: readonly Allocatable[]): Promise<Allocation> {
    const pools = new Map<number, { walletId: number; outputs: SpendableOutput[] }>();
    for (const appId of [...new Set(transfers.filter((x) => x.fixedInputs === null).map((x) => x.applicationId))].sort((a, b) => a - b)) {
      const [w] = await this.sequelize.query<{ id: number }>(
        // the wallet row first, as the ledger's output sync does: the two never lock outputs in opposite orders
        'SELECT id FROM hot_wallets WHERE application_id = $1 AND chain_id = $2 FOR NO KEY UPDATE',
        { bind: [appId, this.chain.id], type: QueryTypes.SELECT, transaction: t },
      );
      if (!w) continue;
      const rows = await this.sequelize.query<{ tx_hash: string; vout: number; amount: string }>(
        `SELECT tx_hash, vout, amount::text AS amount FROM hot_wallet_utxos
          WHERE hot_wallet_id = $1 AND spent_by IS NULL AND confirmations >= 1 ORDER BY amount DESC, tx_hash, vout FOR UPDATE`,
        { bind: [w.id], type: QueryTypes.SELECT, transaction: t },
      );
      pools.set(appId, { walletId: w.id, outputs: rows.map((r) => ({ txHash: r.tx_hash, vout: r.vout, amount: BigInt(r.amount) })) });
    }
    const spent: Array<{ wallet: number; transfer: string; tx: string; vout: number }> = [];
    const { sequelize, crafter, chain } = this;
    return {
      allocate: (x, base, input) => {
        // fixed inputs are a consolidation: the fee comes out of their sum, no change
        if (x.fixedInputs !== null) return { spendModel: 'utxo', request: { ...base, inputs: x.fixedInputs, subtractFee: true } };
        const pool = pools.get(x.applicationId);
        if (!pool) return null;
        const payment = { ...base, changeAddress: base.from, inputs: [] as readonly SpendableOutput[] };
        const picked = pickInputs(chain.code, crafter, pool.outputs, payment, input);
        return picked === null ? null : { spendModel: 'utxo', request: { ...payment, inputs: picked } };
      },
      taken: (x, transfer) => {
        if (x.fixedInputs !== null) return;
        if (transfer.spendModel !== 'utxo') throw new TypeError(`${chain.code}: a ${transfer.spendModel} transfer in a utxo round`);
        const pool = pools.get(x.applicationId);
        if (!pool) throw new Error(`${chain.code}: transfer ${x.id} was allocated without its application's pool`);
        for (const i of transfer.request.inputs) spent.push({ wallet: pool.walletId, transfer: x.id, tx: i.txHash, vout: i.vout });
      },
      async commit(tx) {
        if (spent.length === 0) return;
        await sequelize.query(
          `UPDATE hot_wallet_utxos SET spent_by = u.transfer FROM unnest($1::int[], $2::bigint[], $3::text[], $4::int[]) AS u(wallet, transfer, tx, vout)
            WHERE hot_wallet_utxos.hot_wallet_id = u.wallet AND hot_wallet_utxos.tx_hash = u.tx AND hot_wallet_utxos.vout = u.vout`,
          { bind: [spent.map((x) => x.wallet), spent.map((x) => x.transfer), spent.map((x) => x.tx), spent.map((x) => x.vout)], transaction: tx },
        );
      },
    };
  }
}

/** `expiring` chains: nothing is allocated; a transaction that expires is crafted anew (the tracker). */
class ExpiringStrategy implements SpendStrategy {
  readonly model = 'expiring' as const;
  async prepare(): Promise<null> {
    return null;
  }
  async begin(): Promise<Allocation> {
    return { allocate: (_x, base) => ({ spendModel: 'expiring', request: base }), taken: () => undefined, commit: async () => undefined };
  }
}

export function spendStrategy(sequelize: Sequelize, chain: ChainView, adapter: ChainAdapter): SpendStrategy {
  const payer = paying(adapter);
  switch (payer.spendModel) {
    case 'sequence':
      return new SequenceStrategy(sequelize, chain, payer);
    case 'utxo':
      return new UtxoStrategy(sequelize, chain, payer.transfers);
    case 'expiring':
      return new ExpiringStrategy();
  }
}

/**
 * The inputs of one payout from `pool` (they leave the pool): the adapter's own selection when it
 * has one (Bitcoin: branch-and-bound for a changeless spend, else largest first; tested in the
 * adapter), else outputs from the front of `pool` (largest first) until the crafter says they
 * cover amount and fee (its typed INSUFFICIENT_INPUTS result says they do not). Null when the
 * pool cannot cover it (the transfer waits for more confirmed outputs); a refusal of the transfer
 * itself (not its inputs) throws.
 */
export function pickInputs(chainCode: string, crafter: UtxoCrafter, pool: SpendableOutput[], request: UtxoPaymentRequest, input: TransferInput): SpendableOutput[] | null {
  const key = (o: SpendableOutput): string => `${o.txHash}:${o.vout}`;
  if (crafter.selectInputs) {
    const selection = crafter.selectInputs(pool, request, input);
    if (!selection.ok) return null;
    const chosen = new Set(selection.inputs.map(key));
    const picked = pool.filter((o) => chosen.has(key(o)));
    if (picked.length !== chosen.size) throw new Error(`${chainCode}: the input selection returned outputs that are not in the pool`);
    for (let i = pool.length - 1; i >= 0; i--) if (chosen.has(key(pool[i] as SpendableOutput))) pool.splice(i, 1);
    // craft() gets them in the order the adapter chose
    return [...selection.inputs];
  }
  for (let n = 1; n <= pool.length; n++) {
    const picked = pool.slice(0, n);
    if (!crafter.craft({ ...request, inputs: picked }, input).ok) continue;
    pool.splice(0, n);
    return picked;
  }
  return null;
}
