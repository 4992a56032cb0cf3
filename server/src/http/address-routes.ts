import { CHAIN_CODE_RE, invalidParameter, isWcsError } from '@wcs/core';
import type { AddressService } from '../addresses/address-service';
import { EXTERNAL_USER_ID_RE } from '../addresses/address-service';
import { BodyReader } from './body';
import type { ApiRoute } from './routes';

/** Largest batch-create request (docs/api.md). */
export const ADDRESS_BATCH_MAX = 100;
const CHAIN_CODE = { pattern: CHAIN_CODE_RE, patternText: 'must be an upper-case chain code such as ETH' };
const USER_ID = { max: 64, pattern: EXTERNAL_USER_ID_RE, patternText: 'must be 1 to 64 characters of letters, digits and _ - . @ : + =' };

export function addressRoutes(addresses: AddressService): ApiRoute[] {
  return [
    {
      method: 'POST',
      path: '/wallet/address/create',
      body: 'json',
      handler: async ({ app, body }) => {
        const b = new BodyReader(body);
        const chainCode = b.string('chainCode', { required: true, ...CHAIN_CODE });
        const externalUserId = b.string('externalUserId', { required: true, ...USER_ID });
        b.noOthers();
        return addresses.create(app, chainCode, externalUserId);
      },
    },
    {
      method: 'POST',
      path: '/wallet/address/batch-create',
      body: 'json',
      handler: async ({ app, body }) => {
        const b = new BodyReader(body);
        const items = b.array('items', { min: 1, max: ADDRESS_BATCH_MAX });
        b.noOthers();
        const results = [];
        // Sequential on purpose: entries for one user on EVM chains share a key, and a
        // merchant's batch should not monopolise the database pool.
        for (let i = 0; i < items.length; i++) {
          const raw = items[i];
          const echo = {
            chainCode: typeof (raw as { chainCode?: unknown })?.chainCode === 'string' ? (raw as { chainCode: string }).chainCode : null,
            externalUserId: typeof (raw as { externalUserId?: unknown })?.externalUserId === 'string' ? (raw as { externalUserId: string }).externalUserId : null,
          };
          try {
            const r = new BodyReader(raw, `items[${i}]`);
            const chainCode = r.string('chainCode', { required: true, ...CHAIN_CODE });
            const externalUserId = r.string('externalUserId', { required: true, ...USER_ID });
            r.noOthers();
            const address = await addresses.create(app, chainCode, externalUserId);
            results.push({ ...echo, success: true, address, errorCode: null, errorMessage: null });
          } catch (e) {
            // Business and input errors are per entry; faults fail the request (entries are idempotent: retry it).
            if (!isWcsError(e) || e.errorClass === 'INTERNAL') throw e;
            results.push({ ...echo, success: false, address: null, errorCode: e.code, errorMessage: e.message });
          }
        }
        const successCount = results.filter((r) => r.success).length;
        return { total: results.length, successCount, failedCount: results.length - successCount, items: results };
      },
    },
    {
      method: 'GET',
      path: '/wallet/address/list-by-user',
      body: 'none',
      handler: async ({ app, query }) => {
        const externalUserId = query.string('externalUserId', USER_ID);
        const chainCode = query.string('chainCode', CHAIN_CODE);
        query.noOthers();
        if (externalUserId === undefined) throw invalidParameter('externalUserId', 'is required');
        return addresses.listByUser(app, externalUserId, chainCode);
      },
    },
    {
      method: 'POST',
      path: '/wallet/address/validate',
      body: 'json',
      handler: async ({ app, body }) => {
        const b = new BodyReader(body);
        const chainCode = b.string('chainCode', { required: true, ...CHAIN_CODE });
        const address = b.string('address', { required: true, max: 256 });
        const memo = b.string('memo', { max: 256 });
        b.noOthers();
        const chain = addresses.enabledChain(app, chainCode);
        const adapter = addresses.adapter(chain);
        const r = adapter.address.validate(address, memo ?? null);
        return {
          chainCode,
          address,
          valid: r.valid,
          normalizedAddress: r.valid ? r.normalized : null,
          memo: r.valid ? r.memo : null,
          memoRequired: chain.addressing === 'memo',
          reason: r.valid ? null : r.reason,
        };
      },
    },
  ];
}
