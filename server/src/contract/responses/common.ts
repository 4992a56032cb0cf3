import { z } from 'zod';

/**
 * The shapes every answer shares: the {code, data, msg} envelope, its error forms, and the value
 * types the records and events are made of. Each named schema carries its OpenAPI component id
 * (`.meta({ id })`): server/openapi.json is generated from them (contract/openapi/).
 */

/** ISO 8601 local date-time, written in UTC (the spec's YYYY-MM-DDThh:mm:ss). */
export const localTime = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/).describe('ISO 8601 local date-time, written in UTC');

/** An amount in token units: plain digits, no exponent, no trailing zeros; never a JSON number. */
export const decimalAmount = z.string().regex(/^(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/);

export const Envelope = z.looseObject({
  code: z.int(),
  data: z.unknown(),
  msg: z.string(),
}).meta({ id: 'Envelope' });
export type Envelope = z.infer<typeof Envelope>;

export const ErrorEnvelope = z.looseObject({
  code: z.int().min(1000000000),
  data: z.null(),
  msg: z.string(),
}).meta({ id: 'ErrorEnvelope' });
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

export const BusinessErrorEnvelope = z.intersection(ErrorEnvelope, z.looseObject({ code: z.int().min(1002000000) }).partial()).meta({
  id: 'BusinessErrorEnvelope',
  description: 'A business rule refused an authenticated, well-formed request: HTTP 200 with a BUSINESS-class code (1002000000 and above, docs/errors.md) and data null.',
});
export type BusinessErrorEnvelope = z.infer<typeof BusinessErrorEnvelope>;

/** The envelope of a success carrying `data`: {code: 0, data, msg: ""}. */
export function success<T extends z.ZodType>(data: T) {
  return z.intersection(Envelope, z.looseObject({ code: z.literal(0), data }).partial());
}
