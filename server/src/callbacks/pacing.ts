/**
 * The per-endpoint delivery rate limit (docs/callbacks.md, "Rate limit"), as pure decisions.
 * An application with `callback_rate_limit` = r sends at most r deliveries per second to each of
 * its endpoints, across every dispatcher process: send slots are handed out from one shared
 * "next free slot" per (application, endpoint) in Postgres (callback_pacing), 1/r seconds apart.
 * A process claims at most PACED_HORIZON_S seconds of slots for a paced endpoint at a time, so
 * a claimed task waits at most that long (times the number of processes) for its slot, far
 * inside its lease.
 */

/** Seconds of send slots a process claims ahead for one paced endpoint. */
export const PACED_HORIZON_S = 1;

/**
 * How many more tasks of a paced endpoint a process may claim now: a horizon's worth of slots
 * (at least one) less what it already holds for that endpoint, within the endpoint's cap.
 */
export function pacedRoom(ratePerSecond: number, held: number, cap: number): number {
  const horizon = Math.max(1, Math.floor(ratePerSecond * PACED_HORIZON_S));
  return Math.max(0, Math.min(cap, horizon) - held);
}

/**
 * The send delays (ms from now) of n tasks given the first free slot's delay (ms from now,
 * negative or 0 when the slot is free already): slot i is i/r seconds after the first, and
 * never before now.
 */
export function slotDelays(firstSlotDelayMs: number, n: number, ratePerSecond: number): number[] {
  const step = 1000 / ratePerSecond;
  const first = Math.max(0, firstSlotDelayMs);
  return Array.from({ length: n }, (_, i) => first + i * step);
}
