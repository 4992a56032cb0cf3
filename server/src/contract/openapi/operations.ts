import { z } from 'zod';
import { addressBatchCreateRequest, addressCreateRequest, addressListByUserQuery, addressValidateRequest } from '../address';
import { callbackAttemptsQuery, callbackResendRequest, callbackTasksQuery, eventsQuery } from '../callback';
import { chainEventListQuery, idQuery, outflowListQuery, subscriptionCreateRequest, subscriptionDeleteRequest, subscriptionListQuery, subscriptionUpdateRequest } from '../chain-event';
import { rechargeGetQuery, rechargeListQuery } from '../recharge';
import { reconciliationBalancesQuery } from '../reconciliation';
import { supportChainsQuery, supportTokensQuery } from '../support';
import { withdrawBatchCreateRequest, withdrawCreateRequest, withdrawGetQuery } from '../withdraw';
import { Address, AddressBatchResult, AddressValidation } from '../responses/address';
import { CallbackAttempt, CallbackTask } from '../responses/callback';
import { ChainEvent, ChainSubscription, Outflow } from '../responses/chain-event';
import { Recharge } from '../responses/recharge';
import { ReconciliationBalance } from '../responses/reconciliation';
import { Chain, ReadyChecks, Token } from '../responses/support';
import { Withdraw, WithdrawBatchResult } from '../responses/withdraw';
import { FeedPage } from '../events';
import type { OperationDoc } from './document';

/**
 * Every operation of the API, as the OpenAPI document shows it: its route, what it reads (the
 * query and body schemas the route parses with), the `data` of its success envelope, and the
 * text and examples a merchant reads. document.ts builds the paths from this list; a test checks
 * that it names exactly the routes the server mounts.
 */
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

/** An example recharge record, shown by several operations. */
const EXAMPLE_RECHARGE = {
  "id": 1,
  "applicationId": 1,
  "chainId": 102,
  "chainCode": "ETH",
  "chainTokenId": 10200,
  "tokenSymbol": "ETH",
  "contractAddress": null,
  "externalUserId": "user-42",
  "address": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  "memo": null,
  "fromAddress": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
  "amount": "0.25",
  "txHash": "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
  "position": -1,
  "blockHeight": 7412345,
  "blockHash": "0x8e38b4dbf6b11fcc3b9dee84fb7986e29ca0a02cecd8977c161ff7333329681e",
  "txStatus": "CONFIRMED",
  "confirmations": 3,
  "minConfirmations": 3,
  "failReason": null,
  "createTime": "2025-01-15T08:30:00",
  "updateTime": "2025-01-15T08:30:12",
  "confirmedTime": "2025-01-15T08:30:12",
  "settledTime": null,
  "failedTime": null
};

/** An example withdraw record, shown by several operations. */
const EXAMPLE_WITHDRAW = {
  "id": 1,
  "appOrderNo": "order-1001",
  "chainCode": "ETH",
  "chainTokenId": 10200,
  "token": "ETH",
  "amount": "0.01",
  "fee": "0.000441",
  "fromAddress": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  "toAddress": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
  "memo": null,
  "txHash": null,
  "blockHeight": null,
  "confirmations": 0,
  "status": "PROCESSING",
  "failReason": null,
  "riskLevel": null,
  "riskReason": null,
  "callbackTaskId": null,
  "createTime": "2025-01-15T08:30:00",
  "updateTime": "2025-01-15T08:30:00"
};

/** An example withdraw request record, shown by several operations. */
const EXAMPLE_WITHDRAW_REQUEST = {
  "appOrderNo": "order-1001",
  "chainCode": "ETH",
  "chainTokenId": 10200,
  "toAddress": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
  "amount": "0.01",
  "remark": "payout to user-42"
};

/** An example chain event record, shown by several operations. */
const EXAMPLE_CHAIN_EVENT = {
  "id": 7,
  "subscriptionId": 1,
  "applicationId": 1,
  "chainId": 102,
  "chainCode": "ETH",
  "chainTokenId": 10202,
  "tokenSymbol": "USDC",
  "contractAddress": "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
  "fromAddress": "0x28C6c06298d514Db089934071355E5743bf21d60",
  "toAddress": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  "monitoredAddress": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  "amount": "1250",
  "txHash": "0x3b1f8e2a9c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7",
  "position": 41,
  "blockHeight": 7412345,
  "blockHash": "0x6d2e8f1a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6",
  "directionMatched": "IN",
  "addressNature": "EOA",
  "status": "CONFIRMED",
  "minConfirmations": 3,
  "callbackTaskId": 12,
  "createTime": "2025-01-15T09:00:05",
  "confirmedTime": "2025-01-15T09:00:41",
  "updateTime": "2025-01-15T09:00:41"
};

