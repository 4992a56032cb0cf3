import { z } from 'zod';
import { reconciliationBalancesQuery } from '../../reconciliation';
import { ReconciliationBalance } from '../../responses/reconciliation';
import type { OperationDoc } from '../document';

/** The operations of reconciliation. */
export const RECONCILIATION_OPERATIONS: readonly OperationDoc[] = [
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
