import { builtInTraits, parseUnits, type ChainDefinition, type ChainFamily, type Environment, type FamilyTraits, type TokenDefinition, WcsError } from '@wcs/core';
import type { Sequelize } from 'sequelize';
import type { ConfigFile, ChainConfig, TokenConfig } from '../config/config';
import { ConfigError } from '../config/config';
import type { Models } from '../db/models';
import { DEFAULT_CHAINS, DEFAULT_TOKENS } from './default-catalogue';

/** A family's curve and addressing (core's for a built-in family, else its adapter package's), or null when none is known. */
export type FamilyTraitsLookup = (family: ChainFamily) => FamilyTraits | null;

/**
 * Merges the built-in catalogue with the config file and checks it is consistent. A chain's
 * curve and addressing follow from its family: `traitsOf` (plugins/loader.ts familyTraitsLookup
 * also asks the adapter packages named in config, for families they bring).
 */
export function resolveCatalogue(file: ConfigFile, traitsOf: FamilyTraitsLookup = builtInTraits): { chains: ChainDefinition[]; tokens: TokenDefinition[] } {
  const keepDefaults = file.includeDefaultCatalogue !== false;
  const chainMap = new Map<string, ChainConfig>();
  for (const c of [...(keepDefaults ? DEFAULT_CHAINS : []), ...(file.chains ?? [])]) chainMap.set(`${c.environment}:${c.code}`, c);
  const tokenMap = new Map<number, TokenConfig>();
  for (const t of [...(keepDefaults ? DEFAULT_TOKENS : []), ...(file.tokens ?? [])]) tokenMap.set(t.id, t);

  const chains: ChainDefinition[] = [];
  const chainIds = new Map<number, string>();
  for (const c of chainMap.values()) {
    const key = `${c.environment}:${c.code}`;
    const other = chainIds.get(c.id);
    if (other && other !== key) throw new ConfigError(`WCS_CONFIG: chains: id ${c.id} is used by both ${other} and ${key}`);
    chainIds.set(c.id, key);
    const family: ChainFamily = c.family;
    const traits = traitsOf(family);
    if (!traits) throw new ConfigError(`WCS_CONFIG: chains: ${key}: no adapter package serves family ${family} (name the package in "adapters")`);
    if (family === 'evm' && !c.evmChainId) throw new ConfigError(`WCS_CONFIG: chains: ${key}: evmChainId is required for EVM chains`);
    if (family !== 'evm' && c.evmChainId) throw new ConfigError(`WCS_CONFIG: chains: ${key}: evmChainId is only for EVM chains`);
    chains.push({
      id: c.id, code: c.code, name: c.name, family, environment: c.environment as Environment, network: c.network,
      curve: traits.curve, addressing: traits.addressing,
      nativeSymbol: c.nativeSymbol, decimals: c.decimals, confirmations: c.confirmations, evmChainId: c.evmChainId ?? null,
      options: Object.freeze({ ...(c.options ?? {}) }),
    });
  }
  const tokens: TokenDefinition[] = [];
  const seenContract = new Set<string>();
  for (const t of tokenMap.values()) {
    const chain = chainMap.get(`${t.environment}:${t.chainCode}`);
    if (!chain) throw new ConfigError(`WCS_CONFIG: tokens: id ${t.id}: chain ${t.environment}:${t.chainCode} is not in the catalogue`);
    const ck = `${t.environment}:${t.chainCode}:${t.contract ?? ''}`;
    if (seenContract.has(ck)) throw new ConfigError(`WCS_CONFIG: tokens: id ${t.id}: ${t.contract ?? 'native coin'} is listed twice on ${t.environment}:${t.chainCode}`);
    seenContract.add(ck);
    tokens.push({ id: t.id, chainCode: t.chainCode, environment: t.environment as Environment, symbol: t.symbol, name: t.name, contract: t.contract, decimals: t.decimals });
  }
  chains.sort((a, b) => a.id - b.id);
  tokens.sort((a, b) => a.id - b.id);
  return { chains, tokens };
}

/**
 * Writes the resolved catalogue into storage. Ids are stable: a chain id or a token id
 * never changes meaning; entries no longer configured are marked inactive, not deleted.
 */
