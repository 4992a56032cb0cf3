import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import {
  KEY_INDEX_LIMIT, isChainRpcError,
  type AdapterRegistry, type ChainAdapter, type ChainEndpoint, type KeyStore, type PublicKey, type SequenceTransferNode, type TransferNode,
} from '@wcs/core';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import { raiseAlert } from '../deposits/scan-lease';

/** Addresses looked up per batch (one node round trip per chain where the node takes batches). */
const BATCH = 50;
/** Longest window looked at index by index; a longer one (a very old backup) is looked at from its start up to this many. */
export const MAX_WINDOW = 100_000;

interface GapRow {
  id: string;
  application_id: number;
  namespace: string;
  from_index: string;
  to_index: string;
  application_known: boolean;
  environment: 'test' | 'live' | null;
}

/** An address of the window that has history on a chain. */
export interface UsedAddress {
  readonly applicationId: number;
  readonly namespace: string;
  readonly keyIndex: number;
  readonly chainCode: string;
  readonly chainId: number;
  readonly address: string;
  /** What the node showed: the account's sequence / nonce, balances in base units (native: "native"). */
  readonly evidence: Record<string, string>;
}

/** One gap's outcome. */
export interface GapCheck {
  readonly gapId: string;
  readonly used: readonly UsedAddress[];
  /** Chains of the namespace that could not be asked (code: why). */
  readonly unchecked: readonly string[];
}

function hasSequence(node: TransferNode): node is SequenceTransferNode {
  return typeof (node as Partial<SequenceTransferNode>).nextSequence === 'function';
}

/** Node answers that concern one token contract (it does not answer balanceOf), not the node: that token is left out. */
function tokenFault(e: unknown): boolean {
  return isChainRpcError(e) && (e.errorName === 'RPC_BAD_RESPONSE' || e.errorName === 'RPC_ERROR');
}

/**
 * Whether each address has history on a chain: a used sequence / nonce, or any balance of the
 * native coin or a listed token. A token whose contract does not answer (not deployed on this
 * node's chain, not an ERC-20) is left out and named in `unreadable`; any other failure is thrown
 * (the window is looked at again later).
 */
async function evidenceOf(node: TransferNode, chain: ChainView, addresses: readonly string[], unreadable: Map<string, string>): Promise<Array<Record<string, string>>> {
  const out: Array<Record<string, string>> = addresses.map(() => ({}));
  if (hasSequence(node)) {
    const seqs = node.nextSequences ? await node.nextSequences(addresses) : await Promise.all(addresses.map((a) => node.nextSequence(a)));
    seqs.forEach((s, i) => {
      if (s instanceof Error) throw s;
      if (s > 0n) out[i]!.sequence = s.toString();
    });
  }
  const contracts: Array<string | null> = [null, ...chain.tokens.map((t) => t.contract).filter((c): c is string => c !== null && !unreadable.has(`${chain.code}:${c}`))];
  const pairs = addresses.flatMap((address, i) => contracts.map((contract) => ({ i, address, contract })));
  const balances: Array<bigint | Error> = node.balances
    ? await node.balances(pairs)
    : (await Promise.allSettled(pairs.map((p) => node.balance(p.address, p.contract)))).map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error)));
  balances.forEach((b, k) => {
    const { i, contract } = pairs[k]!;
    if (b instanceof Error) {
      if (contract !== null && tokenFault(b)) {
        unreadable.set(`${chain.code}:${contract}`, b.message);
        return;
      }
      throw b;
    }
    if (b > 0n) out[i]![contract ?? 'native'] = b.toString();
  });
  return out;
}

/**
 * Looks up on chain the deposit addresses of the windows a restore lost (key_index_gaps, written by
 * KeyIndexMarkGuard): every index of the window, on every chain of the namespace (of the
 * application's environment; both when the application is missing from the restored copy) that
 * has an RPC endpoint and balance reads. An address with history (a used nonce / sequence, or a
 * balance of the native coin or a listed token) was handed out after the backup: one operator
 * alert ADDRESS_IN_LOST_WINDOW each, with what the node showed. A key-per-ref store (PKCS#11)
 * answers only indices whose key was generated; nothing is generated here. A window is marked
 * checked once every chain that can be asked answered; a node failure leaves it for the next try
 * (every `retryMs`, while the process runs).
 */
