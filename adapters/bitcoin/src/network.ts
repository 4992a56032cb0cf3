import { AdapterConfigError, type ChainDefinition } from '@wcs/core';

/** The facts of one Bitcoin network that addresses and key paths depend on. */
export interface BitcoinNetwork {
  /** chain.network: mainnet, testnet or regtest. */
  readonly name: 'mainnet' | 'testnet' | 'regtest';
  /** Bech32 human-readable part (lower case). */
  readonly hrp: string;
  /** BIP-44 coin type: 0 on mainnet, 1 on every test network (SLIP-44). */
  readonly coinType: 0 | 1;
  /** Base58Check version bytes of legacy P2PKH and P2SH addresses. */
  readonly p2pkhVersion: number;
  readonly p2shVersion: number;
  /** Key namespace (KeySpec.namespace): keys are never shared between networks. */
  readonly keyNamespace: string;
}

export const DEFAULT_REGTEST_HRP = 'bcrt';
/** Hrps a regtest chain may not borrow: their addresses would be valid on a real network. */
const PUBLIC_HRPS = ['bc', 'tb'];
const HRP_RE = /^[a-z][a-z0-9]{0,15}$/;

/** Known hrps and version bytes, to say which network a foreign address belongs to. */
export const KNOWN_HRPS: ReadonlyMap<string, string> = new Map([['bc', 'mainnet'], ['tb', 'testnet'], ['bcrt', 'regtest']]);
export const KNOWN_BASE58_VERSIONS: ReadonlyMap<number, string> = new Map([
  [0x00, 'mainnet P2PKH'],
  [0x05, 'mainnet P2SH'],
  [0x6f, 'testnet/regtest P2PKH'],
  [0xc4, 'testnet/regtest P2SH'],
]);

/**
 * The network of a bitcoin-family chain. Options: `bech32Hrp` (regtest only; default "bcrt",
 * our bcoin test node uses "rb"). Throws AdapterConfigError for anything else.
 */
export function resolveNetwork(chain: ChainDefinition): BitcoinNetwork {
  const hrpOption = chain.options['bech32Hrp'];
  switch (chain.network) {
    case 'mainnet':
    case 'testnet': {
      if (hrpOption !== undefined) throw new AdapterConfigError(`${chain.code} (${chain.network}): option bech32Hrp is only for regtest`);
      const main = chain.network === 'mainnet';
      return {
        name: chain.network,
        hrp: main ? 'bc' : 'tb',
        coinType: main ? 0 : 1,
        p2pkhVersion: main ? 0x00 : 0x6f,
        p2shVersion: main ? 0x05 : 0xc4,
        keyNamespace: `btc:${chain.network}`,
      };
    }
    case 'regtest': {
      const hrp = hrpOption ?? DEFAULT_REGTEST_HRP;
      if (!HRP_RE.test(hrp)) {
        throw new AdapterConfigError(`${chain.code} (regtest): option bech32Hrp ${JSON.stringify(hrp)} must be 1-16 lower-case letters and digits, starting with a letter`);
      }
      if (PUBLIC_HRPS.includes(hrp)) throw new AdapterConfigError(`${chain.code} (regtest): option bech32Hrp "${hrp}" belongs to a public network`);
      return { name: 'regtest', hrp, coinType: 1, p2pkhVersion: 0x6f, p2shVersion: 0xc4, keyNamespace: `btc:regtest:${hrp}` };
    }
    default:
      throw new AdapterConfigError(`${chain.code}: unknown bitcoin network ${JSON.stringify(chain.network)} (expected mainnet, testnet or regtest)`);
  }
}
