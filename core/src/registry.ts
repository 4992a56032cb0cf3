import { builtInTraits, CHAIN_FAMILY_RE, CURVES, type ChainDefinition, type ChainFamily, type FamilyTraits } from './chain';
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
  private readonly traits = new Map<ChainFamily, FamilyTraits>();

  register(plugin: unknown, source = 'plugin'): void {
    if (!isAdapterPlugin(plugin)) throw new PluginError(`${source} does not export an adapter plugin (expected { name, pluginApiVersion, families, create })`);
    if (plugin.pluginApiVersion !== PLUGIN_API_VERSION) {
      throw new PluginError(`${plugin.name} is built for plugin API ${plugin.pluginApiVersion}; this core provides ${PLUGIN_API_VERSION}`);
    }
    for (const f of plugin.families) {
      if (typeof f !== 'string' || !CHAIN_FAMILY_RE.test(f)) throw new PluginError(`${plugin.name} declares family ${JSON.stringify(f)}: not a family name (${CHAIN_FAMILY_RE})`);
      const other = this.byFamily.get(f);
      if (other && other.name !== plugin.name) throw new PluginError(`family ${f} is served by both ${other.name} and ${plugin.name}`);
      const declared = plugin.traits && Object.prototype.hasOwnProperty.call(plugin.traits, f) ? plugin.traits[f] : undefined;
      const builtIn = builtInTraits(f);
      const traits = declared ?? builtIn;
      if (!traits) throw new PluginError(`${plugin.name} serves family ${f}, which core does not know: the plugin must declare its traits (curve, addressing)`);
      if (!(CURVES as readonly string[]).includes(traits.curve)) throw new PluginError(`${plugin.name}: family ${f}: unknown curve ${String(traits.curve)}`);
      if (traits.addressing !== 'hd' && traits.addressing !== 'memo') throw new PluginError(`${plugin.name}: family ${f}: unknown addressing ${String(traits.addressing)}`);
      if (builtIn && (traits.curve !== builtIn.curve || traits.addressing !== builtIn.addressing)) {
        throw new PluginError(`${plugin.name} declares family ${f} as ${traits.curve}/${traits.addressing}; core's ${f} is ${builtIn.curve}/${builtIn.addressing}`);
      }
      this.byFamily.set(f, plugin);
      this.traits.set(f, Object.freeze({ curve: traits.curve, addressing: traits.addressing }));
    }
  }

  /** A family's curve and addressing: as its plugin declares them, else core's for a built-in family; null when neither knows it. */
  traitsOf(family: ChainFamily): FamilyTraits | null {
    return this.traits.get(family) ?? builtInTraits(family);
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

  /** The npm package of the plugin serving a chain's family (its `name`), for loading the same adapter elsewhere (a worker thread); null when none serves it. */
  pluginPackage(chain: Pick<ChainDefinition, 'family'>): string | null {
    return this.byFamily.get(chain.family)?.name ?? null;
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
