import { expect } from 'chai';
import { receiveStep, TRUSTLINE_RETRY_MS, type TrustlineTransfer } from './trustlines';

describe('receiveStep: a sweep to a destination that must opt in to the token (pure)', () => {
  const usdc = 'USDC:GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN';
  const hot = 'GHOT';
  const none: TrustlineTransfer = { state: 'NONE' };
  const noLine = { ok: false as const, reason: 'NO_TRUSTLINE' as const, message: 'GHOT has no trustline to USDC' };

  it('goes when the destination can receive, whatever the last trustline transfer was', () => {
    for (const last of [none, { state: 'OPEN' as const, id: '1' }, { state: 'SUCCESS' as const, id: '1', endedMsAgo: 0 }, { state: 'FAILED' as const, id: '1', reason: 'x', endedMsAgo: 0 }]) {
      expect(receiveStep({ destination: 'HOT', to: hot, contract: usdc, can: { ok: true }, last })).to.deep.equal({ kind: 'GO' });
    }
    expect(receiveStep({ destination: 'MERCHANT', to: 'GM', contract: usdc, can: { ok: true }, last: none })).to.deep.equal({ kind: 'GO' });
  });

  it('the hot wallet without a trustline: opens it once; waits while it is open or not shown yet', () => {
    expect(receiveStep({ destination: 'HOT', to: hot, contract: usdc, can: noLine, last: none })).to.deep.equal({ kind: 'OPEN_TRUSTLINE', reason: `opening the hot wallet's trustline to ${usdc} before the first sweep` });
    expect(receiveStep({ destination: 'HOT', to: hot, contract: usdc, can: noLine, last: { state: 'OPEN', id: '7' } })).to.deep.equal({ kind: 'WAIT', reason: `opening the hot wallet's trustline to ${usdc} (transfer 7) before the first sweep` });
    const shown = receiveStep({ destination: 'HOT', to: hot, contract: usdc, can: noLine, last: { state: 'SUCCESS', id: '7', endedMsAgo: 1000 } });
    expect(shown.kind).to.equal('WAIT');
    expect((shown as { reason: string }).reason).to.match(/waiting for the node to show it/);
    // a node that has not shown a succeeded one for TRUSTLINE_RETRY_MS: opened again, never an endless wait
    const stale = receiveStep({ destination: 'HOT', to: hot, contract: usdc, can: noLine, last: { state: 'SUCCESS', id: '7', endedMsAgo: TRUSTLINE_RETRY_MS } });
    expect(stale.kind).to.equal('OPEN_TRUSTLINE');
    expect((stale as { reason: string }).reason).to.match(/transfer 7 succeeded but the node has not shown it for 600 s/);
  });

  it('a failed trustline transfer is tried again only TRUSTLINE_RETRY_MS after it ended', () => {
    const early = receiveStep({ destination: 'HOT', to: hot, contract: usdc, can: noLine, last: { state: 'FAILED', id: '7', reason: 'NODE_REJECTED: tx_insufficient_balance', endedMsAgo: TRUSTLINE_RETRY_MS - 1000 } });
    expect(early.kind).to.equal('WAIT');
    expect((early as { reason: string }).reason).to.match(/failed \(transfer 7: NODE_REJECTED: tx_insufficient_balance\); tried again 1 s after/);
    expect(receiveStep({ destination: 'HOT', to: hot, contract: usdc, can: noLine, last: { state: 'FAILED', id: '7', reason: 'r', endedMsAgo: TRUSTLINE_RETRY_MS } }).kind).to.equal('OPEN_TRUSTLINE');
  });

  it('waits for the operator when the hot wallet does not exist or the issuer has not authorized it; never opens a trustline then', () => {
    const missing = receiveStep({ destination: 'HOT', to: hot, contract: usdc, can: { ok: false, reason: 'NO_ACCOUNT', message: 'never funded' }, last: none });
    expect(missing.kind).to.equal('WAIT');
    expect((missing as { reason: string }).reason).to.match(/does not exist on chain: fund it with XLM/);
    const unauthorized = receiveStep({ destination: 'HOT', to: hot, contract: usdc, can: { ok: false, reason: 'NOT_AUTHORIZED', message: 'not authorized' }, last: none });
    expect(unauthorized.kind).to.equal('WAIT');
    expect((unauthorized as { reason: string }).reason).to.match(/not authorized by the issuer/);
  });

  it('a merchant address that cannot receive: waits (the service cannot sign for it), naming the address and why', () => {
    const step = receiveStep({ destination: 'MERCHANT', to: 'GMERCHANT', contract: usdc, can: noLine, last: none });
    expect(step).to.deep.equal({ kind: 'WAIT', reason: `the merchant address GMERCHANT cannot receive ${usdc} (NO_TRUSTLINE: GHOT has no trustline to USDC); the merchant must open it` });
  });
});
