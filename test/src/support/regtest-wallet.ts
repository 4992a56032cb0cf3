/** What the bcoin regtest e2e tests share: paying from the node's own wallet. */
import { expect } from 'chai';
import type { RegtestNode } from '@wcs/adapter-bitcoin/regtest';
import { pollUntil } from './expect';

/**
 * Pays several outputs in one transaction through bcoin's wallet HTTP API, which (unlike
 * sendmany) takes one address more than once; the txid once the transaction is in the mempool.
 */
export async function sendOutputs(node: RegtestNode, outputs: Array<{ address: string; sats: bigint }>): Promise<string> {
  await node.syncWallet();
  const u = new URL(node.walletUrl);
  const res = await fetch(`${u.protocol}//${u.host}/wallet/primary/send`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ outputs: outputs.map((o) => ({ address: o.address, value: Number(o.sats) })) }),
  });
  const body = (await res.json()) as { hash?: string; error?: unknown };
  expect(res.status, JSON.stringify(body)).to.equal(200);
  await inMempool(node, body.hash!);
  return body.hash!;
}

export async function inMempool(node: RegtestNode, txid: string): Promise<void> {
  const r = await pollUntil(() => node.rpc<string[]>('getrawmempool'), (p) => p.includes(txid), 10_000, 5);
  expect(r.ok, `${txid} not in the mempool`).to.equal(true);
}
