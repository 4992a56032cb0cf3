import { SUPPORT_OPERATIONS } from './operations/support';
import { ADDRESS_OPERATIONS } from './operations/address';
import { CALLBACK_OPERATIONS } from './operations/callback';
import { SERVICE_OPERATIONS } from './operations/service';
import { RECHARGE_OPERATIONS } from './operations/recharge';
import { WITHDRAW_OPERATIONS } from './operations/withdraw';
import { CHAIN_EVENT_OPERATIONS } from './operations/chain-event';
import { RECONCILIATION_OPERATIONS } from './operations/reconciliation';
import type { OperationDoc } from './document';

/**
 * Every operation of the API, as the OpenAPI document shows it: its route, what it reads (the
 * query and body schemas the route parses with), the `data` of its success envelope, and the
 * text and examples a merchant reads; one file per area. document.ts builds the paths from this
 * list (in this order); a test checks that it names exactly the routes the server mounts.
 */
export const OPERATIONS: readonly OperationDoc[] = [
  ...SUPPORT_OPERATIONS,
  ...ADDRESS_OPERATIONS,
  ...CALLBACK_OPERATIONS,
  ...SERVICE_OPERATIONS,
  ...RECHARGE_OPERATIONS,
  ...WITHDRAW_OPERATIONS,
  ...CHAIN_EVENT_OPERATIONS,
  ...RECONCILIATION_OPERATIONS,
];
