import { formatLocalDateTime, formatUnits } from '@wcs/core';
import type { ChainTransaction } from './recovery-match';
import type { RecoveryIntent, SenderPlan } from './recovery';

/** A recovery plan as the CLI's --json and the console show it (amounts as decimal strings). */
export function planJson(p: SenderPlan) {
  const token = (contract: string | null) => p.tokens.get(contract ?? '') ?? { chainTokenId: null, symbol: contract ?? '?', decimals: 0 };
  const intent = (i: RecoveryIntent) => ({
    transferId: i.transferId, kind: i.kind, status: i.status, applicationId: i.applicationId, withdrawalId: i.withdrawalId, appOrderNo: i.appOrderNo,
    toAddress: i.to, memo: i.memo, chainTokenId: i.chainTokenId, token: i.symbol, amount: formatUnits(i.amount, i.decimals), createdTime: formatLocalDateTime(i.createdAt),
  });
  const onChain = (t: ChainTransaction) => ({
    txHash: t.txHash, blockHeight: t.blockHeight.toString(), sequence: t.sequence?.toString() ?? null, succeeded: t.succeeded,
    payments: t.payments.map((x) => {
      const k = token(x.contract);
      return { toAddress: x.to, memo: x.memo, chainTokenId: k.chainTokenId, token: k.symbol, contract: x.contract, amount: formatUnits(x.amount, k.decimals) };
    }),
  });
  return {
    chainCode: p.chain.code,
    environment: p.chain.environment,
    sender: p.hold.address,
    hold: { id: p.hold.id, summary: p.hold.summary, evidence: p.hold.evidence, heldTime: formatLocalDateTime(p.hold.heldAt) },
    owner: p.owner,
    window: p.window,
    matched: p.matched.map((m) => ({ ...intent(m.intent), outcome: 'MATCHED', txHash: m.tx.txHash, blockHeight: m.tx.blockHeight.toString(), sequence: m.tx.sequence?.toString() ?? null, sentAmount: formatUnits(m.sentAmount, m.intent.decimals) })),
    unmatchedOnChain: p.unmatchedOnChain.map((t) => ({
      ...onChain(t), outcome: 'UNMATCHED_ON_CHAIN',
      resubmit: `an order accepted after the backup${p.owner ? ` by application ${p.owner.applicationId} (${p.owner.name})` : ''}: it is paid; if its merchant sends it again (its appOrderNo is not in the restored database), it would be paid a second time — tell the merchant it is paid (this transaction) and not to resubmit it`,
    })),
    unmatchedInDatabase: p.unmatchedInDatabase.map((i) => ({ ...intent(i), outcome: 'UNMATCHED_IN_DATABASE' })),
    notReached: p.notReached,
  };
}

export type PlanJson = ReturnType<typeof planJson>;

/** The plan in lines, for a terminal. */
export function planText(j: PlanJson): string {
  const lines = [
    `${j.chainCode} (${j.environment}) ${j.sender}: held ${j.hold.heldTime}: ${j.hold.summary}`,
    `  read: ${j.window.kind === 'blocks' ? `blocks ${j.window.from}..${j.window.to}` : `history from ${j.window.cursor ?? 'the first transaction'} (${j.window.pages} pages)`}`,
    `  MATCHED (${j.matched.length}):`,
    ...j.matched.map((m) => `    transfer ${m.transferId} ${m.kind}${m.withdrawalId ? ` withdrawal ${m.withdrawalId} (${m.appOrderNo})` : ''} ${m.amount} ${m.token} to ${m.toAddress} <- ${m.txHash} at block ${m.blockHeight}${m.sequence !== null ? `, sequence ${m.sequence}` : ''}`),
    `  UNMATCHED_ON_CHAIN (${j.unmatchedOnChain.length}): paid on chain, no order in the restored database`,
    ...j.unmatchedOnChain.map((t) => `    ${t.txHash} at block ${t.blockHeight}: ${t.payments.map((x) => `${x.amount} ${x.token} to ${x.toAddress}${x.memo ? ` memo ${x.memo}` : ''}`).join(', ')}\n      ${t.resubmit}`),
    `  UNMATCHED_IN_DATABASE (${j.unmatchedInDatabase.length}): not on chain, signed normally once the sender is released`,
    ...j.unmatchedInDatabase.map((i) => `    transfer ${i.transferId} ${i.kind}${i.withdrawalId ? ` withdrawal ${i.withdrawalId} (${i.appOrderNo})` : ''} ${i.amount} ${i.token} to ${i.toAddress}`),
    ...(j.notReached.length > 0 ? [`  NOT REACHED: the hold's evidence names ${j.notReached.join(', ')}, which the read did not reach`] : []),
  ];
  return lines.join('\n');
}
