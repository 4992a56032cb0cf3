import { z } from 'zod';

/** Addresses (docs/api.md "Addresses"): what address/create, batch-create, list-by-user and validate answer. */

export const Address = z.object({
  id: z.int(),
  chainCode: z.string(),
  address: z.string().describe('Original letter case (EIP-55 on EVM chains)'),
  memo: z.string().nullable().describe('Memo / destination tag on memo chains (XRP, XLM, EOS); null on HD chains'),
  addressType: z.literal('USER'),
  externalUserId: z.string(),
  status: z.enum(['ACTIVE']),
}).meta({ id: 'Address' });
export type Address = z.infer<typeof Address>;

export const AddressBatchResult = z.object({
  total: z.int(),
  successCount: z.int(),
  failedCount: z.int(),
  items: z.array(z.object({
    chainCode: z.string().nullable(),
    externalUserId: z.string().nullable(),
    success: z.boolean(),
    address: Address.nullable(),
    errorCode: z.int().nullable(),
    errorMessage: z.string().nullable(),
  })),
}).meta({ id: 'AddressBatchResult' });
export type AddressBatchResult = z.infer<typeof AddressBatchResult>;

export const AddressValidation = z.object({
  chainCode: z.string(),
  address: z.string().describe('Echo of the input'),
  valid: z.boolean(),
  normalizedAddress: z.string().nullable().describe('Canonical form (EIP-55, lower-case bech32, classic XRP address for an X-address); null when invalid'),
  memo: z.string().nullable().describe('The memo to send with: the given one, or the tag carried by an XRP X-address'),
  memoRequired: z.boolean().describe('True on memo chains: exchanges and custodians there usually need a memo'),
  reason: z.string().nullable().describe('Why the address is invalid; null when valid'),
}).meta({ id: 'AddressValidation' });
export type AddressValidation = z.infer<typeof AddressValidation>;
