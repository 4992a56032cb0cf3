import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ChainRpcError } from '@wcs/core';
import { Reader, evmRpcClient } from './node-json';
import { EvmBlockScanner } from './scanner';
import {
  blockWithdrawals, callTracerTransfers, internalPosition, parityTransfers, withdrawalPosition, type InternalTransfer,
} from './traces';

/** Recorded answers (src/fixtures/SOURCE.md says where each comes from). */
const fixture = <T>(name: string): T => JSON.parse(readFileSync(join(__dirname, '../src/fixtures', name), 'utf8')) as T;

type Recorded = {
  wallets: { W: string; W2: string; W3: string };
  recipients: { A: string; B: string };
  block: { number: string; hash: string; transactions: string[] };
  receipts: string[];
  debug_traceBlockByNumber: Array<{ txHash: string; result: Record<string, unknown> }>;
  trace_block: Array<Record<string, unknown>>;
};

const read = new Reader(evmRpcClient({ url: 'http://127.0.0.1:9' }, { label: 'TEST' }));
const all = () => true;
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function expectInconsistent(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(ChainRpcError);
    expect((e as ChainRpcError).errorName).to.equal('RPC_INCONSISTENT');
    return;
  }
  expect.fail('expected RPC_INCONSISTENT');
}

describe('internal transfers from call traces (recorded anvil answers)', () => {
  const rec = fixture<Recorded>('anvil-internal-transfers.json');
  const { W, W3 } = rec.wallets;
  const { A, B } = rec.recipients;
  const tx = rec.block.transactions;
  const ETH = 10n ** 18n;
  /** What the block holds, by the rules of traces.ts. */
  const expected: InternalTransfer[] = [
    // W.pay([A, B, A]): three value frames, -2, -3, -4; the transaction itself (value 0) is not one
    { txHash: tx[0]!, txIndex: 0, position: -2, from: W, to: A, value: 1000n },
    { txHash: tx[0]!, txIndex: 0, position: -3, from: W, to: B, value: 2000n },
    { txHash: tx[0]!, txIndex: 0, position: -4, from: W, to: A, value: 3000n },
    // tx 1: W2's frame reverted (its CALL of 7 to A with it): nothing
    // tx 2: the STATICCALL and the DELEGATECALL carry no value; the delegated code's CALL pays B from W, the first value frame
    { txHash: tx[2]!, txIndex: 2, position: -2, from: W, to: B, value: 11n },
    // tx 3: SELFDESTRUCT of W3's whole balance to A
    { txHash: tx[3]!, txIndex: 3, position: -2, from: W3, to: A, value: ETH },
    // tx 4: the transaction failed (its receipt's status 0x0): nothing
  ];

  it('is the recording described in SOURCE.md (five transactions, the last failed)', () => {
    expect(tx).to.have.length(5);
    expect(rec.receipts).to.deep.equal(['0x1', '0x1', '0x1', '0x1', '0x0']);
  });

  it('callTracer (debug_traceBlockByNumber): value frames below the root, reverted frames and their callees skipped, failed transactions skipped', () => {
    expect(callTracerTransfers(read, rec.debug_traceBlockByNumber, tx, 'trace', all)).to.deep.equal(expected);
  });

  it('trace_block (parity): the same transfers at the same positions', () => {
    expect(parityTransfers(read, rec.trace_block, rec.block.hash, tx, 'trace', all)).to.deep.equal(expected);
  });

  it('positions count reverted value frames too (they are skipped, not renumbered), so they do not depend on what reverted', () => {
    // tx 1 with the revert taken off W2's frame: the CALL of 7 to A is its first value frame, -2
    const debug = clone(rec.debug_traceBlockByNumber);
    const frame = (debug[1]!.result.calls as Array<Record<string, unknown>>)[0]!;
    delete frame.error;
    const found = callTracerTransfers(read, debug, tx, 'trace', all).filter((x) => x.txHash === tx[1]);
    expect(found.map((x) => [x.position, x.from, x.to, x.value])).to.deep.equal([[internalPosition(0), rec.wallets.W2, A, 7n]]);
  });

  it('keeps only what the filter accepts (into watched, out of senders), without renumbering', () => {
    const intoB = callTracerTransfers(read, rec.debug_traceBlockByNumber, tx, 'trace', (_from, to) => to === B);
    expect(intoB.map((x) => [x.txHash, x.position, x.value])).to.deep.equal([[tx[0], -3, 2000n], [tx[2], -2, 11n]]);
    const outOfW3 = parityTransfers(read, rec.trace_block, rec.block.hash, tx, 'trace', (from) => from === W3);
    expect(outOfW3.map((x) => [x.txHash, x.position, x.value])).to.deep.equal([[tx[3], -2, ETH]]);
  });

  it('a trace of another block is RPC_INCONSISTENT: another transaction count or hash (callTracer), another block hash or transaction (trace_block)', () => {
    expectInconsistent(() => callTracerTransfers(read, rec.debug_traceBlockByNumber.slice(1), tx, 'trace', all));
    const swapped = [tx[1]!, tx[0]!, ...tx.slice(2)];
    expectInconsistent(() => callTracerTransfers(read, rec.debug_traceBlockByNumber, swapped, 'trace', all));
    expectInconsistent(() => parityTransfers(read, rec.trace_block, `0x${'11'.repeat(32)}`, tx, 'trace', all));
    expectInconsistent(() => parityTransfers(read, rec.trace_block, rec.block.hash, swapped, 'trace', all));
  });

  it('a callTracer answer without txHash (geth before 1.11) is matched by index; a per-transaction trace error and malformed answers are RPC_BAD_RESPONSE', () => {
    const noHashes = rec.debug_traceBlockByNumber.map(({ result }) => ({ result }));
    expect(callTracerTransfers(read, noHashes, tx, 'trace', all)).to.deep.equal(expected);
    const bad = (answer: unknown) => {
      try {
        callTracerTransfers(read, answer, tx, 'trace', all);
      } catch (e) {
        return (e as ChainRpcError).errorName;
      }
      return 'none';
    };
    const withError = clone(rec.debug_traceBlockByNumber) as unknown as Array<Record<string, unknown>>;
    withError[2] = { txHash: tx[2], error: 'execution timeout' };
    expect(bad(withError)).to.equal('RPC_BAD_RESPONSE');
    expect(bad({ not: 'a list' })).to.equal('RPC_BAD_RESPONSE');
    const badValue = clone(rec.debug_traceBlockByNumber);
    (badValue[0]!.result.calls as Array<Record<string, unknown>>)[0]!.value = 1000;
    expect(bad(badValue)).to.equal('RPC_BAD_RESPONSE');
  });

  it('trace_block: block rewards (no transaction) are ignored; a child of a reverted frame is skipped though it carries no error itself', () => {
    const reward = { action: { author: A, rewardType: 'block', value: '0x1bc16d674ec80000' }, blockHash: rec.block.hash, blockNumber: 9, result: null, subtraces: 0, traceAddress: [], transactionHash: null, transactionPosition: null, type: 'reward' };
    expect(parityTransfers(read, [...rec.trace_block, reward], rec.block.hash, tx, 'trace', all)).to.deep.equal(expected);
    const child = rec.trace_block.find((t) => t.transactionPosition === 1 && (t.traceAddress as number[]).length === 2)!;
    expect(child.error, 'the recorded child has no error of its own').to.equal(undefined);
  });
  it('an empty block (the scanner does not trace it): every trace the parsers accept for it gives no transfer, and any transaction\'s frame in it is RPC_INCONSISTENT', () => {
    const emptyHash = `0x${'22'.repeat(32)}`;
    const reward = { action: { author: A, rewardType: 'block', value: '0x1bc16d674ec80000' }, blockHash: emptyHash, blockNumber: 10, result: null, subtraces: 0, traceAddress: [], transactionHash: null, transactionPosition: null, type: 'reward' };
    expect(callTracerTransfers(read, [], [], 'trace', all)).to.deep.equal([]);
    expect(parityTransfers(read, [], emptyHash, [], 'trace', all)).to.deep.equal([]);
    expect(parityTransfers(read, [reward], emptyHash, [], 'trace', all)).to.deep.equal([]);
    expectInconsistent(() => callTracerTransfers(read, rec.debug_traceBlockByNumber.slice(0, 1), [], 'trace', all));
    const frames = rec.trace_block.filter((t) => t.transactionPosition === 0).map((t) => ({ ...t, blockHash: emptyHash }));
    expectInconsistent(() => parityTransfers(read, frames, emptyHash, [], 'trace', all));
  });
});

