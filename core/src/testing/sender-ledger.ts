import { outpointKey, type Outpoint, type SenderLedger } from '../sender-check';

/** What a test's ledger holds; every field may change between calls (the ledger reads it each time). */
export interface MemoryLedgerState {
  /** Per sender: the database's next sequence (absent: null, nothing signed). */
  nextSequences: Map<string, bigint>;
  /** Per sender: the outputs the database believes unspent. */
  unspent: Map<string, Outpoint[]>;
  /** Outputs (outpointKey) a transaction of the service spends. */
  spentByService: Set<string>;
  /** Transaction hashes the service made. */
  known: Set<string>;
}

/**
 * A SenderLedger over memory, for the adapters' sender check tests: it answers from `state` at
 * each call and logs the calls in order (`calls`), so a test can tell the ledger was read after
 * the node, or make the "database" learn something between the node's answer and the read.
 */
export function memoryLedger(init: Partial<MemoryLedgerState> = {}, onCall?: (method: keyof SenderLedger) => void | Promise<void>): SenderLedger & { state: MemoryLedgerState; calls: Array<keyof SenderLedger> } {
  const state: MemoryLedgerState = {
    nextSequences: init.nextSequences ?? new Map(), unspent: init.unspent ?? new Map(), spentByService: init.spentByService ?? new Set(), known: init.known ?? new Set(),
  };
  const calls: Array<keyof SenderLedger> = [];
  const log = async (m: keyof SenderLedger) => {
    calls.push(m);
    await onCall?.(m);
  };
  return {
    state,
    calls,
    async nextSequences(senders) {
      await log('nextSequences');
      return new Map(senders.map((s) => [s, state.nextSequences.get(s) ?? null] as const));
    },
    async unspentOutputs(sender) {
      await log('unspentOutputs');
      return [...(state.unspent.get(sender) ?? [])];
    },
    async spentByService(outputs) {
      await log('spentByService');
      return new Set(outputs.map(outpointKey).filter((k) => state.spentByService.has(k)));
    },
    async knownTransactions(hashes) {
      await log('knownTransactions');
      return new Set(hashes.filter((h) => state.known.has(h)));
    },
  };
}
