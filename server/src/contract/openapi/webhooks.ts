import { ChainEventEvent, CollectEvent, DelegationEvent, RechargeCreditedEvent, RechargeEvent, TestEvent, TransferEvent, WithdrawEvent } from '../events';
import type { WebhookDoc } from './document';

/** The deposit both recharge examples report (CONFIRMED, then credited). */
const EXAMPLE_DEPOSIT = {
  "id": 1,
  "applicationId": 1,
  "chainId": 102,
  "chainTokenId": 10200,
  "address": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  "amount": "0.25",
  "txHash": "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
  "blockHeight": 7412345,
};

/** Every callback the service sends (the document's `webhooks`): its event schema, text and examples. */
export const WEBHOOKS: readonly WebhookDoc[] = [
  {
    event: 'recharge',
    operationId: 'rechargeCallback',
    summary: 'A deposit reached a state (bizType RECHARGE)',
    description: "One callback per (deposit, txStatus): PENDING, CONFIRMED, SETTLED or FAILED, to the RECHARGE URL, bizId the recharge id. De-duplicate by (event, id, txStatus); credit on SETTLED. Sent by the service (POST, application/json, signed with the application's API secret) to the application's callback URL for the bizType; delivered at least once, so de-duplicate.",
    schema: RechargeEvent,
    examples: {
      "confirmed": {
        "summary": "A deposit confirmed on chain",
        "value": {
          "event": "recharge",
          ...EXAMPLE_DEPOSIT,
          "txStatus": "CONFIRMED",
          "confirmations": 3,
          "minConfirmations": 3
        }
      }
    },
  },
  {
    event: 'recharge_credited',
    operationId: 'rechargeCreditedCallback',
    summary: 'A deposit was credited (bizType RECHARGE, opt-in)',
    description: "Only for applications that turned RECHARGE_CREDITED on (wcs app set-recharge-credited): once per deposit, written right after its SETTLED recharge callback, to the RECHARGE URL, bizId the recharge id (the two are delivered independently and may arrive in either order). De-duplicate by (event, id). Sent by the service (POST, application/json, signed with the application's API secret) to the application's callback URL for the bizType; delivered at least once, so de-duplicate.",
    schema: RechargeCreditedEvent,
    examples: {
      "credited": {
        "summary": "A deposit credited to user-42",
        "value": {
          "event": "recharge_credited",
          ...EXAMPLE_DEPOSIT,
          "txStatus": "SETTLED",
          "confirmations": -1,
          "minConfirmations": -1,
          "externalUserId": "user-42",
          "memo": null
        }
      }
    },
  },
  {
    event: 'withdraw',
    operationId: 'withdrawCallback',
    summary: 'A withdrawal order reached a state (bizType WITHDRAW)',
    description: "One callback per (order, status): BROADCASTED, CONFIRMING, then SUCCESS or FAILED (an order refused before it is signed sends only FAILED, txHash \"\"), to the order's callbackUrl if it gave one, else the WITHDRAW URL; bizId the withdrawal id. De-duplicate by (appOrderNo, status). Sent by the service (POST, application/json, signed with the application's API secret) to the application's callback URL for the bizType; delivered at least once, so de-duplicate.",
    schema: WithdrawEvent,
    examples: {
      "success": {
        "summary": "A withdrawal that succeeded",
        "value": {
          "event": "withdraw",
          "id": 1,
          "applicationId": 1,
          "appOrderNo": "order-1001",
          "chainId": 102,
          "chainTokenId": 10200,
          "toAddress": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
          "amount": "0.01",
          "txHash": "0x1f3b5d7f9a2c4e6a8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e",
          "status": "SUCCESS"
        }
      }
    },
  },
  {
    event: 'collect',
    operationId: 'collectCallback',
    summary: 'A collection item ended (bizType COLLECT)',
    description: "One callback per (item, terminal status), SUCCESS or FAILED, to the COLLECT URL, bizId the item id. Informational: not a credit voucher. De-duplicate by (itemId, status). Sent by the service (POST, application/json, signed with the application's API secret) to the application's callback URL for the bizType; delivered at least once, so de-duplicate.",
    schema: CollectEvent,
    examples: {
      "gathered": {
        "summary": "A token sweep to the hot wallet after a gas top-up",
        "value": {
          "event": "collect",
          "id": 5,
          "requestId": 2,
          "itemId": 5,
          "applicationId": 1,
          "chainId": 102,
          "chainTokenId": 10202,
          "stage": "HOT_GATHER",
          "fromAddressId": 3,
          "fromAddress": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
          "toAddress": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
          "amount": "1250",
          "txHash": "0x7a9c1e3b5d7f9a2c4e6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c",
          "status": "SUCCESS",
          "failureReasonCode": null,
          "failureReasonMessage": null,
          "retryTimes": 0,
          "gasFee": "0.000052341",
          "gasFeeCurrency": "ETH",
          "gasFunding": {
            "id": 11,
            "status": "SUCCESS",
            "txHash": "0x2c4e6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f",
            "feeAddress": "0x28C6c06298d514Db089934071355E5743bf21d60",
            "userAddress": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
            "amount": "0.00006",
            "failureReasonMessage": null
          },
          "relatedRechargeIds": [
            7,
            9
          ],
          "createdTime": "2025-01-15T09:00:00",
          "finishedTime": "2025-01-15T09:02:41"
        }
      }
    },
  },
  {
    event: 'chain_event',
    operationId: 'chainEventCallback',
    summary: "A monitored address's transfer matched a subscription (bizType CHAIN_EVENT)",
    description: "One callback per chain event, when its block has the chain's confirmations, to the CHAIN_EVENT URL, bizId the chain event id; none for an event whose subscription is paused or deleted by then, and no retraction after a deep reorg. De-duplicate by (event, id). Sent by the service (POST, application/json, signed with the application's API secret) to the application's callback URL for the bizType; delivered at least once, so de-duplicate.",
    schema: ChainEventEvent,
    examples: {
      "incoming": {
        "summary": "USDC received by a monitored address",
        "value": {
          "event": "chain_event",
          "id": 7,
          "subscriptionId": 1,
          "applicationId": 1,
          "chainId": 102,
          "chainTokenId": 10202,
          "contractAddress": "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
          "fromAddress": "0x28C6c06298d514Db089934071355E5743bf21d60",
          "toAddress": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
          "amount": "1250",
          "txHash": "0x3b1f8e2a9c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7",
          "blockHeight": 7412345,
          "directionMatched": "IN",
          "addressNature": "EOA"
        }
      }
    },
  },
  {
    event: 'transfer',
    operationId: 'transferCallback',
    summary: 'Funds left a custody address in a transaction the service did not sign (bizType TRANSFER)',
    description: "One callback per (chain, txHash, position, fromAddress), at first sight without waiting for confirmations, to the TRANSFER URL, bizId the outflow id; never retracted. No subscription needed. De-duplicate by (event, id). Sent by the service (POST, application/json, signed with the application's API secret) to the application's callback URL for the bizType; delivered at least once, so de-duplicate.",
    schema: TransferEvent,
    examples: {
      "deposit": {
        "summary": "USDC moved out of a user's deposit address",
        "value": {
          "event": "transfer",
          "id": 3,
          "applicationId": 1,
          "chainId": 102,
          "chainTokenId": 10202,
          "contractAddress": "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
          "addressKind": "DEPOSIT",
          "fromAddress": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
          "externalUserId": "user-42",
          "toAddress": "0x28C6c06298d514Db089934071355E5743bf21d60",
          "amount": "500",
          "txHash": "0x9f4e2d1c0b1a29384756a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
          "blockHeight": 7412400
        }
      }
    },
  },
  {
    event: 'test',
    operationId: 'testCallback',
    summary: 'A test callback (any bizType)',
    description: "Queued by an operator (wcs callback test --app ID --biz-type T, or the console) through the real pipeline, to the URL of the bizType chosen, bizId 0. Verify the signature and acknowledge it like any other. Sent by the service (POST, application/json, signed with the application's API secret) to the application's callback URL for the bizType; delivered at least once, so de-duplicate.",
    schema: TestEvent,
    examples: {
      "test": {
        "summary": "A test sent to the RECHARGE URL",
        "value": {
          "event": "test",
          "applicationId": 1,
          "bizType": "RECHARGE",
          "message": "Test callback from the wallet custody service: verify the signature, then answer HTTP 200 with {\"code\":0}, \"success\" or \"ok\".",
          "createTime": "2026-11-22T06:45:52"
        }
      }
    },
  },
  {
    event: 'delegation',
    operationId: 'delegationCallback',
    summary: 'A deposit address was found delegated (EIP-7702) to code the service did not put there (bizType TRANSFER)',
    description: "One callback per delegation block, to the TRANSFER URL, bizId the block id, when a delegated sweep finds a deposit address whose code is delegated to anything but the service's forwarder (or holds contract code): its key was used outside the service, and its sweeps stop (docs/chain-events.md, \"The delegation callback\"; docs/collection.md, \"Delegated sweeps\"). De-duplicate by (event, id). Sent by the service (POST, application/json, signed with the application's API secret) to the application's callback URL for the bizType; delivered at least once, so de-duplicate.",
    schema: DelegationEvent,
    examples: {
      "foreign": {
        "summary": "A deposit address delegated to another contract",
        "value": {
          "event": "delegation",
          "id": 7,
          "applicationId": 1,
          "chainId": 102,
          "addressKind": "DEPOSIT",
          "address": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
          "externalUserId": "user-42",
          "found": "DELEGATED",
          "delegate": "0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B",
          "detectedTime": "2026-11-29T12:30:05"
        }
      }
    },
  },
];