export async function seedCatalogue(sequelize: Sequelize, models: Models, file: ConfigFile, traitsOf: FamilyTraitsLookup = builtInTraits): Promise<void> {
  const { Chain: ChainModel, ChainToken: ChainTokenModel } = models;
  const { chains, tokens } = resolveCatalogue(file, traitsOf);
  await sequelize.transaction(async (transaction) => {
    await sequelize.query('SELECT pg_advisory_xact_lock(7420002)', { transaction });
    const existing = await ChainModel.findAll({ transaction });
    for (const row of existing) {
      const match = chains.find((c) => c.code === row.code && c.environment === row.environment);
      if (match && match.id !== row.id) {
        throw new ConfigError(`WCS_CONFIG: chains: ${row.environment}:${row.code} is stored with id ${row.id}; the config gives ${match.id} (ids are permanent)`);
      }
    }
    for (const c of chains) {
      await ChainModel.upsert({
        id: c.id, code: c.code, name: c.name, family: c.family, environment: c.environment, network: c.network, curve: c.curve,
        addressing: c.addressing, nativeSymbol: c.nativeSymbol, decimals: c.decimals, confirmations: c.confirmations,
        evmChainId: c.evmChainId === null ? null : String(c.evmChainId), options: { ...c.options }, active: true, updatedAt: new Date(),
      }, { transaction });
    }
    await sequelize.query('UPDATE chains SET active = false WHERE NOT (id = ANY($1::int[]))', { bind: [chains.map((c) => c.id)], transaction });
    const chainIdOf = new Map(chains.map((c) => [`${c.environment}:${c.code}`, c.id]));
    const storedTokens = await ChainTokenModel.findAll({ transaction });
    for (const t of tokens) {
      const chainId = chainIdOf.get(`${t.environment}:${t.chainCode}`)!;
      const stored = storedTokens.find((s) => s.id === t.id);
      if (stored && stored.chainId !== chainId) {
        throw new ConfigError(`WCS_CONFIG: tokens: id ${t.id} is stored on chain ${stored.chainId}; the config moves it to ${chainId} (ids are permanent)`);
      }
      await ChainTokenModel.upsert({ id: t.id, chainId, symbol: t.symbol, name: t.name, contract: t.contract, decimals: t.decimals, active: true, updatedAt: new Date() }, { transaction });
    }
    await sequelize.query('UPDATE chain_tokens SET active = false WHERE NOT (id = ANY($1::int[]))', { bind: [tokens.map((t) => t.id)], transaction });
    for (const t of tokenSettings(file, tokens)) {
      await sequelize.query('UPDATE chain_tokens SET min_deposit = $2::numeric, confirmations = $3 WHERE id = $1', {
        bind: [t.id, t.minDeposit.toString(), t.confirmations], transaction,
      });
    }
  });
}

/** Per-token deposit settings from the config file (minDeposit in base units; confirmations null: the chain's). */
export function tokenSettings(file: ConfigFile, tokens: readonly TokenDefinition[]): Array<{ id: number; minDeposit: bigint; confirmations: number | null }> {
  const configured = new Map((file.tokens ?? []).map((t) => [t.id, t]));
  return tokens.map((t) => {
    const c = configured.get(t.id);
    let minDeposit = 0n;
    if (c?.minDeposit !== undefined) {
      try {
        minDeposit = parseUnits(c.minDeposit, t.decimals);
      } catch {
        throw new ConfigError(`WCS_CONFIG: tokens: id ${t.id}: minDeposit ${c.minDeposit} has more than ${t.decimals} decimal places`);
      }
    }
    return { id: t.id, minDeposit, confirmations: c?.confirmations ?? null };
  });
}

export interface ChainView extends ChainDefinition {
  readonly tokens: readonly TokenDefinition[];
}

/** The active catalogue, read once from storage and held in memory (it only changes at start-up). */
export class Catalogue {
  private byEnvCode = new Map<string, ChainView>();
  private tokenById = new Map<number, TokenDefinition & { chainId: number }>();

  static async load(models: Models, traitsOf: FamilyTraitsLookup = builtInTraits): Promise<Catalogue> {
    const { Chain: ChainModel, ChainToken: ChainTokenModel } = models;
    const cat = new Catalogue();
    const chains = await ChainModel.findAll({ where: { active: true }, order: [['id', 'ASC']] });
    const tokens = await ChainTokenModel.findAll({ where: { active: true }, order: [['id', 'ASC']] });
    for (const c of chains) {
      const family: ChainFamily = c.family;
      const traits = traitsOf(family);
      if (!traits) throw new ConfigError(`catalogue: chain ${c.environment}:${c.code} is of family ${family}, which no loaded adapter package serves`);
      const def: ChainDefinition = {
        id: c.id, code: c.code, name: c.name, family, environment: c.environment, network: c.network,
        curve: traits.curve, addressing: c.addressing, nativeSymbol: c.nativeSymbol, decimals: c.decimals,
        confirmations: c.confirmations, evmChainId: c.evmChainId === null ? null : Number(c.evmChainId),
        options: Object.freeze({ ...(c.options ?? {}) }),
      };
      const chainTokens: TokenDefinition[] = tokens
        .filter((t) => t.chainId === c.id)
        .map((t) => ({ id: t.id, chainCode: c.code, environment: c.environment, symbol: t.symbol, name: t.name, contract: t.contract, decimals: t.decimals }));
      cat.byEnvCode.set(`${c.environment}:${c.code}`, Object.freeze({ ...def, tokens: Object.freeze(chainTokens) }));
      for (const t of chainTokens) cat.tokenById.set(t.id, { ...t, chainId: c.id });
    }
    return cat;
  }

  chains(environment: Environment): ChainView[] {
    return [...this.byEnvCode.values()].filter((c) => c.environment === environment);
  }

  /** The chain for a code in an environment; throws CHAIN_UNKNOWN (never falls back). */
  chain(environment: Environment, code: string): ChainView {
    const c = this.byEnvCode.get(`${environment}:${code}`);
    if (!c) throw new WcsError('CHAIN_UNKNOWN', { message: `Unknown chain code: ${code}`, details: { chainCode: code } });
    return c;
  }

  has(environment: Environment, code: string): boolean {
    return this.byEnvCode.has(`${environment}:${code}`);
  }
}