export class LostWindowChecker {
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly catalogue: Catalogue,
    private readonly registry: AdapterRegistry,
    private readonly endpoints: ReadonlyMap<string, ChainEndpoint>,
    private readonly keystore: KeyStore,
    private readonly logger: Logger,
    private readonly options: { readonly retryMs?: number; readonly keyStoreReady?: () => void } = {},
  ) {}

  /** Starts a pass now (or right after the running one). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      let pending = false;
      try {
        pending = (await this.checkPending()).pending > 0;
      } catch (e) {
        pending = true;
        this.logger.warn('lost-window check failed; retrying later', { error: (e as Error).message });
      }
      if (pending && !this.stopped && !this.timer) {
        this.timer = setTimeout(() => {
          this.timer = null;
          this.kick();
        }, this.options.retryMs ?? 60_000);
        this.timer.unref();
      }
    } while (this.again && !this.stopped);
  }

  /** One pass over the unchecked windows. Returns those checked now and those left for later. */
  async checkPending(): Promise<{ checked: GapCheck[]; pending: number }> {
    const checked: GapCheck[] = [];
    const failed = new Set<string>();
    for (;;) {
      if (this.stopped) break;
      const done = await this.sequelize.transaction(async (t) => {
        const [gap] = await this.sequelize.query<GapRow>(
          `SELECT g.id::text AS id, g.application_id, g.namespace, g.from_index::text AS from_index, g.to_index::text AS to_index, g.application_known, a.environment
             FROM key_index_gaps g LEFT JOIN applications a ON a.id = g.application_id
            WHERE g.checked_at IS NULL AND NOT (g.id::text = ANY($1::text[]))
            ORDER BY g.id LIMIT 1 FOR UPDATE OF g SKIP LOCKED`,
          { bind: [[...failed]], type: QueryTypes.SELECT, transaction: t },
        );
        if (!gap) return null;
        try {
          const result = await this.checkGap(gap, t);
          await this.sequelize.query(
            `UPDATE key_index_gaps SET checked_at = now(), with_history = $2, unchecked_chains = $3, last_error = NULL WHERE id = $1`,
            { bind: [gap.id, result.used.length, result.unchecked.length ? result.unchecked.join('; ') : null], transaction: t },
          );
          return result;
        } catch (e) {
          failed.add(gap.id);
          this.logger.warn('lost-window check of a gap failed; retrying later', { gap: gap.id, error: (e as Error).message });
          return { gapId: gap.id, used: [], unchecked: [], error: (e as Error).message };
        }
      });
      if (!done) break;
      if ('error' in done) {
        await this.sequelize.query('UPDATE key_index_gaps SET last_error = $2 WHERE id = $1', { bind: [done.gapId, String(done.error).slice(0, 1000)] });
        continue;
      }
      checked.push(done);
    }
    const [left] = await this.sequelize.query<{ n: number }>('SELECT count(*)::int AS n FROM key_index_gaps WHERE checked_at IS NULL', { type: QueryTypes.SELECT });
    return { checked, pending: left?.n ?? 0 };
  }

  /** The HD chains of the namespace the window's addresses may be on, with the adapter of each. */
  private chainsOf(gap: GapRow): Array<{ chain: ChainView; adapter: ChainAdapter }> {
    const envs = gap.environment ? [gap.environment] : (['test', 'live'] as const);
    return envs.flatMap((env) => this.catalogue.chains(env))
      .filter((c) => c.addressing === 'hd')
      .map((chain) => ({ chain, adapter: this.registry.forChain(chain) }))
      .filter(({ adapter }) => adapter.addressing === 'hd' && adapter.keySpec('deposit').namespace === gap.namespace);
  }

  private async checkGap(gap: GapRow, t: Transaction): Promise<GapCheck> {
    const marks = this.keystore.indexMarks;
    if (!marks) throw new Error('the key store keeps no key-index marks');
    this.options.keyStoreReady?.();
    const unchecked: string[] = [];
    const askable: Array<{ chain: ChainView; adapter: ChainAdapter; node: TransferNode }> = [];
    const chains = this.chainsOf(gap);
    for (const { chain, adapter } of chains) {
      const endpoint = this.endpoints.get(`${chain.environment}:${chain.code}`);
      if (!endpoint) unchecked.push(`${chain.environment}:${chain.code}: no RPC endpoint`);
      else if (!adapter.createTransferNode) unchecked.push(`${chain.environment}:${chain.code}: no balance reads in the ${chain.family} adapter`);
      else askable.push({ chain, adapter, node: adapter.createTransferNode(endpoint) });
    }
    const from = Number(gap.from_index);
    const to = Math.min(Number(gap.to_index), from + MAX_WINDOW, KEY_INDEX_LIMIT);
    if (Number(gap.to_index) > to) unchecked.push(`indices ${to} to ${Number(gap.to_index) - 1}: beyond the ${MAX_WINDOW} looked at`);
    const used: UsedAddress[] = [];
    const unreadable = new Map<string, string>();
    const spec = chains[0]?.adapter.keySpec('deposit');
    if (spec && askable.length > 0) {
      for (let start = from; start < to; start += BATCH) {
        const keys: Array<{ index: number; pub: PublicKey }> = [];
        for (let index = start; index < Math.min(start + BATCH, to); index++) {
          const pub = await marks.existingPublicKey({ applicationId: gap.application_id, spec, purpose: 'deposit', index });
          if (pub) keys.push({ index, pub });
        }
        if (keys.length === 0) continue;
        for (const { chain, adapter, node } of askable) {
          const addresses = keys.map((k) => adapter.address.addressFromPublicKey(k.pub));
          const evidence = await evidenceOf(node, chain, addresses, unreadable);
          evidence.forEach((ev, i) => {
            if (Object.keys(ev).length === 0) return;
            used.push({ applicationId: gap.application_id, namespace: gap.namespace, keyIndex: keys[i]!.index, chainCode: chain.code, chainId: chain.id, address: addresses[i]!, evidence: ev });
          });
        }
      }
    }
    for (const [token, why] of unreadable) unchecked.push(`${token}: token balance unreadable (${why.slice(0, 200)})`);
    for (const u of used) {
      await raiseAlert(this.sequelize, t, u.chainId, 'ADDRESS_IN_LOST_WINDOW',
        `Deposit address ${u.address} (application ${u.applicationId}, ${u.namespace} key index ${u.keyIndex}) has history on ${u.chainCode} but is not in the restored database: `
        + 'it was handed out after the backup. Find its user (merchant records, callbacks sent) and restore its addresses row; it is never handed out again.',
        { applicationId: u.applicationId, namespace: u.namespace, keyIndex: u.keyIndex, chainCode: u.chainCode, address: u.address, evidence: u.evidence, gap: gap.id });
      this.logger.error('deposit address of a lost window has on-chain history', { applicationId: u.applicationId, namespace: u.namespace, keyIndex: u.keyIndex, chainCode: u.chainCode, address: u.address });
    }
    return { gapId: gap.id, used, unchecked };
  }
}
