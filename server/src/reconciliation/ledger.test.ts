import { expect } from 'chai';
import { transferEffects } from './ledger';

const NATIVE = 1;
const base = { chain_token_id: 2, from_address: 'dep', to_address: 'hot', fee_payer: null, sent: '100', fee: '7', fee_final: false, status: 'BROADCASTED', kind: 'SWEEP', inputs: null };
const entries = (m: Map<string, { min: bigint; max: bigint }>) => [...m.entries()].map(([k, v]) => [k.replace('\u0000', '/'), v.min, v.max]);

describe('reconciliation: what a transfer not yet in the ledger would change (pure)', () => {
  it('a token sweep in flight: the token exactly at both ends, its fee from nothing to the ceiling in the native coin', () => {
    expect(entries(transferEffects(base, NATIVE))).to.deep.equal([['dep/2', -100n, -100n], ['hot/2', 100n, 100n], ['dep/1', -7n, 0n]]);
  });

  it('once final the fee is exact; a native transfer adds its fee to the sender\'s own movement', () => {
    expect(entries(transferEffects({ ...base, chain_token_id: NATIVE, fee_final: true, status: 'SUCCESS' }, NATIVE))).to.deep.equal([['dep/1', -107n, -107n], ['hot/1', 100n, 100n]]);
  });

  it('a fee payer pays the fee (Solana sweeps); a reverted or TRUSTLINE transfer moves nothing but its fee', () => {
    expect(entries(transferEffects({ ...base, fee_payer: 'hot' }, NATIVE))).to.deep.equal([['dep/2', -100n, -100n], ['hot/2', 100n, 100n], ['hot/1', -7n, 0n]]);
    expect(entries(transferEffects({ ...base, status: 'FAILED', fee_final: true }, NATIVE))).to.deep.equal([['dep/1', -7n, -7n]]);
    expect(entries(transferEffects({ ...base, kind: 'TRUSTLINE' }, NATIVE))).to.deep.equal([['dep/1', -7n, 0n]]);
  });

  it('a utxo consolidation: each input leaves its owner, the destination gets what was sent, the fee is inside the inputs', () => {
    const inputs = [{ amount: '60', owner: { address: 'a' } }, { amount: '50', owner: { address: 'b' } }];
    expect(entries(transferEffects({ ...base, chain_token_id: NATIVE, inputs, sent: '103' }, NATIVE))).to.deep.equal([['a/1', -60n, -60n], ['b/1', -50n, -50n], ['hot/1', 103n, 103n]]);
  });
});
