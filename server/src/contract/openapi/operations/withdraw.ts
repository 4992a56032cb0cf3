import { Withdraw, WithdrawBatchResult } from '../../responses/withdraw';
import { withdrawBatchCreateRequest, withdrawCreateRequest, withdrawGetQuery } from '../../withdraw';
import type { OperationDoc } from '../document';

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

/** The operations of withdrawals. */
export const WITHDRAW_OPERATIONS: readonly OperationDoc[] = [
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
];
