import { QueryTypes, type Sequelize } from 'sequelize';
import { outpointKey, type Outpoint, type SenderCheck, type SenderLedger, type TransferNode } from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import { heldAmong, holdSender } from './sender-holds';

/** Senders checked at once by a node without the set-based form. */
const CHECK_CONCURRENCY = 8;
/** How long the workers' start waits for the check at start. */
const START_BOUND_MS = 5_000;

/**
 * What the database knows of one chain's transactions, for the adapters' sender checks
 * (core's SenderLedger). Each method reads when called. What released holds recorded counts as
 * known: the recovery that released them accepted it.
 */
export class DatabaseSenderLedger implements SenderLedger {
  constructor(private readonly sequelize: Sequelize, private readonly chainId: number) {}

  async nextSequences(senders: readonly string[]): Promise<ReadonlyMap<string, bigint | null>> {
    const rows = await this.sequelize.query<{ address: string; next: string }>(
      'SELECT address, next_sequence::text AS next FROM sequence_allocators WHERE chain_id = $1 AND address = ANY($2::text[])',
      { bind: [this.chainId, [...senders]], type: QueryTypes.SELECT },
    );
    const next = new Map(rows.map((r) => [r.address, BigInt(r.next)] as const));
    return new Map(senders.map((s) => [s, next.get(s) ?? null] as const));
  }

  /** The hot wallet's outputs no transfer spends, and the fixed inputs of the sender's unsigned transfers (a consolidation's deposit outputs). */
  async unspentOutputs(sender: string): Promise<readonly Outpoint[]> {
    const rows = await this.sequelize.query<{ tx_hash: string; vout: number }>(
      `SELECT u.tx_hash, u.vout FROM hot_wallet_utxos u JOIN hot_wallets h ON h.id = u.hot_wallet_id
        WHERE h.chain_id = $1 AND h.address = $2 AND u.spent_by IS NULL
       UNION
       SELECT i->>'txHash', (i->>'vout')::int FROM transfers x CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(x.options->'inputs') = 'array' THEN x.options->'inputs' END) AS i
        WHERE x.chain_id = $1 AND x.from_address = $2 AND x.status = 'READY'
       ORDER BY 1, 2`,
      { bind: [this.chainId, sender], type: QueryTypes.SELECT },
    );
    return rows.map((r) => ({ txHash: r.tx_hash, vout: r.vout }));
  }

  async spentByService(outputs: readonly Outpoint[]): Promise<ReadonlySet<string>> {
    if (outputs.length === 0) return new Set();
    const rows = await this.sequelize.query<{ tx_hash: string; vout: number }>(
      `SELECT u.tx_hash, u.vout FROM hot_wallet_utxos u JOIN hot_wallets h ON h.id = u.hot_wallet_id
         JOIN unnest($2::text[], $3::int[]) AS o(tx, vout) ON o.tx = u.tx_hash AND o.vout = u.vout
        WHERE h.chain_id = $1 AND u.spent_by IS NOT NULL
       UNION
       SELECT i->>'txHash', (i->>'vout')::int FROM transfers x CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(x.options->'inputs') = 'array' THEN x.options->'inputs' END) AS i
        WHERE x.chain_id = $1 AND x.tx_hash IS NOT NULL
          AND (i->>'txHash', (i->>'vout')::int) IN (SELECT * FROM unnest($2::text[], $3::int[]))
       UNION
       SELECT e->>'txHash', (e->>'vout')::int FROM sender_holds s CROSS JOIN LATERAL jsonb_array_elements(s.evidence->'outputs') AS e
        WHERE s.chain_id = $1 AND s.released_at IS NOT NULL AND s.evidence->>'kind' = 'SPENT_OUTPUTS'
          AND (e->>'txHash', (e->>'vout')::int) IN (SELECT * FROM unnest($2::text[], $3::int[]))`,
      { bind: [this.chainId, outputs.map((o) => o.txHash), outputs.map((o) => o.vout)], type: QueryTypes.SELECT },
    );
    return new Set(rows.map((r) => outpointKey({ txHash: r.tx_hash, vout: r.vout })));
  }

  async knownTransactions(txHashes: readonly string[]): Promise<ReadonlySet<string>> {
    if (txHashes.length === 0) return new Set();
    const rows = await this.sequelize.query<{ h: string }>(
      `SELECT a.tx_hash AS h FROM transfer_attempts a JOIN transfers x ON x.id = a.transfer_id WHERE x.chain_id = $1 AND a.tx_hash = ANY($2::text[])
       UNION
       SELECT e.h FROM sender_holds s CROSS JOIN LATERAL jsonb_array_elements_text(s.evidence->'transactions') AS e(h)
        WHERE s.chain_id = $1 AND s.released_at IS NOT NULL AND s.evidence->>'kind' = 'UNKNOWN_TRANSACTIONS' AND e.h = ANY($2::text[])`,
      { bind: [this.chainId, [...txHashes]], type: QueryTypes.SELECT },
    );
    return new Set(rows.map((r) => r.h));
  }
}

