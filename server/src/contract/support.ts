import type { z } from 'zod';
import { CHAIN_CODE, query, queryString } from './fields';

/** Chains and tokens (docs/api.md): support/chains, support/tokens. */

/** GET support/chains: no parameters. */
export const supportChainsQuery = query({});
export type SupportChainsQuery = z.infer<typeof supportChainsQuery>;

/** GET support/tokens: every enabled chain's tokens, or one chain's. */
export const supportTokensQuery = query({
  chainCode: queryString(CHAIN_CODE).optional().meta({ description: 'Restrict to one chain. Unknown: 1003001001; not enabled: 1003001002.', example: 'ETH' }),
});
export type SupportTokensQuery = z.infer<typeof supportTokensQuery>;
