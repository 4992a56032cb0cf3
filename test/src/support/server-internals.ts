/**
 * The operator's collection functions the `wcs collect …` commands and the console call
 * (server/src/collection/operator.ts, operator-items.ts), for tests that drive the service in
 * process: `wcs collect retry` is retryItem, `wcs collect address set` is setCollectionAddress.
 * They are not in @wcs/server's public exports, so they are loaded from its build by path, as
 * mocha-fixtures.ts loads the embedded cluster.
 */
import * as path from 'node:path';
import type { AdapterRegistry } from '@wcs/core';
import { TOKENS, type WcsService } from '@wcs/server';
import { TEST_ACTOR } from '@wcs/server/testing';
import type * as OperatorItems from '@wcs/server/dist/collection/operator-items';
import type * as Operator from '@wcs/server/dist/collection/operator';

function serverModule<T>(...parts: string[]): T {
  const dist = path.join(path.dirname(require.resolve('@wcs/server/package.json')), 'dist');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(path.join(dist, ...parts)) as T;
}

/** `wcs collect retry --item <id>`: the FAILED item back to PLANNED, audited (throws CollectCommandError on a refusal). */
export function retryCollectionItem(svc: WcsService, id: number | string): ReturnType<typeof OperatorItems.retryItem> {
  const m = serverModule<typeof OperatorItems>('collection', 'operator-items.js');
  return m.retryItem(svc.storage.database.sequelize, TEST_ACTOR, Number(id));
}

/** `wcs collect address set --app <id> --chain <code> --kind <kind> --address <a>`. */
export function setCollectionAddress(svc: WcsService, o: { app: number; chain: string; kind: 'COLD' | 'MERCHANT'; address: string; memo?: string | null }): ReturnType<typeof Operator.setCollectionAddress> {
  const m = serverModule<typeof Operator>('collection', 'operator.js');
  const registry = svc.storage.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry);
  return m.setCollectionAddress(svc.storage.database.sequelize, svc.storage.catalogue, registry, TEST_ACTOR, { ...o, memo: o.memo ?? null });
}
