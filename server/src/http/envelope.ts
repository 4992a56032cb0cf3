import type { Response } from 'express';
import type { Envelope } from '../contract/responses/common';

export type { Envelope };

/** Where the envelope's code is left for observers of the response (the request metrics). */
export const ENVELOPE_CODE = 'envelopeCode';

export function sendOk(res: Response, data: unknown): void {
  res.locals[ENVELOPE_CODE] = 0;
  res.status(200).json({ code: 0, data, msg: '' } satisfies Envelope);
}

export function sendError(res: Response, httpStatus: number, code: number, msg: string, data: unknown = null): void {
  res.locals[ENVELOPE_CODE] = code;
  res.status(httpStatus).json({ code, data, msg } satisfies Envelope);
}
