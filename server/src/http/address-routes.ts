import { isWcsError } from '@wcs/core';
import type { AddressService } from '../addresses/address-service';
import { addressBatchCreateRequest, addressCreateRequest, addressListByUserQuery, addressValidateRequest } from '../contract/address';
import { parseBatch, parseBody, parseQuery } from '../contract/parse';
import type { ApiRoute } from './routes';

/** A string field of a batch entry as the merchant sent it (echoed in the entry's result), else null. */
function echoed(raw: unknown, field: string): string | null {
  const v = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>)[field] : undefined;
  return typeof v === 'string' ? v : null;
}

export function addressRoutes(addresses: AddressService): ApiRoute[] {
  return [
    {
      method: 'POST',
      path: '/wallet/address/create',
      body: 'json',
      handler: async ({ app, body }) => {
        const { chainCode, externalUserId } = parseBody(addressCreateRequest, body);
        return addresses.create(app, chainCode, externalUserId);
      },
    },
    {
      method: 'POST',
      path: '/wallet/address/batch-create',
      body: 'json',
      handler: async ({ app, body }) => {
        const read = parseBatch(addressBatchCreateRequest, addressCreateRequest, body);
        const raw = (body as { items: unknown[] }).items;
        const results = [];
        // Sequential on purpose: entries for one user on EVM chains share a key, and a
        // merchant's batch should not monopolise the database pool.
        for (let i = 0; i < read.length; i++) {
          const echo = { chainCode: echoed(raw[i], 'chainCode'), externalUserId: echoed(raw[i], 'externalUserId') };
          const entry = read[i]!;
          try {
            if (!entry.ok) throw entry.error;
            const address = await addresses.create(app, entry.value.chainCode, entry.value.externalUserId);
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
        const { externalUserId, chainCode } = parseQuery(addressListByUserQuery, query);
        return addresses.listByUser(app, externalUserId, chainCode);
      },
    },
    {
      method: 'POST',
      path: '/wallet/address/validate',
      body: 'json',
      handler: async ({ app, body }) => {
        const { chainCode, address, memo } = parseBody(addressValidateRequest, body);
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
