import type { z } from 'zod';
import { EXTERNAL_USER_ID_RE } from '../addresses/address-service';
import { body, CHAIN_CODE, optionalString, query, queryString, requiredArray, requiredString, type StringRule } from './fields';

/** Addresses (docs/api.md "Addresses"): create, batch-create, list-by-user, validate. */

/** Largest batch-create request (docs/api.md). */
export const ADDRESS_BATCH_MAX = 100;

const USER_ID: StringRule = { max: 64, pattern: EXTERNAL_USER_ID_RE, patternText: 'must be 1 to 64 characters of letters, digits and _ - . @ : + =' };

/** POST address/create, and each entry of batch-create. */
export const addressCreateRequest = body({
  chainCode: requiredString(CHAIN_CODE),
  externalUserId: requiredString(USER_ID).describe('Merchant-side user id: 1-64 characters of letters, digits and _ - . @ : + =; case-sensitive.'),
}).meta({ id: 'AddressCreateRequest' });
export type AddressCreateRequest = z.infer<typeof addressCreateRequest>;

/** POST address/batch-create: 1 to 100 entries, each read (and answered) on its own. */
export const addressBatchCreateRequest = body({
  items: requiredArray(addressCreateRequest, 1, ADDRESS_BATCH_MAX),
}).meta({ id: 'AddressBatchRequest' });
export type AddressBatchCreateRequest = z.infer<typeof addressBatchCreateRequest>;

/** GET address/list-by-user. */
export const addressListByUserQuery = query({
  externalUserId: queryString(USER_ID).meta({ example: 'user-42' }),
  chainCode: queryString(CHAIN_CODE).optional().meta({ example: 'ETH' }),
});
export type AddressListByUserQuery = z.infer<typeof addressListByUserQuery>;

/** POST address/validate. */
export const addressValidateRequest = body({
  chainCode: requiredString(CHAIN_CODE),
  address: requiredString({ max: 256 }),
  memo: optionalString({ max: 256 }).describe('The memo / tag you intend to send with (memo chains)'),
}).meta({ id: 'AddressValidateRequest' });
export type AddressValidateRequest = z.infer<typeof addressValidateRequest>;
