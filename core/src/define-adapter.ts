import type { AddressingKind, ChainDefinition, ChainFamily, Curve } from './chain';
import type { KeyPurpose, KeySpec } from './keystore';
import {
  AdapterConfigError, PLUGIN_API_VERSION, type AdapterPlugin, type ChainAdapter, type ChainAdapterBase, type HdChainAdapter, type MemoChainAdapter,
  type MemoCodec, type Spending,
} from './adapter';

/** What one chain's adapter adds to the parts defineAdapter fills in. */
export type AdapterParts = Omit<ChainAdapterBase, 'chain' | 'curve' | 'keySpec'> & Spending & {
  /** The memo codec on a memo chain, null on an HD chain (create() refuses a mismatch). */
  readonly memo: MemoCodec | null;
  /** The key layout: a function, or one KeySpec per purpose. */
  readonly keySpec: ChainAdapter['keySpec'] | Readonly<Record<KeyPurpose, KeySpec>>;
};

/** An adapter package, as defineAdapter takes it. */
export interface AdapterDefinition {
  /** The npm package name. */
  readonly name: string;
  /** The family served (one per package here), with its curve and addressing. */
  readonly family: ChainFamily;
  readonly curve: Curve;
  readonly addressing: AddressingKind;
  /**
   * The parts for one chain of the family (already checked for family, curve and addressing);
   * throws AdapterConfigError on bad chain options.
   */
  build(chain: ChainDefinition): AdapterParts;
}

/**
 * The AdapterPlugin of an adapter package (its `plugin` export): create() refuses chains of
 * another family, curve or addressing with AdapterConfigError, builds the chain's parts, turns a
 * keySpec record into the function (an unknown purpose is a TypeError) and freezes the adapter.
 */
export function defineAdapter(def: AdapterDefinition): AdapterPlugin {
  const create = (chain: ChainDefinition): ChainAdapter => {
    if (chain.family !== def.family || chain.curve !== def.curve || chain.addressing !== def.addressing) {
      throw new AdapterConfigError(
        `${def.name} serves family ${def.family} (${def.curve}, ${def.addressing}); chain ${chain.code} is ${chain.family} (${chain.curve}, ${chain.addressing})`,
      );
    }
    const parts = def.build(chain);
    const specs = parts.keySpec;
    const keySpec = typeof specs === 'function' ? specs : (purpose: KeyPurpose): KeySpec => {
      const spec = Object.prototype.hasOwnProperty.call(specs, purpose) ? specs[purpose] : undefined;
      if (!spec) throw new TypeError(`unknown key purpose ${String(purpose)}`);
      return spec;
    };
    if ((parts.transfers === undefined) !== (parts.createTransferNode === undefined)) {
      throw new AdapterConfigError(`${def.name}: a transfer crafter and a transfer node come together`);
    }
    if (!['sequence', 'utxo', 'expiring'].includes(parts.spendModel)) throw new AdapterConfigError(`${def.name}: unknown spend model ${String(parts.spendModel)}`);
    // `parts` keeps its spend model's branch: only keySpec, chain, curve and the addressing are set here
    const common = { ...parts, chain, curve: def.curve, keySpec } as ChainAdapterBase & Spending & { memo: MemoCodec | null };
    if (def.addressing === 'memo') {
      const memo = common.memo;
      if (memo === null) throw new AdapterConfigError(`${def.name}: a memo chain's adapter needs a memo codec`);
      return Object.freeze<MemoChainAdapter>({ ...common, addressing: 'memo', memo });
    }
    if (common.memo !== null) throw new AdapterConfigError(`${def.name}: an HD chain's adapter has no memo codec`);
    return Object.freeze<HdChainAdapter>({ ...common, addressing: 'hd', memo: null });
  };
  return Object.freeze({
    name: def.name,
    pluginApiVersion: PLUGIN_API_VERSION,
    families: Object.freeze([def.family]),
    traits: Object.freeze({ [def.family]: Object.freeze({ curve: def.curve, addressing: def.addressing }) }),
    create,
  });
}
