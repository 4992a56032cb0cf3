import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime } from '@wcs/core';
import type { AccountCode, ChainAdapter, DelegatedSweeps, DelegationNode, KeyStore, SignedAuthorization, TransferNode } from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import { raiseAlert } from '../deposits/scan-lease';
import { createTransfers, keyRefOf } from '../transfers/model';
import { enqueueCallbacks } from '../callbacks/outbox';
import { CollectNotices, loadItems } from './collect-events';
import { DEFAULT_BATCH_LIMITS, delegationVerdict, packBatches, type BatchEntry, type BatchLimits } from './delegated-decisions';
import type { FeeWallet, FeeWallets } from './fee-wallets';

/** The most gas a DEPLOY of one of the service's contracts uses (the two measured 720,475 together on anvil). */
const DEPLOY_GAS = 1_000_000n;
import { evmGas } from './sweep-quote';
import type { DelegationEvent } from '../contract/events';


/** A HOT_GATHER item in delegated mode, as the processor read it. */
export interface DelegatedItem {
  readonly id: string;
  readonly application_id: number;
  readonly chain_token_id: number;
  readonly from_address: string;
  readonly contract: string | null;
  readonly source: { key?: { namespace: string; index: number } };
}

/** An item ready to go (its destination known), as the processor hands it over. */
export interface ReadyItem {
  readonly item: DelegatedItem;
  readonly to: string;
}

/** How the processor launches a batch: the items and their one shared transfer, written in one transaction while they are still PLANNED. */
export type LaunchShared = (items: ReadonlyArray<{ item: DelegatedItem; to: string }>, transfer: Parameters<typeof createTransfers>[2][number]) => Promise<number>;

/** A chain's delegated-sweep parts, when it has them and its node runs EIP-7702: the catalogue's flag, then the node (docs/collection.md). */
export function delegatedParts(adapter: ChainAdapter, node: TransferNode): { sweeps: DelegatedSweeps; node: DelegationNode } | null {
  if (adapter.spendModel !== 'sequence' || adapter.addressing !== 'hd') return null;
  const sweeps = adapter.delegatedSweeps;
  const reads = node.delegation;
  if (!sweeps || !sweeps.enabled || !reads) return null;
  return { sweeps, node: reads };
}

/**
 * Delegated sweeps (EIP-7702; docs/collection.md, "Delegated sweeps"): PLANNED items of policies
 * in DELEGATED mode, on a chain whose catalogue flag is on and whose node runs EIP-7702, go in
 * batches: one SWEEP_BATCH transfer of the application's fee wallet calls the batch sweeper, which
 * calls each deposit address's forwarder. Before the first batch of a collector, its forwarder and
 * the chain's batch sweeper are deployed (DEPLOY transfers through the deterministic deployment
 * proxy, once each). An address's code decides its entry: delegated to the current forwarder, it
 * goes as it is; without code (or delegated to an older forwarder of ours) it carries an
 * authorization the KeyStore signs with its deposit key at its current nonce; delegated elsewhere,
 * its item fails (DELEGATION_FOREIGN), the address is blocked and alerted, and it is not swept.
 */
