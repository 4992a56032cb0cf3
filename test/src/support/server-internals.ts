/**
 * The operator's collection functions the `wcs collect …` commands and the console call
 * (server/src/collection/operator.ts, operator-items.ts), for tests that drive the service in
 * process: `wcs collect retry` is retryItem, `wcs collect address set` is setCollectionAddress.
 */
import type { AdapterRegistry } from '@wcs/core';
import { TOKENS, retryCollectionItem as retryItem, setCollectionAddress as setAddress, type WcsService } from '@wcs/server';
import { TEST_ACTOR } from '@wcs/server/testing';

/** `wcs collect retry --item <id>`: the FAILED item back to PLANNED, audited (throws CollectCommandError on a refusal). */
export function retryCollectionItem(svc: WcsService, id: number | string): ReturnType<typeof retryItem> {
  return retryItem(svc.storage.database.sequelize, TEST_ACTOR, Number(id));
}

/** `wcs collect address set --app <id> --chain <code> --kind <kind> --address <a>`. */
export function setCollectionAddress(svc: WcsService, o: { app: number; chain: string; kind: 'COLD' | 'MERCHANT'; address: string; memo?: string | null }): ReturnType<typeof setAddress> {
  const registry = svc.storage.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry);
  return setAddress(svc.storage.database.sequelize, svc.storage.catalogue, registry, TEST_ACTOR, { ...o, memo: o.memo ?? null });
}
