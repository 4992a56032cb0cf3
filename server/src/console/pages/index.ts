import type express from 'express';
import type { ConsoleKit } from '../kit';
import { registerAlertPages } from './alerts';
import { registerApplicationPages } from './applications';
import { registerAuditPages } from './audit';
import { registerCallbackPages } from './callbacks';
import { registerCollectionPages } from './collection';
import { registerDepositPages } from './deposits';
import { registerKeyStorePages } from './keystore';
import { registerOperatorPages } from './operators';
import { registerOverviewPages } from './overview';
import { registerReconciliationPages } from './reconciliation';
import { registerRecoveryPages } from './recovery';
import { registerWalletPages } from './wallets';
import { registerWithdrawalPages } from './withdrawals';

/** The console's pages, one module per area (a newcomer finds a page's code by its name). */
export const PAGE_MODULES: readonly ((app: express.Express, kit: ConsoleKit) => void)[] = [
  registerOverviewPages,
  registerApplicationPages,
  registerCallbackPages,
  registerDepositPages,
  registerWithdrawalPages,
  registerWalletPages,
  registerCollectionPages,
  registerReconciliationPages,
  registerRecoveryPages,
  registerKeyStorePages,
  registerAlertPages,
  registerAuditPages,
  registerOperatorPages,
];