export class DelegatedSweeper {
  private readonly supportSaid = new Map<number, string>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly feeWallets: FeeWallets,
    private readonly keyStore: () => KeyStore,
    private readonly logger: Logger,
    private readonly limits: BatchLimits = DEFAULT_BATCH_LIMITS,
  ) {}

  /**
   * Whether delegated items of the chain can go now: null when they can, else why not (the items
   * then take the top-up path; the reason is logged once per chain until it changes).
   */
  async unsupported(chain: ChainView, adapter: ChainAdapter, node: TransferNode): Promise<string | null> {
    const parts = delegatedParts(adapter, node);
    if (parts === null) {
      const reason = adapter.spendModel === 'sequence' && adapter.delegatedSweeps && !adapter.delegatedSweeps.enabled
        ? `${chain.code}: delegated sweeps are off in the catalogue (chain option eip7702 "off")`
        : `${chain.code} has no delegated sweeps (EIP-7702)`;
      return this.said(chain, reason);
    }
    const support = await parts.node.support().catch((e: unknown) => ({ ok: false as const, reason: `the node could not be asked: ${e instanceof Error ? e.message : String(e)}` }));
    if (support.ok) {
      this.supportSaid.delete(chain.id);
      return null;
    }
    return this.said(chain, `${chain.code}: the node does not run delegated sweeps now (${support.reason})`);
  }

  /** The reason, logged once per chain until it changes. */
  private said(chain: ChainView, reason: string): string {
    if (this.supportSaid.get(chain.id) !== reason) {
      this.supportSaid.set(chain.id, reason);
      this.logger.warn('delegated sweeps not possible here: the items take the top-up path', { chain: chain.code, reason });
    }
    return reason;
  }

  /** Launches the batches of the ready delegated items; returns how many items went, and the items that wait with their reason. */
  async step(chain: ChainView, adapter: ChainAdapter, node: TransferNode, ready: readonly ReadyItem[], launch: LaunchShared): Promise<{ made: number; waiting: Array<{ id: string; reason: string }> }> {
    const parts = delegatedParts(adapter, node);
    if (parts === null || ready.length === 0) return { made: 0, waiting: [] };
    const { sweeps } = parts;
    const waiting: Array<{ id: string; reason: string }> = [];
    let made = 0;
    // one group per (application, collector): one forwarder, one fee wallet
    const groups = new Map<string, ReadyItem[]>();
    for (const r of ready) {
      const k = `${r.item.application_id}/${r.to.toLowerCase()}`;
      groups.set(k, [...(groups.get(k) ?? []), r]);
    }
    const sweeper = sweeps.batchSweeper();
    const ours = await this.ourForwarders(chain.id);
    for (const list of groups.values()) {
      const applicationId = list[0]!.item.application_id;
      const forwarder = sweeps.forwarder(list[0]!.to);
      const fee = await this.feeWallets.ensure(applicationId, chain);
      const addresses = [...new Set(list.map((r) => r.item.from_address))];
      const codes = await parts.node.codes([sweeper.address, forwarder.address, ...addresses]);
      const price = await this.pricePerGas(adapter, node, list);
      if (price instanceof Error) {
        waiting.push(...list.map((r) => ({ id: r.item.id, reason: `the fee per gas could not be read from the node (tried again next step): ${price.message}` })));
        continue;
      }
      // the contracts first: each deployed once, by a DEPLOY transfer of this fee wallet
      const pending = await this.ensureDeployed(chain, applicationId, fee, price, [
        { role: 'BATCH_SWEEPER' as const, d: sweeper, collector: null, code: codes[0]! },
        { role: 'FORWARDER' as const, d: forwarder, collector: list[0]!.to, code: codes[1]! },
      ]);
      if (pending !== null) {
        waiting.push(...list.map((r) => ({ id: r.item.id, reason: pending })));
        continue;
      }
      const codeOf = new Map(addresses.map((a, i) => [a, codes[i + 2]!]));
      const blocked = await this.blockedAddresses(chain.id, addresses);
      const entries: Array<BatchEntry<ReadyItem>> = [];
      const authorize = new Set<string>();
      for (const r of list) {
        const a = r.item.from_address;
        if (blocked.has(a)) {
          waiting.push({ id: r.item.id, reason: `the address is blocked: it was found delegated to code that is not the service's forwarder (delegation block ${blocked.get(a)})` });
          continue;
        }
        const code = codeOf.get(a)!;
        if (code instanceof Error) {
          waiting.push({ id: r.item.id, reason: `the address's code could not be read from the node (tried again next step): ${code.message}` });
          continue;
        }
        const verdict = delegationVerdict(code, forwarder.address, ours);
        if (verdict.kind === 'FOREIGN') {
          await this.block(chain, r, code, verdict.delegate);
          continue;
        }
        if (verdict.kind === 'AUTHORIZE') authorize.add(a);
        entries.push({ item: r, address: a, authorize: verdict.kind === 'AUTHORIZE', gas: sweeps.entryGas({ token: r.item.contract !== null, authorize: verdict.kind === 'AUTHORIZE' }) });
      }
      if (entries.length === 0) continue;
      // the authorizations: each address's current nonce, signed by the KeyStore with its deposit key
      const signed = await this.authorizations(chain, adapter, sweeps, parts.node, forwarder.address, entries.filter((e) => authorize.has(e.address)).map((e) => e.item.item));
      for (const [id, reason] of signed.failed) waiting.push({ id, reason });
      const go = entries.filter((e) => !signed.failed.has(e.item.item.id));
      const batches = packBatches(go, { maxEntries: this.limits.maxEntries, maxGas: this.limits.maxGas, baseGas: sweeps.batchBaseGas });
      const nativeToken = chain.tokens.find((t) => t.contract === null)!;
      if (go.length === 0) continue;
      let spare = await this.feeWallets.spendable(chain, fee);
      for (const batch of batches) {
        const auths = [...new Set(batch.filter((e) => e.authorize).map((e) => e.address))].map((a) => signed.byAddress.get(a)!);
        const data = sweeps.batchData(batch.map((e) => ({ account: e.address, token: e.item.item.contract })));
        // the fee wallet must hold the batch's most gas at a generous price: a rough floor checked here, the exact one by the pipeline
        const gas = batch.reduce((s, e) => s + e.gas, sweeps.batchBaseGas);
        const cost = gas * price;
        if (spare < cost) {
          waiting.push(...batch.map((e) => ({ id: e.item.item.id, reason: `the fee wallet ${fee.address} holds too little for a batch sweep of up to ${gas} gas (${cost} wei; fund it)` })));
          if (await this.feeWallets.alertLow(chain, fee.address, applicationId, spare, cost, 'a batch sweep', 'delegated sweeps')) {
            this.logger.warn('fee wallet too poor for a batch sweep: delegated sweeps wait', { chain: chain.code, applicationId, address: fee.address });
          }
          continue;
        }
        made += await launch(batch.map((e) => e.item), {
          applicationId, chainId: chain.id, chainTokenId: nativeToken.id, kind: 'SWEEP_BATCH', key: fee.key, to: sweeper.address, memo: null, amount: 0n,
          options: { call: { data, authorizations: auths } },
        });
        spare = await this.feeWallets.spendable(chain, fee);
      }
    }
    return { made, waiting };
  }

  /**
   * The fee per gas now, read as the node prices an item's own transfer (the address holds what
   * it moves, so the estimate succeeds): a native item's first, then one item per token, until
   * one answers: a token whose transfers revert (paused) never holds up the others' price.
   */
  private async pricePerGas(adapter: ChainAdapter, node: TransferNode, items: readonly ReadyItem[]): Promise<bigint | Error> {
    const spec = adapter.keySpec('deposit');
    const tried = new Set<string>();
    let last: Error = new Error('no item to price from');
    for (const r of [...items.filter((x) => x.item.contract === null), ...items.filter((x) => x.item.contract !== null)]) {
      const k = r.item.contract ?? 'native';
      if (tried.has(k)) continue;
      tried.add(k);
      try {
        const fromPublicKey = await this.keyStore().getPublicKey({ applicationId: r.item.application_id, spec, purpose: 'deposit', index: r.item.source.key?.index ?? 0 });
        return evmGas(await node.transferInput({ from: r.item.from_address, fromPublicKey, to: r.to, memo: null, contract: r.item.contract, amount: 1n })).price;
      } catch (e) {
        last = e instanceof Error ? e : new Error(String(e));
      }
    }
    return last;
  }

  /** Every forwarder of the service on the chain (lowercase): a delegation to one of them is ours (re-delegated when its collector changed). */
  private async ourForwarders(chainId: number): Promise<Set<string>> {
    const rows = await this.sequelize.query<{ address: string }>(`SELECT address FROM evm_contracts WHERE chain_id = $1 AND role = 'FORWARDER'`, { bind: [chainId], type: QueryTypes.SELECT });
    return new Set(rows.map((r) => r.address.toLowerCase()));
  }

  /**
   * null when every contract has code; else why the items wait. A contract without code gets its
   * DEPLOY transfer unless one is open (at most one per contract; a failed one is made again).
   */
  private async ensureDeployed(chain: ChainView, applicationId: number, fee: FeeWallet, price: bigint, contracts: ReadonlyArray<{ role: 'FORWARDER' | 'BATCH_SWEEPER'; d: { address: string; deployer: string; deployData: string }; collector: string | null; code: AccountCode | Error }>): Promise<string | null> {
    const reasons: string[] = [];
    for (const c of contracts) {
      if (c.code instanceof Error) {
        reasons.push(`the code of ${c.d.address} could not be read (tried again next step): ${c.code.message}`);
        continue;
      }
      if (c.code.kind === 'CONTRACT') {
        await this.sequelize.query(
          `INSERT INTO evm_contracts (chain_id, address, role, collector, deployed_at) VALUES ($1, $2, $3, $4, now())
           ON CONFLICT (chain_id, address) DO UPDATE SET deployed_at = coalesce(evm_contracts.deployed_at, now())`,
          { bind: [chain.id, c.d.address, c.role, c.collector] },
        );
        continue;
      }
      const nativeToken = chain.tokens.find((t) => t.contract === null)!;
      // a fee wallet that cannot pay the deployment makes no transfer (a refused one would be made again every step)
      const cost = DEPLOY_GAS * price;
      const spare = await this.feeWallets.spendable(chain, fee);
      const open = await this.sequelize.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM evm_contracts e JOIN transfers x ON x.id = e.transfer_id WHERE e.chain_id = $1 AND e.address = $2 AND x.status <> 'FAILED'`,
        { bind: [chain.id, c.d.address], type: QueryTypes.SELECT },
      );
      if (open[0]!.n === 0 && spare < cost) {
        if (await this.feeWallets.alertLow(chain, fee.address, applicationId, spare, cost, 'deploying the service\'s contracts', 'delegated sweeps')) {
          this.logger.warn('fee wallet too poor to deploy the delegated sweeps\' contracts: they wait', { chain: chain.code, applicationId, address: fee.address });
        }
        reasons.push(`the fee wallet ${fee.address} holds too little to deploy the ${c.role === 'FORWARDER' ? 'forwarder' : 'batch sweeper'} (up to ${cost} wei; fund it)`);
        continue;
      }
      const key = fee.key;
      const id = await this.sequelize.transaction(async (t) => {
        await this.sequelize.query(`INSERT INTO evm_contracts (chain_id, address, role, collector) VALUES ($1, $2, $3, $4) ON CONFLICT (chain_id, address) DO NOTHING`, {
          bind: [chain.id, c.d.address, c.role, c.collector], transaction: t,
        });
        const [row] = await this.sequelize.query<{ transfer_id: string | null; status: string | null }>(
          `SELECT e.transfer_id::text AS transfer_id, x.status FROM evm_contracts e LEFT JOIN transfers x ON x.id = e.transfer_id WHERE e.chain_id = $1 AND e.address = $2 FOR UPDATE OF e`,
          { bind: [chain.id, c.d.address], type: QueryTypes.SELECT, transaction: t },
        );
        // an open deployment, or one that succeeded whose code the node does not show yet: wait for it
        if (row?.transfer_id && row.status !== 'FAILED') return row.transfer_id;
        const [made] = await createTransfers(this.sequelize, t, [{
          applicationId, chainId: chain.id, chainTokenId: nativeToken.id, kind: 'DEPLOY', key, to: c.d.deployer, memo: null, amount: 0n,
          options: { call: { data: c.d.deployData, authorizations: [] } },
        }]);
        await this.sequelize.query('UPDATE evm_contracts SET transfer_id = $3 WHERE chain_id = $1 AND address = $2', { bind: [chain.id, c.d.address, made], transaction: t });
        this.logger.info('delegated sweeps: deploying a contract of the service', { chain: chain.code, role: c.role, address: c.d.address, transfer: made });
        return made!;
      });
      reasons.push(`the ${c.role === 'FORWARDER' ? 'forwarder' : 'batch sweeper'} ${c.d.address} is being deployed (transfer ${id})`);
    }
    return reasons.length === 0 ? null : reasons.join('; ');
  }

  /** Open delegation blocks among `addresses`: address → block id. */
  private async blockedAddresses(chainId: number, addresses: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.sequelize.query<{ address: string; id: string }>(
      'SELECT address, id::text AS id FROM delegation_blocks WHERE chain_id = $1 AND address = ANY($2::text[]) AND released_at IS NULL',
      { bind: [chainId, addresses], type: QueryTypes.SELECT },
    );
    return new Map(rows.map((r) => [r.address, r.id]));
  }

  /**
   * A deposit address delegated to code that is not the service's forwarder (or holding contract
   * code): anyone holding its key could have done it, so its sweeps stop. In one transaction: the
   * block (at most one open per address) with its `delegation` event (bizType TRANSFER, like a
   * custody outflow: a security signal; docs/chain-events.md), a DELEGATION_FOREIGN alert, and its
   * item FAILED with its `collect` callback.
   */
  private async block(chain: ChainView, r: ReadyItem, code: AccountCode, delegate: string | null): Promise<void> {
    const what = code.kind === 'CONTRACT' ? 'holds contract code' : `is delegated to ${delegate} (EIP-7702), not to the service's forwarder`;
    await this.sequelize.transaction(async (t) => {
      const [b] = await this.sequelize.query<{ id: string }>(
        `INSERT INTO delegation_blocks (application_id, chain_id, address, found, delegate) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (chain_id, address) WHERE released_at IS NULL DO NOTHING RETURNING id::text AS id`,
        { bind: [r.item.application_id, chain.id, r.item.from_address, code.kind === 'CONTRACT' ? 'CONTRACT' : 'DELEGATED', delegate], type: QueryTypes.SELECT, transaction: t },
      );
      if (b) {
        const [user] = await this.sequelize.query<{ external_user_id: string; created_at: Date }>(
          `SELECT a.external_user_id, (SELECT found_at FROM delegation_blocks WHERE id = $4) AS created_at FROM addresses a
            WHERE a.application_id = $1 AND a.chain_id = $2 AND a.address = $3 ORDER BY a.id LIMIT 1`,
          { bind: [r.item.application_id, chain.id, r.item.from_address, b.id], type: QueryTypes.SELECT, transaction: t },
        );
        await enqueueCallbacks(this.sequelize, t, [{
          applicationId: r.item.application_id, bizType: 'TRANSFER', bizId: Number(b.id),
          payload: delegationPayload({ id: b.id, applicationId: r.item.application_id, chainId: chain.id, address: r.item.from_address, externalUserId: user?.external_user_id ?? null, found: code.kind === 'CONTRACT' ? 'CONTRACT' : 'DELEGATED', delegate, at: user?.created_at ?? new Date() }),
        }]);
        await raiseAlert(this.sequelize, t, chain.id, 'DELEGATION_FOREIGN',
          `${chain.code}: deposit address ${r.item.from_address} (application ${r.item.application_id}) ${what}: its key signed a delegation the service did not; its sweeps stop (delegation block ${b.id}); move what it holds and rotate as docs/collection.md says`,
          { applicationId: r.item.application_id, address: r.item.from_address, found: code.kind, delegate, block: b.id });
      }
      await this.sequelize.query(
        `UPDATE collection_items SET status = 'FAILED', failure_code = 'DELEGATION_FOREIGN', failure_message = left($2, 256), finished_at = now(), updated_at = now()
          WHERE id = $1 AND status = 'PLANNED'`,
        { bind: [r.item.id, `the deposit address ${what}: not swept`], transaction: t },
      );
      const notices = new CollectNotices();
      for (const i of await loadItems(this.sequelize, t, `i.id = $1 AND i.status = 'FAILED'`, [r.item.id])) notices.add(i);
      await notices.flush(this.sequelize, t);
    });
    this.logger.warn('deposit address delegated to foreign code: its sweeps stop', { chain: chain.code, address: r.item.from_address, found: code.kind, delegate });
  }

  /**
   * The authorizations of the addresses that need one: each address's nonce now (the node), the
   * digest the adapter makes for (this chain, forwarder, nonce), signed by the KeyStore with the
   * deposit key. An address whose nonce cannot be read, or whose key does not sign, waits.
   */
  private async authorizations(chain: ChainView, adapter: ChainAdapter, sweeps: DelegatedSweeps, node: DelegationNode, forwarder: string, items: readonly DelegatedItem[]) {
    const failed = new Map<string, string>();
    const byAddress = new Map<string, SignedAuthorization>();
    const first = new Map<string, DelegatedItem>();
    for (const i of items) if (!first.has(i.from_address)) first.set(i.from_address, i);
    const addresses = [...first.keys()];
    if (addresses.length === 0) return { failed, byAddress };
    const nonces = await node.nonces(addresses);
    const spec = adapter.keySpec('deposit');
    const keyStore = this.keyStore();
    await Promise.all(addresses.map(async (address, i) => {
      const nonce = nonces[i]!;
      const item = first.get(address)!;
      const fail = (reason: string) => { for (const x of items) if (x.from_address === address) failed.set(x.id, reason); };
      if (nonce instanceof Error) return fail(`the address's nonce could not be read (tried again next step): ${nonce.message}`);
      try {
        const ref = keyRefOf(item.application_id, adapter, { purpose: 'deposit', namespace: spec.namespace, index: item.source.key?.index ?? 0, address });
        const sig = await keyStore.sign(ref, sweeps.authorizationDigest(forwarder, nonce));
        if (sig.recovery !== 0 && sig.recovery !== 1) throw new Error('the key store gave no recovery id');
        const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;
        byAddress.set(address, {
          authority: address, chainId: String(chain.evmChainId), address: forwarder, nonce: nonce.toString(), yParity: sig.recovery,
          r: hex(sig.bytes.subarray(0, 32)), s: hex(sig.bytes.subarray(32, 64)),
        });
      } catch (e) {
        fail(`the authorization was not signed (tried again next step): ${e instanceof Error ? e.message : String(e)}`);
      }
    }));
    return { failed, byAddress };
  }
}

/**
 * The `delegation` event (bizType TRANSFER, bizId the block's id; docs/chain-events.md, "The
 * `delegation` callback"): a deposit address found delegated to code the service did not put there.
 */
export function delegationPayload(d: { id: string; applicationId: number; chainId: number; address: string; externalUserId: string | null; found: 'DELEGATED' | 'CONTRACT'; delegate: string | null; at: Date }): DelegationEvent {
  return {
    event: 'delegation',
    id: Number(d.id),
    applicationId: d.applicationId,
    chainId: d.chainId,
    addressKind: 'DEPOSIT',
    address: d.address,
    externalUserId: d.externalUserId,
    found: d.found,
    delegate: d.delegate,
    detectedTime: formatLocalDateTime(d.at),
  };
}