/**
 * The chain check before signing (docs/transfers.md): before a signing round, and before a
 * transfer is signed again, each sender about to be signed for is checked against its chain
 * (TransferNode.senderCheck, one node call for all of a round's senders where the node has the
 * set-based form). A sender found AHEAD is held (sender-holds.ts: one SENDER_CHAIN_AHEAD alert) and
 * not signed for; one whose check fails is not signed for this round. Held senders are left out
 * of the rounds' reads. `enabled` false (WCS_TRANSFER_CHAIN_CHECK=off, for benchmarks and
 * diagnosis) skips the node call: only the holds already recorded apply.
 */
export class SenderChainCheck {
  /** (chain, reason) pairs already logged as unchecked by this process. */
  private readonly saidUnchecked = new Set<string>();

  constructor(private readonly sequelize: Sequelize, private readonly logger: Logger, readonly enabled: boolean) {}

  /**
   * The senders among `senders` not to sign for now: held ones, those the chain is found ahead of
   * now (held here, alert raised), and those whose check could not be read. `readUnheld`: the
   * senders were read as not held (a signing round's read leaves held senders out, and its
   * signing transaction does again): the holds are not read again.
   */
  async blocked(chain: ChainView, node: TransferNode, senders: readonly string[], readUnheld = false): Promise<Set<string>> {
    const unique = [...new Set(senders)];
    if (unique.length === 0) return new Set();
    const blocked = readUnheld ? new Set<string>() : await heldAmong(this.sequelize, chain.id, unique);
    if (!this.enabled) return blocked;
    const open = unique.filter((s) => !blocked.has(s));
    if (open.length === 0) return blocked;
    if (!node.senderChecks && !node.senderCheck) {
      this.unchecked(chain, 'its adapter has no sender check (TransferNode.senderCheck)');
      return blocked;
    }
    const answers = await this.checkAll(chain, node, open);
    for (const [i, sender] of open.entries()) {
      const a = answers[i]!;
      if (a instanceof Error) {
        blocked.add(sender);
        this.logger.warn('chain check before signing failed: the sender is not signed for this round', { chain: chain.code, sender, error: a });
        continue;
      }
      if (a.kind === 'UNCHECKED') {
        this.unchecked(chain, a.reason, sender);
        continue;
      }
      if (a.kind === 'AGREES') continue;
      blocked.add(sender);
      const held = await holdSender(this.sequelize, chain, sender, a);
      if (held) this.logger.error('the chain holds transactions from a sender that the database does not know: the sender is held, nothing more is signed for it', { chain: chain.code, sender, summary: a.summary });
    }
    return blocked;
  }

  /**
   * The check at start, for every hot wallet of the chain and every sender with a READY transfer
   * (a restore is followed by a start: what it lost shows before the first round, and before the
   * ledger's first output sync of a utxo chain drops outputs the node no longer lists).
   */
  async atStart(chain: ChainView, node: TransferNode): Promise<Set<string>> {
    const rows = await this.sequelize.query<{ address: string }>(
      `SELECT address FROM hot_wallets WHERE chain_id = $1
       UNION SELECT DISTINCT from_address FROM transfers WHERE chain_id = $1 AND status = 'READY'`,
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    return this.blocked(chain, node, rows.map((r) => r.address));
  }

  /** atStart for every chain at once, waiting at most `boundMs` (a chain still unanswered is checked again before its first round). */
  async atStartAll(chains: readonly ChainView[], nodeOf: (chain: ChainView) => TransferNode, boundMs = START_BOUND_MS): Promise<void> {
    if (!this.enabled || chains.length === 0) return;
    const all = Promise.all(chains.map(async (chain) => {
      try {
        await this.atStart(chain, nodeOf(chain));
      } catch (e) {
        this.logger.warn('chain check at start failed; checked again before each signing round', { chain: chain.code, error: e });
      }
    }));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise<void>((resolve) => {
      timer = setTimeout(resolve, boundMs);
      timer.unref();
    })]);
    clearTimeout(timer);
  }

  /** Every sender's answer (or Error), in order: one set-based call, else the single calls a few at a time. */
  private async checkAll(chain: ChainView, node: TransferNode, senders: readonly string[]): Promise<Array<SenderCheck | Error>> {
    const ledger = new DatabaseSenderLedger(this.sequelize, chain.id);
    const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));
    if (node.senderChecks) {
      try {
        return await node.senderChecks(senders, ledger);
      } catch (e) {
        return senders.map(() => asError(e));
      }
    }
    const out: Array<SenderCheck | Error> = new Array(senders.length);
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(CHECK_CONCURRENCY, senders.length) }, async () => {
      while (next < senders.length) {
        const i = next++;
        try {
          out[i] = await node.senderCheck!(senders[i]!, ledger);
        } catch (e) {
          out[i] = asError(e);
        }
      }
    }));
    return out;
  }

  /** Said once per (chain, reason) by this process: the chain (or this sender) is signed for without the check. */
  private unchecked(chain: ChainView, reason: string, sender?: string): void {
    const key = `${chain.id}/${sender === undefined ? 'chain' : 'sender'}/${reason}`;
    if (this.saidUnchecked.has(key)) return;
    this.saidUnchecked.add(key);
    this.logger.warn('chain check before signing unavailable: signing without it', { chain: chain.code, ...(sender !== undefined ? { sender } : {}), reason });
  }
}
