/**
 * The worker thread of a ThreadedBalanceReader (reader-thread.ts): builds the chain's reader from
 * its adapter package and answers the calls posted to it, one reply each, in any order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AdapterPlugin, BalanceReader } from '@wcs/core';
import type { ReaderThreadSpec } from './reader-thread';
import { flatten, type ReaderReply, type ReaderRequest } from './reader-thread-protocol';

const spec = workerData as ReaderThreadSpec;
const mod = require(spec.pluginPackage) as { plugin?: AdapterPlugin; default?: AdapterPlugin };
const plugin = mod.plugin ?? mod.default;
if (!plugin || typeof plugin.create !== 'function') throw new Error(`${spec.pluginPackage} does not export an adapter plugin`);
const adapter = plugin.create(spec.chain);
if (!adapter.createBalanceReader) throw new Error(`${spec.pluginPackage}: the ${spec.chain.code} adapter has no balance reader`);
const reader: BalanceReader = adapter.createBalanceReader(spec.endpoint);
const port = parentPort;
if (!port) throw new Error('reader-thread-worker runs as a worker thread');

port.postMessage({ ready: true, history: reader.history });
// balancesAt calls are answered one after the other (each one runs its own batches in parallel):
// a caller that posts the next one early keeps the thread busy without two reads sharing it
let reads: Promise<unknown> = Promise.resolve();
port.on('message', (m: ReaderRequest) => {
  void (async () => {
    let reply: ReaderReply;
    try {
      const value = await (m.method === 'balancesAt' ? (reads = reads.catch(() => undefined).then(() => call(m))) : call(m));
      reply = { id: m.id, ok: true, value, history: reader.history };
    } catch (e) {
      reply = { id: m.id, ok: false, error: flatten(e), history: reader.history };
    }
    port.postMessage(reply);
  })();
});

function call(m: ReaderRequest): Promise<unknown> {
  const a = m.args as never[];
  switch (m.method) {
    case 'head': return reader.head();
    case 'balancesAt': return reader.balancesAt(a[0], a[1]);
    case 'unspentOutputs':
      if (!reader.unspentOutputs) throw new TypeError('this reader has no unspentOutputs');
      return reader.unspentOutputs(a[0]);
    case 'nativeChanges':
      if (!reader.nativeChanges) throw new TypeError('this reader has no nativeChanges');
      return reader.nativeChanges(a[0]);
    default: throw new TypeError(`unknown reader call ${String(m.method)}`);
  }
}