describe('validator withdrawals (EIP-4895)', () => {
  const recorded = fixture<{ result: Record<string, unknown> & { hash: string; parentHash: string; number: string } }>('execution-apis-get-block-shanghai-fork.json').result;
  const TO = '0x3ae75c08b4c907eb63a8960c45b86e1e9ab6123c';

  it('reads the recorded block\'s withdrawals list: amount in Gwei times 10^9 (wei), index in the list; others filtered out; no list, none', () => {
    expect(blockWithdrawals(read, recorded, 'block', (a) => a === TO)).to.deep.equal([{ index: 0, address: TO, amount: 100n * 10n ** 9n }]);
    expect(blockWithdrawals(read, recorded, 'block', () => false)).to.deep.equal([]);
    const { withdrawals: _, ...beforeShanghai } = recorded;
    expect(blockWithdrawals(read, beforeShanghai, 'block', () => true)).to.deep.equal([]);
    expect(withdrawalPosition(0)).to.equal(-1_000_000);
    expect(withdrawalPosition(15)).to.equal(-1_000_015);
  });

  it('the scanner credits a withdrawal to a watched address: txHash the block hash, position -1000000 - i, no sender; lookupTransaction of that hash is MINED in the block while it is on the best chain, UNKNOWN otherwise', async () => {
    // a stub node answering with the recorded block (transactions [] as SOURCE.md says), no logs, no trace API
    let bestHash = recorded.hash;
    const block = { ...recorded, transactions: [] };
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const parsed = JSON.parse(body) as Array<{ id: number; method: string; params: unknown[] }> | { id: number; method: string; params: unknown[] };
        const answer = ({ id, method, params }: { id: number; method: string; params: unknown[] }) => {
          const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
          if (method === 'eth_getBlockByNumber') return ok(params[0] === recorded.number ? { ...block, hash: bestHash } : null);
          if (method === 'eth_getBlockByHash') return ok(params[0] === recorded.hash ? block : null);
          if (method === 'eth_getLogs') return ok([]);
          if (method === 'eth_getTransactionByHash' || method === 'eth_getTransactionReceipt') return ok(null);
          return { jsonrpc: '2.0', id, error: { code: -32601, message: `the method ${method} does not exist/is not available` } };
        };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const scanner = new EvmBlockScanner({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
      expect(await scanner.traceMode()).to.equal('unavailable');
      const height = BigInt(recorded.number);
      const { transfers } = await scanner.scanRange(height, height, new Set(['0x3aE75c08b4c907EB63a8960c45B86E1e9ab6123c']));
      expect(transfers).to.deep.equal([{
        txHash: recorded.hash, position: -1_000_000, fromAddress: null, toAddress: '0x3aE75c08b4c907EB63a8960c45B86E1e9ab6123c', memo: null, contract: null,
        amount: 100_000_000_000n, blockHeight: height, blockHash: recorded.hash, succeeded: true,
      }]);
      expect(await scanner.lookupTransaction(recorded.hash)).to.deep.equal({ state: 'MINED', blockHeight: height, blockHash: recorded.hash, succeeded: true });
      expect(await scanner.lookupTransaction(`0x${'ab'.repeat(32)}`)).to.deep.equal({ state: 'UNKNOWN' });
      bestHash = `0x${'cd'.repeat(32)}`; // another block at that height now: the withdrawal's block left the best chain
      expect(await scanner.lookupTransaction(recorded.hash)).to.deep.equal({ state: 'UNKNOWN' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
