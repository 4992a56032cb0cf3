import path from 'node:path';
import { SerialBuffer, createInitialTypes, createTransactionTypes, getTypesFromAbi } from 'eosjs/dist/eosjs-serialize';
import type { SignedTransaction } from '@wcs/core';
import { fixtureReader } from '@wcs/core/testing';

// Recorded node answers in src/fixtures (read from dist); SOURCE.md says where each comes from.
const fx = fixtureReader(path.join(__dirname, '../src/fixtures'));
type Json = Record<string, any>;
const json = (name: string): Json => fx.json<Json>(name);
const text = (name: string): string => fx.text(name);

/** The packed transaction decoded with eosjs' own serializers, and its transfer action's data. */
export function decode(signed: SignedTransaction): { trx: Json; transfer: Json; body: Json } {
  const body = JSON.parse(Buffer.from(signed.raw).toString('utf8'));
  const enc = { textEncoder: new TextEncoder(), textDecoder: new TextDecoder() };
  const trx = getTypesFromAbi(createTransactionTypes()).get('transaction')!.deserialize(new SerialBuffer({ ...enc, array: Buffer.from(body.packed_trx, 'hex') }));
  const abi = { version: 'eosio::abi/1.1', types: [], structs: [{ name: 'transfer', base: '', fields: [{ name: 'from', type: 'name' }, { name: 'to', type: 'name' }, { name: 'quantity', type: 'asset' }, { name: 'memo', type: 'string' }] }], actions: [], tables: [], ricardian_clauses: [], error_messages: [], abi_extensions: [], variants: [] };
  const transfer = getTypesFromAbi(createInitialTypes(), abi as never).get('transfer')!.deserialize(new SerialBuffer({ ...enc, array: Buffer.from(trx.actions[0].data, 'hex') }));
  return { trx, transfer, body };
}

/** The recorded executed answer with its ids replaced by the sent transaction's (test-made substitution). */
export function executedFor(id: string): string {
  return text('push_transaction.executed.0125cd2d.json').split('0125cd2d97d587408a9b993c80d9dc89a50931073a21e913d7692ca924f066eb').join(id);
}

/** Hyperion's answer for an id it does not have (executed false, no actions, as its get_transaction route answers), test-made from the recorded envelope. */
export function hyperionMissing(id: string, lastIndexed?: string): Json {
  const r = json('hyperion.get_transaction.4c66c16b.json');
  delete r.actions;
  r.executed = false;
  r.trx_id = id;
  if (lastIndexed === undefined) {
    delete r.last_indexed_block;
    delete r.last_indexed_block_time;
  }
  return r;
}
