import { Address } from '@ton/core';
import { WalletContractV4 } from '@ton/ton';
import type { AddressValidation, ChainDefinition, PublicKey } from '@wcs/core';
import { isTonComment } from './memo';

/**
 * Addresses of one TON chain. The service's form of an address (what `validate` returns and the
 * scanner reports) is the user-friendly one, URL-safe base64, with the test-only flag on networks
 * other than mainnet; a deposit / hot wallet address (a wallet contract, which may not be deployed
 * yet) is written non-bounceable (UQ… / 0Q…), as wallets show it. A destination keeps the
 * bounceable flag it was given (EQ… to a contract: a transfer it cannot take comes back); a raw
 * address ("0:<hex>") is taken as non-bounceable. Basechain (workchain 0) only.
 *
 * Jetton masters (token contracts) are written bounceable without the test-only flag (EQ…), on
 * every network: that is the catalogue's `contract` form (`canonicalJettonMaster`).
 */
export class TonAddresses {
  readonly testOnly: boolean;

  constructor(network: string) {
    this.testOnly = network !== 'mainnet';
  }

  /** The v4R2 wallet contract of an ed25519 public key (workchain 0, the default wallet id). */
  addressFromPublicKey(publicKey: PublicKey): string {
    if (publicKey?.curve !== 'ed25519' || !(publicKey.bytes instanceof Uint8Array) || publicKey.bytes.length !== 32) {
      throw new TypeError('TON addresses come from 32-byte ed25519 public keys');
    }
    const wallet = WalletContractV4.create({ workchain: 0, publicKey: Buffer.from(publicKey.bytes) });
    return this.format(wallet.address, false);
  }

  format(address: Address, bounceable: boolean): string {
    return address.toString({ urlSafe: true, bounceable, testOnly: this.testOnly });
  }

  /** Parses an address in any accepted form; the reason when it is refused. */
  parse(text: string): { ok: true; address: Address; bounceable: boolean } | { ok: false; reason: string } {
    if (typeof text !== 'string' || text.length === 0) return { ok: false, reason: 'empty address' };
    if (text.length > 100) return { ok: false, reason: 'too long for a TON address' };
    let address: Address;
    let bounceable = false;
    if (Address.isRaw(text)) {
      if (!/^(0|-1):[0-9a-fA-F]{64}$/.test(text)) return { ok: false, reason: 'not a raw address (workchain:64 hex digits)' };
      address = Address.parseRaw(text);
    } else if (Address.isFriendly(text)) {
      let parsed: ReturnType<typeof Address.parseFriendly>;
      try {
        parsed = Address.parseFriendly(text);
      } catch (e) {
        return { ok: false, reason: `not a TON address (${(e as Error).message})` };
      }
      if (parsed.isTestOnly !== this.testOnly) {
        return { ok: false, reason: parsed.isTestOnly ? 'a test-network address (test-only flag) on mainnet' : 'a mainnet address (no test-only flag) on a test network' };
      }
      address = parsed.address;
      bounceable = parsed.isBounceable;
    } else {
      return { ok: false, reason: 'not a TON address (user-friendly base64 of 48 characters, or workchain:hex)' };
    }
    if (address.workChain !== 0) return { ok: false, reason: `workchain ${address.workChain}: only basechain (0) addresses are served` };
    return { ok: true, address, bounceable };
  }

  validate(text: string, memo: string | null): AddressValidation {
    const p = this.parse(text);
    if (!p.ok) return { valid: false, reason: p.reason };
    if (memo !== null && memo !== undefined && !isTonComment(memo)) return { valid: false, reason: 'the memo is not a TON text comment (1 to 120 bytes of printable UTF-8)' };
    return { valid: true, normalized: this.format(p.address, p.bounceable), memo: memo ?? null };
  }
}

/** A jetton master in the catalogue's form (bounceable, URL-safe, no test-only flag: EQ…). */
export function canonicalJettonMaster(contract: string): string {
  let address: Address;
  try {
    address = Address.parse(contract);
  } catch (e) {
    throw new TypeError(`a jetton master address is expected, got ${JSON.stringify(contract)} (${(e as Error).message})`);
  }
  return jettonMasterForm(address);
}

export function jettonMasterForm(address: Address): string {
  return address.toString({ urlSafe: true, bounceable: true, testOnly: false });
}

export function tonNetworkOf(chain: ChainDefinition): string {
  return chain.network;
}