/** An example outflow record, shown by several operations. */
const EXAMPLE_OUTFLOW = {
  "id": 3,
  "applicationId": 1,
  "chainId": 102,
  "chainCode": "ETH",
  "chainTokenId": 10202,
  "tokenSymbol": "USDC",
  "contractAddress": "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
  "addressKind": "DEPOSIT",
  "fromAddress": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  "externalUserId": "user-42",
  "toAddress": "0x28C6c06298d514Db089934071355E5743bf21d60",
  "amount": "500",
  "txHash": "0x9f4e2d1c0b1a29384756a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
  "position": 12,
  "blockHeight": 7412400,
  "blockHash": "0x1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809",
  "callbackTaskId": 15,
  "createTime": "2025-01-15T10:12:30"
};

export const OPERATIONS: readonly OperationDoc[] = [
  {
    method: 'get',
    path: '/api/v1/wallet/support/chains',
    operationId: 'listSupportedChains',
    summary: 'Chains enabled for the calling application, in its environment',
    signed: true,
    query: supportChainsQuery,
    data: z.array(Chain),
    business: true,
    description200: 'Envelope with data = array of Chain. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "chains": {
        "summary": "The enabled chains",
        "value": {
          "code": 0,
          "data": [
            {
              "chainId": 102,
              "chainCode": "ETH",
              "chainName": "Ethereum Sepolia",
              "family": "evm",
              "network": "sepolia",
              "nativeSymbol": "ETH",
              "decimals": 18,
              "minConfirmations": 3,
              "memoRequired": false,
              "evmChainId": 11155111,
              "depositDetection": "NO_RPC"
            }
          ],
          "msg": ""
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/support/tokens',
    operationId: 'listSupportedTokens',
    summary: "Tokens (native coins included) on the application's enabled chains",
    signed: true,
    query: supportTokensQuery,
    data: z.array(Token),
    business: true,
    description200: 'Envelope with data = array of Token. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "tokens": {
        "summary": "Tokens of ETH",
        "value": {
          "code": 0,
          "data": [
            {
              "chainTokenId": 10200,
              "chainId": 102,
              "chainCode": "ETH",
              "symbol": "ETH",
              "name": "Ethereum Sepolia native coin",
              "contractAddress": null,
              "decimals": 18,
              "native": true
            },
            {
              "chainTokenId": 10202,
              "chainId": 102,
              "chainCode": "ETH",
              "symbol": "USDC",
              "name": "USD Coin (Sepolia)",
              "contractAddress": "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
              "decimals": 6,
              "native": false
            }
          ],
          "msg": ""
        }
      },
      "chainUnknown": {
        "summary": "Business error: unknown chain code",
        "value": {
          "code": 1003001001,
          "data": null,
          "msg": "Unknown chain code: DOGE"
        }
      }
    },
  },
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
  {
    method: 'get',
    path: '/api/v1/wallet/callback/tasks',
    operationId: 'listCallbackTasks',
    summary: 'Pages through the callback tasks of the calling application, newest first',
    signed: true,
    query: callbackTasksQuery,
    data: z.object({
      list: z.array(CallbackTask),
      total: z.int(),
    }),
    business: true,
    description200: 'Envelope with data = {list, total}. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "page": {
        "summary": "One page of tasks",
        "value": {
          "code": 0,
          "data": {
            "list": [
              {
                "id": 1,
                "bizType": "WITHDRAW",
                "bizId": 0,
                "url": "https://merchant.example.com/wcs/callbacks",
                "status": "SUCCESS",
                "retryTimes": 0,
                "maxRetryTimes": 10,
                "nextRetryTime": null,
                "lastResponseSummary": "success",
                "lastError": null,
                "createTime": "2025-01-15T08:30:00",
                "updateTime": "2025-01-15T08:30:12"
              }
            ],
            "total": 1
          },
          "msg": ""
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/callback/attempts',
    operationId: 'listCallbackAttempts',
    summary: 'The delivery attempts of one callback task, in attempt order',
    signed: true,
    query: callbackAttemptsQuery,
    data: z.array(CallbackAttempt),
    business: true,
    description200: 'Envelope with data = array of CallbackAttempt. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "attempts": {
        "summary": "One accepted delivery",
        "value": {
          "code": 0,
          "data": [
            {
              "id": 1,
              "callbackTaskId": 1,
              "attemptNo": 1,
              "requestHeadersSummary": {
                ":method": "POST",
                ":url": "https://merchant.example.com/wcs/callbacks",
                "Content-Type": "application/json",
                "X-Api-Key": "pk_t****9c1e",
                "X-Timestamp": "1736929800000",
                "X-Nonce": "6f1c2a9e-3b7d-4c55-9a0e-2d41b8f7c301",
                "X-Signature": "3f9a****b21c"
              },
              "requestBodySummary": "{\"event\":\"test\",\"applicationId\":1,\"bizType\":\"WITHDRAW\"}",
              "requestBodyLength": 56,
              "requestBodySha256": "9f2c7e5b1d4a3f6e8c0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c",
              "responseStatus": 200,
              "responseContentType": "text/plain",
              "responseBodySummary": "success",
              "responseBodyLength": 7,
              "responseBodySha256": "a5a09f4bd0d5a6e1c1a33a4f0b2b7e1e9ab9a27b3e8a8b3c5d3d0c1f25e3b1a0",
              "accepted": true,
              "latencyMs": 12,
              "errorReason": null,
              "nextRetryTime": null,
              "createTime": "2025-01-15T08:30:12"
            }
          ],
          "msg": ""
        }
      }
    },
  },
  {
    method: 'post',
    path: '/api/v1/wallet/callback/resend',
    operationId: 'resendCallback',
    summary: 'Re-queues a FAILED (also exhausted) or SUCCESS task with a fresh retry budget',
    description: "WAITING or PROCESSING tasks answer 1005001002; unknown or another application's task 1005001001; a task whose bizType has no callback URL configured 1002001003.",
    signed: true,
    body: callbackResendRequest,
    bodyExamples: {
      "task": {
        "summary": "Resend task 1",
        "value": {
          "callbackTaskId": 1
        }
      }
    },
    data: CallbackTask,
    business: true,
    description200: 'Envelope with data = the re-queued CallbackTask (status WAITING). HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "requeued": {
        "summary": "The task, queued again",
        "value": {
          "code": 0,
          "data": {
            "id": 1,
            "bizType": "WITHDRAW",
            "bizId": 0,
            "url": "https://merchant.example.com/wcs/callbacks",
            "status": "WAITING",
            "retryTimes": 0,
            "maxRetryTimes": 10,
            "nextRetryTime": null,
            "lastResponseSummary": "success",
            "lastError": null,
            "createTime": "2025-01-15T08:30:00",
            "updateTime": "2025-01-15T09:00:00"
          },
          "msg": ""
        }
      },
      "taskNotFound": {
        "summary": "Business error: no such task of this application",
        "value": {
          "code": 1005001001,
          "data": null,
          "msg": "Callback task not found"
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/events',
    operationId: 'listEvents',
    summary: 'The events feed: every callback event of the calling application after a cursor, in commit order, gap-free',
    description: "Lists the application's callback events (the same events its webhooks carry, delivered or not) after the opaque cursor `after`, oldest first. An event is listed only once every transaction that began before the one that wrote it has ended, so an event can never appear behind a cursor a client already passed, and an event of a rolled-back change never appears. Events are kept for the retention period (WCS_EVENTS_RETENTION_DAYS, default 90 days). Errors: 1005002001 EVENT_CURSOR_INVALID, 1005002002 EVENT_CURSOR_FOREIGN (a cursor issued to another application), 1005002003 EVENT_CURSOR_EXPIRED (events after the cursor were removed by retention: start again without `after` and reconcile). See docs/events-feed.md.",
    signed: true,
    query: eventsQuery,
    data: FeedPage,
    business: true,
    description200: 'Envelope with data = {list, nextCursor, hasMore}. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "page": {
        "summary": "One event (a test event), more listable",
        "value": {
          "code": 0,
          "data": {
            "list": [
              {
                "id": 12,
                "cursor": "ZTEuMS43NDgwMDEuMTI",
                "bizType": "WITHDRAW",
                "bizId": 0,
                "createTime": "2025-01-15T09:00:05",
                "payload": {
                  "event": "test",
                  "applicationId": 1,
                  "bizType": "WITHDRAW",
                  "message": "Test callback from the wallet custody service: verify the signature, then answer HTTP 200 with {\"code\":0}, \"success\" or \"ok\".",
                  "createTime": "2025-01-15T09:00:05"
                }
              }
            ],
            "nextCursor": "ZTEuMS43NDgwMDEuMTI",
            "hasMore": true
          },
          "msg": ""
        }
      },
      "foreign": {
        "summary": "Business error: the cursor was issued to another application",
        "value": {
          "code": 1005002002,
          "data": null,
          "msg": "The cursor was issued to another application"
        }
      }
    },
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    summary: 'Liveness (unauthenticated)',
    signed: false,
    data: z.strictObject({
      status: z.literal('ok'),
    }),
    description200: 'Envelope with data.status = ok',
    examples: {
      "ok": {
        "summary": "The process is up",
        "value": {
          "code": 0,
          "data": {
            "status": "ok"
          },
          "msg": ""
        }
      }
    },
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'ready',
    summary: 'Readiness: database reachable and migrated, key store open (unauthenticated)',
    signed: false,
    data: z.object({
      status: z.literal('ready'),
      checks: ReadyChecks,
    }),
    description200: 'data.status = ready, data.checks',
    examples: {
      "ready": {
        "summary": "Ready",
        "value": {
          "code": 0,
          "data": {
            "status": "ready",
            "checks": {
              "database": "ok",
              "credentialCache": "listening",
              "keystore": "ok"
            }
          },
          "msg": ""
        }
      }
    },
    responses: {
      "503": {
        "description": "code 1000009002, data.status = not_ready, data.checks names what failed",
        "content": {
          "application/json": {
            "schema": {
              "allOf": [
                {
                  "$ref": "#/components/schemas/Envelope"
                },
                {
                  "properties": {
                    "code": {
                      "const": 1000009002
                    },
                    "data": {
                      "type": "object",
                      "required": [
                        "status",
                        "checks"
                      ],
                      "properties": {
                        "status": {
                          "const": "not_ready"
                        },
                        "checks": {
                          "$ref": "#/components/schemas/ReadyChecks"
                        }
                      }
                    }
                  }
                }
              ]
            },
            "examples": {
              "notReady": {
                "summary": "The key store could not be opened yet",
                "value": {
                  "code": 1000009002,
                  "msg": "Service is not ready",
                  "data": {
                    "status": "not_ready",
                    "checks": {
                      "database": "ok",
                      "credentialCache": "listening",
                      "keystore": "unavailable: wrong passphrase"
                    }
                  }
                }
              }
            }
          }
        },
        "headers": {
          "X-Request-Id": {
            "$ref": "#/components/headers/XRequestId"
          }
        }
      }
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document (unauthenticated)',
    signed: false,
    document: z.object({
      openapi: z.string().regex(/^3\.1\.\d+$/),
      info: z.object({}),
      paths: z.object({}),
    }),
    description200: 'This OpenAPI 3.1 document itself (not an envelope)',
    examples: {
      "document": {
        "summary": "The start of the document",
        "value": {
          "openapi": "3.1.0",
          "info": {
            "title": "Wallet Custody Service API",
            "version": "1"
          },
          "paths": {}
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/recharge/get',
    operationId: 'getRecharge',
    summary: 'One recharge (deposit) record of the calling application',
    signed: true,
    query: rechargeGetQuery,
    data: Recharge,
    business: true,
    description200: "Envelope with data = the record; code 1006001001 RECHARGE_NOT_FOUND when the id is not one of the caller's records. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).",
    examples: {
      "recharge": {
        "summary": "A confirmed deposit",
        "value": {
          "code": 0,
          "data": EXAMPLE_RECHARGE,
          "msg": ""
        }
      },
      "notFound": {
        "summary": "Business error: no such record of this application",
        "value": {
          "code": 1006001001,
          "data": null,
          "msg": "Recharge record not found"
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/recharge/list',
    operationId: 'listRecharges',
    summary: 'Pages through the recharge records of the calling application, newest first (reconciliation)',
    signed: true,
    query: rechargeListQuery,
    data: z.object({
      list: z.array(Recharge),
      total: z.int(),
    }),
    business: true,
    description200: 'Envelope with data = {list, total}. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "page": {
        "summary": "One page of deposits",
        "value": {
          "code": 0,
          "data": {
            "list": [
              EXAMPLE_RECHARGE
            ],
            "total": 1
          },
          "msg": ""
        }
      }
    },
  },
  {
    method: 'post',
    path: '/api/v1/wallet/withdraw/batch-create',
    operationId: 'batchCreateWithdraw',
    summary: 'Submit several withdrawal orders; one result per item, in request order',
    signed: true,
    body: withdrawBatchCreateRequest,
    bodyExamples: {
      "two": {
        "summary": "Two orders",
        "value": {
          "items": [
            EXAMPLE_WITHDRAW_REQUEST,
            {
              "appOrderNo": "order-1002",
              "chainCode": "ETH",
              "chainTokenId": 10202,
              "toAddress": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
              "amount": "25.5"
            }
          ]
        }
      }
    },
    data: WithdrawBatchResult,
    business: true,
    description200: 'Envelope with data = the per-item results. Item errors: 1000001003 (a field of the wrong type), 1003001001/1003001002/1003001003 (chain, token), 1007001001 duplicate appOrderNo, 1007002001..1007002004 (address, memo, amount, token of another chain), 1002001003 callbackUrl malformed, 1002001004 callbackUrl reaches a loopback, private, link-local or metadata address (live applications), 1007004001 chain not available, 1007004002 hot wallet balance too low. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "mixed": {
        "summary": "One order accepted, one refused",
        "value": {
          "code": 0,
          "data": {
            "total": 2,
            "successCount": 1,
            "failedCount": 1,
            "items": [
              {
                "appOrderNo": "order-1001",
                "success": true,
                "withdraw": EXAMPLE_WITHDRAW,
                "errorCode": null,
                "errorMessage": null
              },
              {
                "appOrderNo": "order-1002",
                "success": false,
                "withdraw": null,
                "errorCode": 1007002001,
                "errorMessage": "toAddress is not a valid ETH (sepolia) address: bad EIP-55 checksum"
              }
            ]
          },
          "msg": ""
        }
      }
    },
  },
  {
    method: 'post',
    path: '/api/v1/wallet/withdraw/create',
    operationId: 'createWithdraw',
    summary: 'Submit one withdrawal order (the item of batch-create as the body)',
    signed: true,
    body: withdrawCreateRequest,
    bodyExamples: {
      "native": {
        "summary": "0.01 ETH to an external address",
        "value": EXAMPLE_WITHDRAW_REQUEST
      }
    },
    data: Withdraw,
    business: true,
    description200: "Envelope with data = the accepted record (status PROCESSING); a refused order answers the item's error code with data null. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).",
    examples: {
      "accepted": {
        "summary": "The accepted order",
        "value": {
          "code": 0,
          "data": EXAMPLE_WITHDRAW,
          "msg": ""
        }
      },
      "chainUnavailable": {
        "summary": "Business error: no node configured for the chain yet",
        "value": {
          "code": 1007004001,
          "data": null,
          "msg": "Withdrawals of ETH on ETH are not available yet: the hot wallet's balance or the fee has not been read from a node (is an RPC endpoint configured?)"
        }
      },
      "balanceTooLow": {
        "summary": "Business error: hot wallet balance too low",
        "value": {
          "code": 1007004002,
          "data": null,
          "msg": "Hot wallet balance is insufficient on ETH: needs 0.010441 ETH (amount plus the fee), 0.002 ETH available: short by 0.008441 ETH"
        }
      },
      "duplicate": {
        "summary": "Business error: appOrderNo already used",
        "value": {
          "code": 1007001001,
          "data": null,
          "msg": "appOrderNo order-1001 was already used by an earlier order; the existing order is unchanged"
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/withdraw/get',
    operationId: 'getWithdraw',
    summary: 'One withdrawal order of the calling application, by id or by appOrderNo',
    signed: true,
    query: withdrawGetQuery,
    data: Withdraw,
    business: true,
    description200: "Envelope with data = the record; 1007001002 WITHDRAW_NOT_FOUND when it is not one of the caller's orders. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).",
    examples: {
      "order": {
        "summary": "An order being processed",
        "value": {
          "code": 0,
          "data": EXAMPLE_WITHDRAW,
          "msg": ""
        }
      },
      "notFound": {
        "summary": "Business error: no such order of this application",
        "value": {
          "code": 1007001002,
          "data": null,
          "msg": "Withdrawal order not found"
        }
      }
    },
  },
  {
    method: 'post',
    path: '/api/v1/wallet/chain-event/subscription/create',
    operationId: 'createChainSubscription',
    summary: 'Subscribe to the transfers of addresses on one chain (idempotent on appSubscriptionNo)',
    description: "Monitored addresses may be any addresses of the chain. Matching starts with the chain scanner's next step after the subscription commits; blocks scanned before are not read again. Errors: 1003001001 CHAIN_UNKNOWN, 1003001002 CHAIN_NOT_ENABLED, 1008001005 CHAIN_EVENTS_UNSUPPORTED (a chain this service does not scan, or whose adapter's scanner cannot serve chain events), 1008001004 SUBSCRIPTION_ADDRESS_INVALID, 1003001003 TOKEN_UNKNOWN, 1008001002 CHAIN_SUBSCRIPTION_CONFLICT, 1008001003 CHAIN_SUBSCRIPTION_LIMIT (docs/chain-events.md, Limits). A refused request persists nothing.",
    signed: true,
    body: subscriptionCreateRequest,
    bodyExamples: {
      "treasury": {
        "summary": "Two addresses both ways, ETH and USDC, from 0.5 of each",
        "value": {
          "appSubscriptionNo": "treasury-1",
          "chainCode": "ETH",
          "addresses": [
            "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
            "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
          ],
          "direction": "BOTH",
          "chainTokenIds": [
            10200,
            10202
          ],
          "minAmount": "0.5"
        }
      },
      "usdcIn": {
        "summary": "Incoming USDC only, the token named by its contract",
        "value": {
          "appSubscriptionNo": "usdc-in-1",
          "chainCode": "ETH",
          "addresses": [
            "0x28C6c06298d514Db089934071355E5743bf21d60"
          ],
          "direction": "IN",
          "contractAddresses": [
            "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
          ]
        }
      }
    },
    data: z.intersection(ChainSubscription, z.object({
      addresses: z.array(z.string()),
      created: z.boolean().describe('false: an earlier request with this appSubscriptionNo and the same settings made it (nothing changed).'),
    })),
    business: true,
    description200: 'Envelope with data = the subscription with every address, and created: true when this request made it, false when the same request had made it before. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "created": {
        "summary": "The new subscription",
        "value": {
          "code": 0,
          "data": {
            "id": 1,
            "appSubscriptionNo": "treasury-1",
            "applicationId": 1,
            "chainId": 102,
            "chainCode": "ETH",
            "direction": "BOTH",
            "chainTokenIds": [
              10200,
              10202
            ],
            "minAmount": "0.5",
            "status": "ACTIVE",
            "addressCount": 2,
            "createTime": "2025-01-15T08:30:00",
            "updateTime": "2025-01-15T08:30:00",
            "addresses": [
              "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
              "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
            ],
            "created": true
          },
          "msg": ""
        }
      },
      "conflict": {
        "summary": "Business error: appSubscriptionNo in use with other settings",
        "value": {
          "code": 1008001002,
          "data": null,
          "msg": "appSubscriptionNo was already used by this application with other settings; the existing subscription is unchanged"
        }
      },
      "unsupported": {
        "summary": "Business error: a chain without chain events",
        "value": {
          "code": 1008001005,
          "data": null,
          "msg": "Chain events are not available on XRP: its scanner reads the history of the service's own addresses only (docs/chain-events.md, \"Chains\")"
        }
      },
      "limit": {
        "summary": "Business error: a limit would be exceeded",
        "value": {
          "code": 1008001003,
          "data": null,
          "msg": "an application has at most 100 subscriptions (delete one first) (docs/chain-events.md, \"Limits\")"
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/chain-event/subscription/get',
    operationId: 'getChainSubscription',
    summary: 'One live subscription of the calling application, with every monitored address',
    signed: true,
    query: idQuery,
    data: z.intersection(ChainSubscription, z.object({
      addresses: z.array(z.string()),
    })),
    business: true,
    description200: 'Envelope with data = the subscription; 1008001001 CHAIN_SUBSCRIPTION_NOT_FOUND when it is not a live (ACTIVE or PAUSED) subscription of the caller. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "subscription": {
        "summary": "An active subscription",
        "value": {
          "code": 0,
          "data": {
            "id": 1,
            "appSubscriptionNo": "treasury-1",
            "applicationId": 1,
            "chainId": 102,
            "chainCode": "ETH",
            "direction": "BOTH",
            "chainTokenIds": [
              10200,
              10202
            ],
            "minAmount": "0.5",
            "status": "ACTIVE",
            "addressCount": 2,
            "createTime": "2025-01-15T08:30:00",
            "updateTime": "2025-01-15T08:30:00",
            "addresses": [
              "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
              "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
            ]
          },
          "msg": ""
        }
      },
      "notFound": {
        "summary": "Business error: no such live subscription of this application",
        "value": {
          "code": 1008001001,
          "data": null,
          "msg": "Chain event subscription not found"
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/chain-event/subscription/list',
    operationId: 'listChainSubscriptions',
    summary: "Pages through the calling application's live subscriptions, newest first (without their addresses)",
    signed: true,
    query: subscriptionListQuery,
    data: z.object({
      list: z.array(ChainSubscription),
      total: z.int().describe('Records matching the filters, over every page.'),
    }),
    business: true,
    description200: 'Envelope with data = {list, total}. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "page": {
        "summary": "One page of subscriptions",
        "value": {
          "code": 0,
          "data": {
            "list": [
              {
                "id": 1,
                "appSubscriptionNo": "treasury-1",
                "applicationId": 1,
                "chainId": 102,
                "chainCode": "ETH",
                "direction": "BOTH",
                "chainTokenIds": [
                  10200,
                  10202
                ],
                "minAmount": "0.5",
                "status": "ACTIVE",
                "addressCount": 2,
                "createTime": "2025-01-15T08:30:00",
                "updateTime": "2025-01-15T08:30:00"
              }
            ],
            "total": 1
          },
          "msg": ""
        }
      }
    },
  },
  {
    method: 'post',
    path: '/api/v1/wallet/chain-event/subscription/update',
    operationId: 'updateChainSubscription',
    summary: 'Changes a live subscription: direction, token filter, minimum, status, addresses',
    description: 'All or nothing: a refused update changes nothing. Scanners use the new settings from their next step. Errors as for create, and 1008001001 CHAIN_SUBSCRIPTION_NOT_FOUND.',
    signed: true,
    body: subscriptionUpdateRequest,
    bodyExamples: {
      "addresses": {
        "summary": "Swap one monitored address for another",
        "value": {
          "id": 1,
          "removeAddresses": [
            "0x742d35Cc6634C0532925a3b844Bc454e4438f44e"
          ],
          "addAddresses": [
            "0x28C6c06298d514Db089934071355E5743bf21d60"
          ]
        }
      },
      "filter": {
        "summary": "USDC only, from 1000 USDC",
        "value": {
          "id": 1,
          "chainTokenIds": [
            10202
          ],
          "contractAddresses": null,
          "minAmount": "1000"
        }
      }
    },
    data: z.intersection(ChainSubscription, z.object({
      addresses: z.array(z.string()),
    })),
    business: true,
    description200: 'Envelope with data = the subscription after the change, with every address. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "updated": {
        "summary": "The subscription after the change",
        "value": {
          "code": 0,
          "data": {
            "id": 1,
            "appSubscriptionNo": "treasury-1",
            "applicationId": 1,
            "chainId": 102,
            "chainCode": "ETH",
            "direction": "BOTH",
            "chainTokenIds": [
              10200,
              10202
            ],
            "minAmount": "0.5",
            "status": "ACTIVE",
            "addressCount": 2,
            "createTime": "2025-01-15T08:30:00",
            "updateTime": "2025-01-16T11:00:00",
            "addresses": [
              "0x28C6c06298d514Db089934071355E5743bf21d60",
              "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
            ]
          },
          "msg": ""
        }
      },
      "notFound": {
        "summary": "Business error: no such live subscription of this application",
        "value": {
          "code": 1008001001,
          "data": null,
          "msg": "Chain event subscription not found"
        }
      }
    },
  },
  {
    method: 'post',
    path: '/api/v1/wallet/chain-event/subscription/delete',
    operationId: 'deleteChainSubscription',
    summary: 'Ends a subscription: nothing is matched or sent for it any more; its event records stay readable',
    description: "Its appSubscriptionNo may be used again afterwards. Events still PENDING are confirmed without a callback. A deleted (or another application's) subscription is 1008001001 CHAIN_SUBSCRIPTION_NOT_FOUND.",
    signed: true,
    body: subscriptionDeleteRequest,
    bodyExamples: {
      "delete": {
        "summary": "Delete subscription 1",
        "value": {
          "id": 1
        }
      }
    },
    data: z.object({
      id: z.int(),
      status: z.literal('DELETED'),
    }),
    business: true,
    description200: 'Envelope with data = {id, status: DELETED}. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "deleted": {
        "summary": "Deleted",
        "value": {
          "code": 0,
          "data": {
            "id": 1,
            "status": "DELETED"
          },
          "msg": ""
        }
      },
      "notFound": {
        "summary": "Business error: no such live subscription of this application",
        "value": {
          "code": 1008001001,
          "data": null,
          "msg": "Chain event subscription not found"
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/chain-event/get',
    operationId: 'getChainEvent',
    summary: 'One chain event record of the calling application',
    signed: true,
    query: idQuery,
    params: { id: { description: "Chain event id (the chain_event callback's id)." } },
    data: ChainEvent,
    business: true,
    description200: "Envelope with data = the record; 1008002001 CHAIN_EVENT_NOT_FOUND when it is not one of the caller's records. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).",
    examples: {
      "event": {
        "summary": "A confirmed incoming USDC transfer",
        "value": {
          "code": 0,
          "data": EXAMPLE_CHAIN_EVENT,
          "msg": ""
        }
      },
      "notFound": {
        "summary": "Business error: no such record of this application",
        "value": {
          "code": 1008002001,
          "data": null,
          "msg": "Chain event not found"
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/chain-event/list',
    operationId: 'listChainEvents',
    summary: "Pages through the calling application's chain event records, newest first (deleted subscriptions' included)",
    signed: true,
    query: chainEventListQuery,
    data: z.object({
      list: z.array(ChainEvent),
      total: z.int().describe('Records matching the filters, over every page.'),
    }),
    business: true,
    description200: 'Envelope with data = {list, total}. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "page": {
        "summary": "One page of chain events",
        "value": {
          "code": 0,
          "data": {
            "list": [
              EXAMPLE_CHAIN_EVENT
            ],
            "total": 1
          },
          "msg": ""
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/outflow/get',
    operationId: 'getOutflow',
    summary: 'One custody outflow record (TRANSFER) of the calling application',
    signed: true,
    query: idQuery,
    params: { id: { description: "Outflow id (the transfer callback's id)." } },
    data: Outflow,
    business: true,
    description200: "Envelope with data = the record; 1008002002 OUTFLOW_NOT_FOUND when it is not one of the caller's records. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).",
    examples: {
      "outflow": {
        "summary": "USDC moved out of a deposit address by a transaction the service did not sign",
        "value": {
          "code": 0,
          "data": EXAMPLE_OUTFLOW,
          "msg": ""
        }
      },
      "notFound": {
        "summary": "Business error: no such record of this application",
        "value": {
          "code": 1008002002,
          "data": null,
          "msg": "Custody outflow record not found"
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/outflow/list',
    operationId: 'listOutflows',
    summary: "Pages through the calling application's custody outflow records (TRANSFER), newest first",
    signed: true,
    query: outflowListQuery,
    data: z.object({
      list: z.array(Outflow),
      total: z.int().describe('Records matching the filters, over every page.'),
    }),
    business: true,
    description200: 'Envelope with data = {list, total}. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "page": {
        "summary": "One page of outflows",
        "value": {
          "code": 0,
          "data": {
            "list": [
              EXAMPLE_OUTFLOW
            ],
            "total": 1
          },
          "msg": ""
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/reconciliation/balances',
    operationId: 'getReconciliationBalances',
    summary: "The calling application's custody balances per chain and token: the ledger against the chain, from the latest reconciliation of each address",
    description: "Read-only (docs/reconciliation.md). For each chain and token the application holds in custody: the sum over its custody addresses of the balance the service's ledger expects (credited deposits, sweeps, payouts, top-ups, fees, booked adjustments) and the balance the node reported, both read at one block per pass; the difference, the part of it explained (a transfer in flight, a deposit still pending, a recorded outflow) and the part not explained (an open discrepancy the operator is investigating). Addresses are reconciled incrementally: blockHeight is the highest block any of them was read at, oldestBlockHeight the lowest; oldestReconcileTime tells how fresh the oldest figure is. A chain or token appears once at least one of its addresses has been reconciled.",
    signed: true,
    query: reconciliationBalancesQuery,
    data: z.object({
      list: z.array(ReconciliationBalance),
    }),
    business: true,
    description200: 'Envelope with data = {list}.',
    examples: {
      "totals": {
        "summary": "One token, reconciled to zero",
        "value": {
          "code": 0,
          "data": {
            "list": [
              {
                "chainId": 102,
                "chainCode": "ETH",
                "chainTokenId": 10202,
                "tokenSymbol": "USDC",
                "contractAddress": "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
                "addressCount": 1250,
                "ledgerBalance": "48210.5",
                "chainBalance": "48210.5",
                "difference": "0",
                "explained": "0",
                "unexplained": "0",
                "blockHeight": 7412400,
                "blockHash": "0x1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809",
                "oldestBlockHeight": 7405213,
                "reconcileTime": "2025-01-15T10:12:30",
                "oldestReconcileTime": "2025-01-14T10:40:02",
                "openDiscrepancies": 0
              }
            ]
          },
          "msg": ""
        }
      }
    },
  },
];
