import { z } from 'zod';
import { addressBatchCreateRequest, addressCreateRequest, addressListByUserQuery, addressValidateRequest } from '../../address';
import { Address, AddressBatchResult, AddressValidation } from '../../responses/address';
import type { OperationDoc } from '../document';

/** An example address record, shown by several operations. */
const EXAMPLE_ADDRESS = {
  "id": 1,
  "chainCode": "ETH",
  "address": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  "memo": null,
  "addressType": "USER",
  "externalUserId": "user-42",
  "status": "ACTIVE"
};

/** The operations of addresses. */
export const ADDRESS_OPERATIONS: readonly OperationDoc[] = [
  {
    method: 'post',
    path: '/api/v1/wallet/address/create',
    operationId: 'createAddress',
    summary: "The user's deposit address on a chain (idempotent; ETH also creates the other enabled EVM chains' rows)",
    signed: true,
    keystore: true,
    body: addressCreateRequest,
    bodyExamples: {
      "ethUser": {
        "summary": "ETH address of user-42",
        "value": {
          "chainCode": "ETH",
          "externalUserId": "user-42"
        }
      }
    },
    data: Address,
    business: true,
    description200: 'Envelope with data = Address. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "created": {
        "summary": "The user's ETH deposit address",
        "value": {
          "code": 0,
          "data": EXAMPLE_ADDRESS,
          "msg": ""
        }
      },
      "chainNotEnabled": {
        "summary": "Business error: chain not enabled",
        "value": {
          "code": 1003001002,
          "data": null,
          "msg": "Chain SOL is not enabled for this application"
        }
      }
    },
  },
  {
    method: 'post',
    path: '/api/v1/wallet/address/batch-create',
    operationId: 'batchCreateAddresses',
    summary: 'Create addresses for up to 100 (chain, user) entries; per-entry results in request order',
    signed: true,
    keystore: true,
    body: addressBatchCreateRequest,
    bodyExamples: {
      "twoChains": {
        "summary": "Two chains for one user",
        "value": {
          "items": [
            {
              "chainCode": "ETH",
              "externalUserId": "user-42"
            },
            {
              "chainCode": "BTC",
              "externalUserId": "user-42"
            }
          ]
        }
      }
    },
    data: AddressBatchResult,
    business: true,
    description200: 'Envelope with data = AddressBatchResult. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "mixed": {
        "summary": "One entry created, one refused",
        "value": {
          "code": 0,
          "data": {
            "total": 2,
            "successCount": 1,
            "failedCount": 1,
            "items": [
              {
                "chainCode": "ETH",
                "externalUserId": "user-42",
                "success": true,
                "address": EXAMPLE_ADDRESS,
                "errorCode": null,
                "errorMessage": null
              },
              {
                "chainCode": "DOGE",
                "externalUserId": "user-42",
                "success": false,
                "address": null,
                "errorCode": 1003001001,
                "errorMessage": "Unknown chain code: DOGE"
              }
            ]
          },
          "msg": ""
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/address/list-by-user',
    operationId: 'listAddressesByUser',
    summary: 'All addresses of one user, on every chain, as a flat array',
    signed: true,
    query: addressListByUserQuery,
    data: z.array(Address),
    business: true,
    description200: 'Envelope with data = array of Address. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "addresses": {
        "summary": "The user's addresses",
        "value": {
          "code": 0,
          "data": [
            EXAMPLE_ADDRESS
          ],
          "msg": ""
        }
      }
    },
  },
  {
    method: 'post',
    path: '/api/v1/wallet/address/validate',
    operationId: 'validateAddress',
    summary: 'Check a target address (and memo) for a chain and return its canonical form',
    signed: true,
    body: addressValidateRequest,
    bodyExamples: {
      "evm": {
        "summary": "An EIP-55 address",
        "value": {
          "chainCode": "ETH",
          "address": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e"
        }
      }
    },
    data: AddressValidation,
    business: true,
    description200: 'Envelope with data = AddressValidation. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "valid": {
        "summary": "A valid address",
        "value": {
          "code": 0,
          "data": {
            "chainCode": "ETH",
            "address": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
            "valid": true,
            "normalizedAddress": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
            "memo": null,
            "memoRequired": false,
            "reason": null
          },
          "msg": ""
        }
      }
    },
  },
];
