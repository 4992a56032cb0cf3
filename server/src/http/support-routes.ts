import { WcsError } from '@wcs/core';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import type { AppCredentials } from '../auth/credentials';
import { supportChainsQuery, supportTokensQuery } from '../contract/support';
import { parseQuery } from '../contract/parse';
import type { ApiRoute } from './routes';
import type { Chain, Token } from '../contract/responses/support';

/** A chain as GET support/chains returns it (docs/api.md). */
export function chainJson(c: ChainView, depositDetection: Chain['depositDetection']): Chain {
  return {
    chainId: c.id,
    chainCode: c.code,
    chainName: c.name,
    family: c.family,
    network: c.network,
    nativeSymbol: c.nativeSymbol,
    decimals: c.decimals,
    minConfirmations: c.confirmations,
    memoRequired: c.addressing === 'memo',
    evmChainId: c.evmChainId,
    depositDetection,
  };
}

function enabledChains(catalogue: Catalogue, app: AppCredentials): ChainView[] {
  const out: ChainView[] = [];
  for (const code of app.enabledChains) {
    if (catalogue.has(app.environment, code)) out.push(catalogue.chain(app.environment, code));
  }
  return out.sort((a, b) => a.id - b.id);
}

/**
 * depositDetection per chain: ENABLED (an RPC endpoint is configured and the adapter scans),
 * NO_RPC (no WCS_RPC_<ENV>_<CODE>: deposits to this chain are not detected), NOT_SUPPORTED.
 */
export function supportRoutes(catalogue: Catalogue, depositDetection: (chain: ChainView) => Chain['depositDetection']): ApiRoute[] {
  const status = new Map<string, Chain['depositDetection']>();
  const detection = (c: ChainView): Chain['depositDetection'] => {
    const key = `${c.environment}:${c.code}`;
    let s = status.get(key);
    if (s === undefined) status.set(key, (s = depositDetection(c)));
    return s;
  };
  return [
    {
      method: 'GET',
      path: '/wallet/support/chains',
      body: 'none',
      handler: ({ app, query }) => {
        parseQuery(supportChainsQuery, query);
        return enabledChains(catalogue, app).map((c) => chainJson(c, detection(c)));
      },
    },
    {
      method: 'GET',
      path: '/wallet/support/tokens',
      body: 'none',
      handler: ({ app, query }) => {
        const { chainCode } = parseQuery(supportTokensQuery, query);
        let chains = enabledChains(catalogue, app);
        if (chainCode !== undefined) {
          catalogue.chain(app.environment, chainCode); // CHAIN_UNKNOWN when absent
          chains = chains.filter((c) => c.code === chainCode);
          if (chains.length === 0) throw new WcsError('CHAIN_NOT_ENABLED', { message: `Chain ${chainCode} is not enabled for this application` });
        }
        return chains.flatMap((c) =>
          c.tokens.map((t): Token => ({
            chainTokenId: t.id,
            chainId: c.id,
            chainCode: c.code,
            symbol: t.symbol,
            name: t.name,
            contractAddress: t.contract,
            decimals: t.decimals,
            native: t.contract === null,
          })),
        );
      },
    },
  ];
}
