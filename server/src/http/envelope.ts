import type { Response } from 'express';

export interface Envelope<T = unknown> {
  code: number;
  data: T;
  msg: string;
}

export function sendOk(res: Response, data: unknown): void {
  res.status(200).json({ code: 0, data, msg: '' } satisfies Envelope);
}

export function sendError(res: Response, httpStatus: number, code: number, msg: string, data: unknown = null): void {
  res.status(httpStatus).json({ code, data, msg } satisfies Envelope);
}
