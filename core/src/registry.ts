import type { ChainDefinition, ChainFamily } from './chain';
import { PLUGIN_API_VERSION, type AdapterPlugin, type ChainAdapter } from './adapter';
import { WcsError } from './errors';

export class PluginError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PluginError';
  }
}

function isAdapterPlugin(x: unknown): x is AdapterPlugin {
  const p = x as AdapterPlugin;
  return !!p && typeof p.name === 'string' && typeof p.pluginApiVersion === 'number' && Array.isArray(p.families) && typeof p.create === 'function';
}

/**
 * Adapters by family, loaded from packages named in config. Refuses a plugin built for
 * another plugin-API version, two plugins for one family, and an unknown chain (no fallback).
 */
export class AdapterRegistry {
  private readonly byFamily = new Map<ChainFamily, AdapterPlugin>();
  private readonly adapters = new Map<string, ChainAdapter>();

  register(plugin: unknown, source = 'plugin'): void {
    if (!isAdapterPlugin(plugin)) throw new PluginError(`${source} does not export an adapter plugin (expected { name, pluginApiVersion, families, create })`);
    if (plugin.pluginApiVersion !== PLUGIN_API_VERSION) {
      throw new PluginError(`${plugin.name} is built for plugin API ${plugin.pluginApiVersion}; this core provides ${PLUGIN_API_VERSION}`);
    }
    for (const f of plugin.families) {
      const other = this.byFamily.get(f);
      if (other && other.name !== plugin.name) throw new PluginError(`family ${f} is served by both ${other.name} and ${plugin.name}`);
      this.byFamily.set(f, plugin);
    }
  }

  /** Loads each package by name (its `plugin` export, or default export). */
  static load(packageNames: readonly string[], requireFn: (id: string) => unknown = require): AdapterRegistry {
    const reg = new AdapterRegistry();
    for (const name of packageNames) {
      let mod: Record<string, unknown>;
      try {
        mod = requireFn(name) as Record<string, unknown>;
      } catch (e) {
        throw new PluginError(`cannot load adapter package ${name}: ${(e as Error).message}`, { cause: e });
      }
      reg.register(mod.plugin ?? mod.default, name);
    }
    return reg;
  }

  families(): ChainFamily[] {
    return [...this.byFamily.keys()];
  }

  /** The adapter for a catalogue chain; throws when no plugin serves its family. */
  forChain(chain: ChainDefinition): ChainAdapter {
    const key = `${chain.environment}:${chain.code}`;
    const cached = this.adapters.get(key);
    if (cached) return cached;
    const plugin = this.byFamily.get(chain.family);
    if (!plugin) {
      throw new WcsError('CHAIN_UNKNOWN', { message: `No adapter is loaded for chain ${chain.code} (family ${chain.family})`, details: { chainCode: chain.code } });
    }
    const adapter = plugin.create(chain);
    this.adapters.set(key, adapter);
    return adapter;
  }
}
