import type { WcsError } from '@wcs/core';
import type { ItemOutcome, WithdrawItemInput, WithdrawService } from '../withdrawals/withdraw-service';
import { withdrawBatchCreateRequest, withdrawCreateRequest, withdrawGetQuery, type WithdrawCreateRequest } from '../contract/withdraw';
import { parseBatch, parseBody, parseQuery, type Parsed } from '../contract/parse';
import type { ApiRoute } from './routes';

/** One withdrawal as the service takes it ("" memo: none; absent callbackUrl and remark: null). */
function itemInput(r: WithdrawCreateRequest): WithdrawItemInput {
  return {
    appOrderNo: r.appOrderNo,
    chainCode: r.chainCode,
    chainTokenId: r.chainTokenId,
    toAddress: r.toAddress,
    toMemo: r.toMemo === undefined || r.toMemo === null || r.toMemo === '' ? null : r.toMemo,
    amount: r.amount,
    callbackUrl: r.callbackUrl ?? null,
    remark: r.remark ?? null,
  };
}

const serviceInput = (p: Parsed<WithdrawCreateRequest>): WithdrawItemInput | WcsError => (p.ok ? itemInput(p.value) : p.error);

function itemResult(appOrderNo: string | null, o: ItemOutcome) {
  return o.ok
    ? { appOrderNo, success: true, withdraw: o.record, errorCode: null, errorMessage: null }
    : { appOrderNo, success: false, withdraw: null, errorCode: o.error.code, errorMessage: o.error.message };
}

export function withdrawRoutes(withdrawals: WithdrawService): ApiRoute[] {
  return [
    {
      method: 'POST',
      path: '/wallet/withdraw/batch-create',
      body: 'json',
      handler: async ({ app, body }) => {
        const read = parseBatch(withdrawBatchCreateRequest, withdrawCreateRequest, body);
        const outcomes = await withdrawals.accept(app, read.map(serviceInput));
        const raw = (body as { items: unknown[] }).items;
        const results = outcomes.map((o, i) => {
          const no = (raw[i] as { appOrderNo?: unknown } | null)?.appOrderNo;
          return itemResult(typeof no === 'string' ? no : null, o);
        });
        const successCount = results.filter((r) => r.success).length;
        return { total: results.length, successCount, failedCount: results.length - successCount, items: results };
      },
    },
    {
      method: 'POST',
      path: '/wallet/withdraw/create',
      body: 'json',
      handler: async ({ app, body }) => {
        const [outcome] = await withdrawals.accept(app, [itemInput(parseBody(withdrawCreateRequest, body))]);
        if (!outcome!.ok) throw outcome!.error;
        return outcome!.record;
      },
    },
    {
      method: 'GET',
      path: '/wallet/withdraw/get',
      body: 'none',
      handler: async ({ app, query }) => {
        const { id, appOrderNo } = parseQuery(withdrawGetQuery, query);
        return withdrawals.get(app.applicationId, id !== undefined ? { id } : { appOrderNo: appOrderNo! });
      },
    },
  ];
}
