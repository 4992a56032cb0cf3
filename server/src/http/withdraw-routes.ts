import { CHAIN_CODE_RE, invalidParameter, isWcsError, WcsError } from '@wcs/core';
import { APP_ORDER_NO_RE, REMARK_MAX, type ItemOutcome, type WithdrawItemInput, type WithdrawService } from '../withdrawals/withdraw-service';
import { BodyReader } from './body';
import type { ApiRoute } from './routes';

/** Hard maximum of items per batch-create request (50 recommended, as the spec says; docs/withdrawals.md). */
export const WITHDRAW_BATCH_MAX = 100;
const MAX_ID = Number.MAX_SAFE_INTEGER;
const APP_ORDER_NO = { max: 64, pattern: APP_ORDER_NO_RE, patternText: 'must be 1 to 64 characters of letters, digits and _ - . :' };

/** Reads one withdrawal item (the single-withdrawal body shape); a field of the wrong type is a WcsError. */
export function readWithdrawItem(raw: unknown, prefix: string): WithdrawItemInput {
  const r = new BodyReader(raw, prefix);
  const appOrderNo = r.string('appOrderNo', { required: true, ...APP_ORDER_NO });
  const chainCode = r.string('chainCode', { required: true, pattern: CHAIN_CODE_RE, patternText: 'must be an upper-case chain code such as ETH' });
  const chainTokenId = r.int('chainTokenId', { required: true, min: 1, max: 2_147_483_647 });
  const toAddress = r.string('toAddress', { required: true, max: 256 });
  const toMemo = r.string('toMemo', { max: 256 });
  const amountRaw = (raw as Record<string, unknown>).amount;
  if (typeof amountRaw === 'number') {
    throw new WcsError('WITHDRAW_AMOUNT_INVALID', { message: `${prefix ? `${prefix}.` : ''}amount must be a decimal string such as "12.5", not a JSON number`, details: { field: 'amount' } });
  }
  const amount = r.string('amount', { required: true, max: 100 });
  const callbackUrl = r.string('callbackUrl', { max: 2048 });
  const remark = r.string('remark');
  if (remark !== undefined && [...remark].length > REMARK_MAX) throw invalidParameter(`${prefix ? `${prefix}.` : ''}remark`, `must be at most ${REMARK_MAX} characters`);
  r.noOthers();
  return { appOrderNo, chainCode, chainTokenId, toAddress, toMemo: toMemo === undefined || toMemo === '' ? null : toMemo, amount, callbackUrl: callbackUrl ?? null, remark: remark ?? null };
}

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
        const b = new BodyReader(body);
        const items = b.array('items', { min: 1, max: WITHDRAW_BATCH_MAX });
        b.noOthers();
        const read = items.map((raw, i) => {
          try {
            return readWithdrawItem(raw, `items[${i}]`);
          } catch (e) {
            if (!isWcsError(e) || e.errorClass === 'INTERNAL') throw e;
            return e as WcsError;
          }
        });
        const outcomes = await withdrawals.accept(app, read);
        const results = outcomes.map((o, i) => {
          const no = (items[i] as { appOrderNo?: unknown } | null)?.appOrderNo;
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
        const [outcome] = await withdrawals.accept(app, [readWithdrawItem(body, '')]);
        if (!outcome!.ok) throw outcome!.error;
        return outcome!.record;
      },
    },
    {
      method: 'GET',
      path: '/wallet/withdraw/get',
      body: 'none',
      handler: async ({ app, query }) => {
        const id = query.int('id', { min: 1, max: MAX_ID });
        const appOrderNo = query.string('appOrderNo', APP_ORDER_NO);
        query.noOthers();
        if ((id === undefined) === (appOrderNo === undefined)) throw invalidParameter('id', 'give exactly one of id and appOrderNo');
        return withdrawals.get(app.applicationId, id !== undefined ? { id } : { appOrderNo: appOrderNo! });
      },
    },
  ];
}
