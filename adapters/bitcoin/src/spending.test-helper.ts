/**
 * Test-only (loaded by *.test.ts, never by index.ts): an adapter's crafter and transfer node as
 * this package's classes (through core's paying(), no `!` on the capabilities), and craft() of a
 * request its inputs cover.
 */
import { expect } from 'chai';
import { paying, type ChainAdapter, type ChainEndpoint, type TransferInput, type UnsignedTransfer, type UtxoCrafter, type UtxoTransferRequest } from '@wcs/core';
import { BitcoinTransferCrafter, BitcoinTransferNode } from './index';

/** The adapter's crafter (a bitcoin adapter pays out on the utxo spend model). */
export function bitcoinCrafter(adapter: ChainAdapter): BitcoinTransferCrafter {
  const { transfers } = paying(adapter);
  if (!(transfers instanceof BitcoinTransferCrafter)) throw new TypeError(`${adapter.chain.code}: the crafter is not a BitcoinTransferCrafter`);
  return transfers;
}

/** The adapter's transfer node for an endpoint. */
export function bitcoinNode(adapter: ChainAdapter, endpoint: ChainEndpoint): BitcoinTransferNode {
  const node = paying(adapter).createTransferNode(endpoint);
  if (!(node instanceof BitcoinTransferNode)) throw new TypeError(`${adapter.chain.code}: the transfer node is not a BitcoinTransferNode`);
  return node;
}

/** craft() of a request whose inputs cover it: the unsigned transfer (INSUFFICIENT_INPUTS fails the test). */
export function crafted(crafter: UtxoCrafter, request: UtxoTransferRequest, input: TransferInput): UnsignedTransfer {
  const result = crafter.craft(request, input);
  if (!result.ok) expect.fail(`craft() answered ${result.reason}: ${result.shortfall} sat short`);
  return result.unsigned;
}

/**
 * A request as a caller in plain JS may send it, outside the request's types (the crafter's runtime
 * checks refuse it).
 */
export const untyped = (request: object): UtxoTransferRequest => request as UtxoTransferRequest;
