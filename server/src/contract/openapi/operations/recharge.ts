import { z } from 'zod';
import { rechargeGetQuery, rechargeListQuery } from '../../recharge';
import { Recharge } from '../../responses/recharge';
import type { OperationDoc } from '../document';

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

/** The operations of deposits. */
export const RECHARGE_OPERATIONS: readonly OperationDoc[] = [
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
];
