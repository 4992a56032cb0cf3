import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChainEndpoint } from '@wcs/core';
import type { ServiceConfig, TokenConfig } from '../config/config';
import { resolveCatalogue } from '../catalogue/catalogue';
import { familyTraitsLookup } from '../plugins/loader';
import type { Logger } from '../config/logger';

/** The devnet test token: deployed on the ETH devnet at every start, listed in the catalogue as id 10299. */
export const DEVNET_TOKEN = { id: 10299, symbol: 'DUSD', name: 'Devnet USD (local anvil)', decimals: 18 } as const;

export interface Devnets {
  /** The configuration with the devnets as the test EVM chains' RPC endpoints and the devnet token listed. */
  readonly config: ServiceConfig;
  /** Chain ids whose scan state belongs to an earlier devnet (to be reset). */
  readonly chainIds: readonly number[];
  /** What the operator (and the demo) needs: chain code → RPC URL, and the token. */
  readonly info: { chains: Record<string, { url: string; chainId: number; evmChainId: number }>; token: { id: number; symbol: string; contract: string } | null };
  stop(): Promise<void>;
}

/** Where a dev-mode `wcs start` records its devnets (the demo merchant and the CLI read it). */
export function devnetsFile(dataDir: string): string {
  return path.join(dataDir, 'devnets.json');
}

/** Writes devnets.json whole (a reader never sees it half-written). */
export function writeDevnetsInfo(dataDir: string, info: Devnets['info']): void {
  fs.mkdirSync(dataDir, { recursive: true });
  const tmp = `${devnetsFile(dataDir)}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(info, null, 2) + '\n');
  fs.renameSync(tmp, devnetsFile(dataDir));
}

/** The devnets a dev-mode `wcs start` on this data directory recorded (null when not dev mode or none recorded). */
export function recordedDevnets(config: ServiceConfig): Devnets['info'] | null {
  if (!wantsDevnets(config)) return null;
  try {
    return JSON.parse(fs.readFileSync(devnetsFile(config.dataDir), 'utf8')) as Devnets['info'];
  } catch {
    return null;
  }
}

function devnetToken(contract: string): TokenConfig {
  return { id: DEVNET_TOKEN.id, chainCode: 'ETH', environment: 'test', symbol: DEVNET_TOKEN.symbol, name: DEVNET_TOKEN.name, contract, decimals: DEVNET_TOKEN.decimals };
}

/**
 * The configuration as a dev-mode `wcs start` on this data directory runs it: with the devnet
 * token it recorded (its contract, deployed anew by each start at the same address). CLI commands
 * use it so that their catalogue seeding keeps the token active and `wcs chains` lists it.
 */
export function withRecordedDevnetToken(config: ServiceConfig): ServiceConfig {
  const contract = recordedDevnets(config)?.token?.contract;
  if (!contract) return config;
  return { ...config, file: { ...config.file, tokens: [...(config.file.tokens ?? []).filter((t) => t.id !== DEVNET_TOKEN.id), devnetToken(contract)] } };
}

/** Dev mode: no DATABASE_URL, no WCS_RPC_* at all, and not switched off with WCS_DEVNETS=0. */
export function wantsDevnets(config: ServiceConfig): boolean {
  return config.databaseUrl === null && config.deposits.endpoints.size === 0 && config.env.WCS_DEVNETS !== '0';
}

/**
 * Starts one local anvil per EVM chain of the test environment (1 s blocks, the chain's EIP-155
 * id), deploys a test ERC-20 on the ETH devnet, and returns a configuration that scans them, so
 * a newcomer sees deposits end to end with `wcs start` alone. Devnets live as long as the process:
 * a new start is a new chain, so the scan state of these chains is reset (see docs/deposits.md).
 */
export async function startDevnets(config: ServiceConfig, logger: Logger): Promise<Devnets> {
  // loaded only here: production never starts anvil
  const devnet = await import('@wcs/adapter-evm/devnet');
  const chains = resolveCatalogue(config.file, familyTraitsLookup(config)).chains.filter((c) => c.environment === 'test' && c.family === 'evm' && c.evmChainId !== null);
  const started: Array<{ stop(): Promise<void> }> = [];
  const endpoints = new Map<string, ChainEndpoint>(config.deposits.endpoints);
  const info: Devnets['info'] = { chains: {}, token: null };
  let tokens: TokenConfig[] = [...(config.file.tokens ?? [])];
  try {
    for (const chain of chains) {
      const node = await devnet.startAnvil({ chainId: chain.evmChainId!, blockTime: 1 });
      started.push(node);
      endpoints.set(`test:${chain.code}`, { url: node.url, timeoutMs: config.deposits.rpcTimeoutMs });
      info.chains[chain.code] = { url: node.url, chainId: chain.id, evmChainId: chain.evmChainId! };
      logger.info('devnet started', { chain: chain.code, url: node.url, evmChainId: chain.evmChainId });
      if (chain.code === 'ETH') {
        const contract = await devnet.deployErc20(node.url, { name: DEVNET_TOKEN.name, symbol: DEVNET_TOKEN.symbol, fromPrivateKey: devnet.ANVIL_DEV_KEYS[9] });
        tokens = tokens.filter((t) => t.id !== DEVNET_TOKEN.id);
        tokens.push(devnetToken(contract));
        info.token = { id: DEVNET_TOKEN.id, symbol: DEVNET_TOKEN.symbol, contract };
      }
    }
  } catch (e) {
    await Promise.all(started.map((n) => n.stop()));
    throw e;
  }
  return {
    config: {
      ...config,
      file: { ...config.file, tokens },
      // devnets mine every second: poll often, confirm as configured
      deposits: { ...config.deposits, endpoints, resetScanState: chains.map((c) => c.id), startHeights: new Map([...config.deposits.startHeights, ...chains.map((c): [string, bigint] => [`test:${c.code}`, 0n])]), pollMs: Math.min(config.deposits.pollMs, 250) },
    },
    chainIds: chains.map((c) => c.id),
    info,
    stop: async () => {
      await Promise.all(started.map((n) => n.stop()));
    },
  };
}

/** The RPC endpoints the running workers use (`wcs chains`, `wcs hotwallets`, the console's wallets page): WCS_RPC_*, and in dev mode the devnets `wcs start` recorded. */
export function workerEndpoints(cfg: ServiceConfig): Map<string, ChainEndpoint> {
  const endpoints = new Map<string, ChainEndpoint>(cfg.deposits.endpoints);
  for (const [code, d] of Object.entries(recordedDevnets(cfg)?.chains ?? {})) endpoints.set(`test:${code}`, { url: d.url, timeoutMs: cfg.deposits.rpcTimeoutMs });
  return endpoints;
}
