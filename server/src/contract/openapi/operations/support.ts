import { z } from 'zod';
import { Chain, Token } from '../../responses/support';
import { supportChainsQuery, supportTokensQuery } from '../../support';
import type { OperationDoc } from '../document';

/** The operations of the catalogue. */
export const SUPPORT_OPERATIONS: readonly OperationDoc[] = [
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
];
