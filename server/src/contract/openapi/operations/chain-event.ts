import { z } from 'zod';
import { chainEventListQuery, idQuery, outflowListQuery, subscriptionCreateRequest, subscriptionDeleteRequest, subscriptionListQuery, subscriptionUpdateRequest } from '../../chain-event';
import { ChainEvent, ChainSubscription, Outflow } from '../../responses/chain-event';
import type { OperationDoc } from '../document';

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

/** The example subscription (create, get), with every address. */
const EXAMPLE_SUBSCRIPTION = {
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
};

/** A subscription with every monitored address (get, update). */
const subscriptionWithAddresses = z.intersection(ChainSubscription, z.object({
  addresses: z.array(z.string()),
}));

/** The operations of chain event subscriptions, chain events and outflows. */
export const CHAIN_EVENT_OPERATIONS: readonly OperationDoc[] = [
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
          "data": { ...EXAMPLE_SUBSCRIPTION, created: true },
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
    data: subscriptionWithAddresses,
    business: true,
    description200: 'Envelope with data = the subscription; 1008001001 CHAIN_SUBSCRIPTION_NOT_FOUND when it is not a live (ACTIVE or PAUSED) subscription of the caller. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "subscription": {
        "summary": "An active subscription",
        "value": {
          "code": 0,
          "data": EXAMPLE_SUBSCRIPTION,
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
    data: subscriptionWithAddresses,
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
];
