import { Address, Cell, beginCell, contractAddress, toNano, type StateInit } from '@ton/core';
import { keyPairFromSeed, sign } from '@ton/crypto';
import type { SandboxContract, TreasuryContract } from '@ton/sandbox';
import { PLUGIN_API_VERSION, type ChainDefinition, type KeyRef, type KeySignature, type KeyStore, type PublicKey } from '@wcs/core';
import { fillPath, slip10Ed25519, testSeed } from '@wcs/core/testing';
import { TON_FAMILY } from '../index';
import { OP_JETTON_INTERNAL_TRANSFER, jettonTransferBody } from '../messages';
import type { TonSandboxNode } from './sandbox-server';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const code = require('../../src/test-support/jetton-code.json') as { minter: string; wallet: string };

export const JETTON_MINTER_CODE = Cell.fromBase64(code.minter);
export const JETTON_WALLET_CODE = Cell.fromBase64(code.wallet);

/** A TON chain as the catalogue would give it (core's FAMILY_TRAITS has no 'ton': curve and addressing are written out). */
export function tonChain(overrides: Partial<ChainDefinition> = {}): ChainDefinition {
  return {
    id: 9101, code: 'TON_SANDBOX', name: 'TON (sandbox)', family: TON_FAMILY, environment: 'test', network: 'sandbox',
    curve: 'ed25519', addressing: 'memo', nativeSymbol: 'TON', decimals: 9, confirmations: 1, evmChainId: null,
    options: Object.freeze({}), ...overrides,
  };
}

/**
 * A software KeyStore over the test mnemonic (SLIP-10 ed25519, the key spec's path for the
 * application's account), as the service's software backend derives keys: the only signer.
 */
export function testKeyStore(): KeyStore & { signed: number } {
  const secret = (ref: KeyRef) => keyPairFromSeed(Buffer.from(slip10Ed25519(testSeed(), fillPath(ref.spec.pathTemplate, ref.applicationId, ref.index))));
  const store = {
    name: 'test-ed25519',
    pluginApiVersion: PLUGIN_API_VERSION,
    signed: 0,
    async init() {},
    async destroy() {},
    async getPublicKey(ref: KeyRef): Promise<PublicKey> {
      if (ref.spec.curve !== 'ed25519') throw new Error('ed25519 only');
      return { curve: 'ed25519', bytes: Uint8Array.from(secret(ref).publicKey) };
    },
    async sign(ref: KeyRef, payload: Uint8Array): Promise<KeySignature> {
      store.signed += 1;
      return { curve: 'ed25519', bytes: Uint8Array.from(sign(Buffer.from(payload), secret(ref).secretKey)), recovery: null };
    },
    async status() {
      return { backend: 'test', unlocked: true };
    },
  };
  return store;
}

export interface Jetton {
  readonly master: Address;
  walletOf(owner: Address): Promise<Address>;
  balanceOf(owner: Address): Promise<bigint>;
  mint(to: Address, amount: bigint): Promise<void>;
  /** A TEP-74 transfer from `from`'s jetton wallet, with a comment in the forward payload. */
  transfer(from: SandboxContract<TreasuryContract>, to: Address, amount: bigint, comment: string | null, forwardTonAmount?: bigint): Promise<void>;
}

/** Deploys a real jetton (minter + wallet code of jetton-code.json) administered by `admin`. */
export async function deployJetton(node: TonSandboxNode, admin: SandboxContract<TreasuryContract>): Promise<Jetton> {
  const bc = node.blockchain;
  const data = beginCell().storeCoins(0).storeAddress(admin.address).storeRef(beginCell().storeUint(1, 8).endCell()).storeRef(JETTON_WALLET_CODE).endCell();
  const init: StateInit = { code: JETTON_MINTER_CODE, data };
  const master = contractAddress(0, init);
  const r = await admin.send({ to: master, value: toNano('0.1'), init, bounce: false });
  if (!r.transactions.some((t) => t.inMessage?.info.dest instanceof Address && t.inMessage.info.dest.equals(master))) throw new Error('jetton minter not deployed');
  const walletOf = async (owner: Address) => {
    const res = await bc.runGetMethod(master, 'get_wallet_address', [{ type: 'slice', cell: beginCell().storeAddress(owner).endCell() }]);
    return res.stackReader.readAddress();
  };
  return {
    master,
    walletOf,
    async balanceOf(owner) {
      const w = await walletOf(owner);
      const c = await bc.getContract(w);
      if (c.accountState?.type !== 'active') return 0n;
      return (await bc.runGetMethod(w, 'get_wallet_data')).stackReader.readBigNumber();
    },
    async mint(to, amount) {
      const internalTransfer = beginCell().storeUint(OP_JETTON_INTERNAL_TRANSFER, 32).storeUint(0, 64).storeCoins(amount)
        .storeAddress(master).storeAddress(admin.address).storeCoins(0).storeMaybeRef(null).endCell();
      const body = beginCell().storeUint(21, 32).storeUint(0, 64).storeAddress(to).storeCoins(toNano('0.05')).storeRef(internalTransfer).endCell();
      await admin.send({ to: master, value: toNano('0.1'), body, bounce: true });
    },
    async transfer(from, to, amount, comment, forwardTonAmount = toNano('0.01')) {
      const body = jettonTransferBody({ queryId: 1n, amount, destination: to, responseDestination: from.address, forwardTonAmount, comment });
      await from.send({ to: await walletOf(from.address), value: toNano('0.1'), body, bounce: true });
    },
  };
}
