import { ChainRpcError, WcsError, type BalanceHistory, type ErrorClass } from '@wcs/core';

/** The reads a ThreadedBalanceReader forwards to its thread. */
export type ReaderMethod = 'head' | 'balancesAt' | 'unspentOutputs' | 'nativeChanges';

export interface ReaderRequest {
  readonly id: number;
  readonly method: ReaderMethod;
  readonly args: unknown[];
}

/** An error as it crosses the thread boundary (a structured clone keeps no class). */
export type ThreadError =
  | { readonly kind: 'ChainRpcError'; readonly errorName: string; readonly message: string; readonly method: string | null; readonly rpcCode: number | null; readonly nodeCode: string | null;
      readonly nodeMessage: string | null; readonly responseStatus: number | null; readonly attempts: number }
  | { readonly kind: 'WcsError'; readonly code: number; readonly errorName: string; readonly httpStatus: number; readonly errorClass: ErrorClass; readonly message: string; readonly details: Record<string, unknown> | null }
  | { readonly kind: 'TypeError' | 'Error'; readonly message: string };

/** The first message says the thread built its reader; every reply carries the reader's history as it is after the call (the first head() probes it). */
export type ReaderReply =
  | { readonly ready: true; readonly history: BalanceHistory }
  | { readonly id: number; readonly ok: true; readonly value: unknown; readonly history: BalanceHistory }
  | { readonly id: number; readonly ok: false; readonly error: ThreadError; readonly history: BalanceHistory };

/** The thread's side: an error thrown by the reader, in a form that crosses (no stack, no cause objects). */
export function flatten(e: unknown): ThreadError {
  if (e instanceof ChainRpcError) {
    return { kind: 'ChainRpcError', errorName: e.errorName, message: e.message, method: e.method, rpcCode: e.rpcCode, nodeCode: e.nodeCode, nodeMessage: e.nodeMessage, responseStatus: e.responseStatus, attempts: e.attempts };
  }
  if (e instanceof WcsError) {
    let details: Record<string, unknown> | null = null;
    try {
      details = e.details === undefined ? null : (JSON.parse(JSON.stringify(e.details)) as Record<string, unknown>);
    } catch {
      details = null;
    }
    return { kind: 'WcsError', code: e.code, errorName: e.errorName, httpStatus: e.httpStatus, errorClass: e.errorClass, message: e.message, details };
  }
  if (e instanceof TypeError) return { kind: 'TypeError', message: e.message };
  return { kind: 'Error', message: String((e as Error)?.message ?? e) };
}
