import type express from 'express';
import type { ConsoleKit } from '../kit';

/** (being built) */
export function registerWithdrawalPages(_app: express.Express, _kit: ConsoleKit): void {}
