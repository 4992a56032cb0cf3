import { SigningKey, computeAddress, getCreate2Address, hexlify, keccak256, randomBytes } from 'ethers';
import type { AccountCode, DelegationNode, DelegationSupport, JsonRpcClient } from '@wcs/core';
import { EvmAddressCodec, checksummed } from './address';
import { Reader, hex } from './node-json';
import { CREATE2_DEPLOYER } from './delegation/deployment';
import { authorizationDigest, codeAtAccount } from './delegation/authorization';
import { authorizationRpc } from './transfer-call';

/** How long a positive support() answer is kept: a chain does not lose EIP-7702, but a node behind a balancer may change. */
export const DELEGATION_SUPPORT_TTL_MS = 5 * 60_000;

const CODE = /^0x(?:[0-9a-fA-F]{2})*$/;

/**
 * EvmTransferNode.delegation: the reads delegated sweeps need (account code, account nonces)
 * and whether the node runs EIP-7702, over the transfer node's JSON-RPC client (one batch each).
 * Network faults and malformed answers throw (or are that item's Error in the set answers);
 * whether the chain runs EIP-7702 is a typed answer.
 */
export class EvmDelegationNode implements DelegationNode {
  private readonly codec = new EvmAddressCodec();
  private supportedUntil = 0;

  constructor(
    private readonly rpc: JsonRpcClient,
    private readonly read: Reader,
    private readonly checkChain: () => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  /** eth_getCode(account, 'latest') for each account in one batch: EMPTY, DELEGATED (delegate EIP-55) or CONTRACT. */
  async codes(accounts: readonly string[]): Promise<Array<AccountCode | Error>> {
    const list = accounts.map((a) => this.account(a));
    if (list.length === 0) return [];
    await this.checkChain();
    const outcomes = await this.rpc.batch(list.map((a) => ({ method: 'eth_getCode', params: [a, 'latest'] })));
    return outcomes.map((o, i) => {
      try {
        return this.code(this.rpc.unwrap(o, 'eth_getCode'), list[i]!);
      } catch (e) {
        return e instanceof Error ? e : new Error(String(e));
      }
    });
  }

  /** eth_getTransactionCount(account, 'latest') for each account in one batch: the nonce an authorization signed now must carry. */
  async nonces(accounts: readonly string[]): Promise<Array<bigint | Error>> {
    const list = accounts.map((a) => this.account(a));
    if (list.length === 0) return [];
    await this.checkChain();
    const outcomes = await this.rpc.batch(list.map((a) => ({ method: 'eth_getTransactionCount', params: [a, 'latest'] })));
    return outcomes.map((o) => {
      try {
        return this.read.quantityResult(this.rpc.unwrap(o, 'eth_getTransactionCount'), 'eth_getTransactionCount');
      } catch (e) {
        return e instanceof Error ? e : new Error(String(e));
      }
    });
  }

  /**
   * Whether the node runs EIP-7702 and the chain has the deterministic deployment proxy, asked in
   * one batch: eth_getCode of the proxy, and a probe call made twice, through eth_estimateGas (the
   * method transferInput asks for a sweep) and eth_call. The probe carries an authorization
   * signed here by a throwaway key that delegates it to the proxy, and calls the throwaway
   * account with a 32-byte salt and no init code: a node that applies the delegation runs the
   * proxy's code there, which CREATE2s an empty contract and returns its address, the one
   * computed here. A node before Prague refuses the field or the type; a node that does not know
   * the field ignores it, and its eth_call returns nothing: both are told apart from support,
   * where an estimate alone would pass the second. A positive answer is kept for
   * DELEGATION_SUPPORT_TTL_MS; a negative one is asked again each time.
   */
  async support(): Promise<DelegationSupport> {
    if (this.now() < this.supportedUntil) return { ok: true };
    await this.checkChain();
    const chainId = this.read.quantityResult(await this.rpc.call('eth_chainId'), 'eth_chainId');
    const key = new SigningKey(hexlify(randomBytes(32)));
    const authority = computeAddress(key.publicKey);
    const sig = key.sign(authorizationDigest({ chainId, address: CREATE2_DEPLOYER, nonce: 0n }));
    const authorization = {
      authority, chainId, address: CREATE2_DEPLOYER.toLowerCase(), nonce: 0n, yParity: sig.yParity, r: BigInt(sig.r), s: BigInt(sig.s),
    };
    const salt = hexlify(randomBytes(32));
    const probe = {
      from: checksummed(hexlify(randomBytes(20)).slice(2)), to: authority, value: hex(0n), data: salt,
      authorizationList: [authorizationRpc(authorization)],
    };
    const [proxyCode, estimate, call] = await this.rpc.batch([
      { method: 'eth_getCode', params: [CREATE2_DEPLOYER, 'latest'] },
      { method: 'eth_estimateGas', params: [probe] },
      { method: 'eth_call', params: [probe, 'latest'] },
    ]);
    const missing: string[] = [];
    const code = this.rpc.unwrap(proxyCode!, 'eth_getCode');
    if (typeof code !== 'string' || !CODE.test(code)) throw this.read.bad(`eth_getCode answered ${JSON.stringify(code).slice(0, 80)}`);
    if (code === '0x') missing.push(`the deterministic deployment proxy ${CREATE2_DEPLOYER} has no code on this chain`);
    if (!estimate!.ok) {
      missing.push(`the node refuses an EIP-7702 authorization in eth_estimateGas: ${this.rpc.redact(estimate!.rpc.message)} (JSON-RPC error ${estimate!.rpc.code})`);
    } else if (!call!.ok) {
      missing.push(`the node refuses an EIP-7702 authorization in eth_call: ${this.rpc.redact(call!.rpc.message)} (JSON-RPC error ${call!.rpc.code})`);
    } else if (code !== '0x') {
      const expected = getCreate2Address(authority, salt, keccak256('0x')).toLowerCase();
      const answer = typeof call!.result === 'string' ? call!.result.toLowerCase() : null;
      if (answer !== expected) missing.push(`the node ignores EIP-7702 authorizations: a call to an account delegated to the proxy in the same call answered ${JSON.stringify(call!.result).slice(0, 80)}, not the proxy's CREATE2 address ${expected}`);
    }
    if (missing.length > 0) return { ok: false, reason: missing.join('; ') };
    this.supportedUntil = this.now() + DELEGATION_SUPPORT_TTL_MS;
    return { ok: true };
  }

  /** eth_getCode's answer read by codeAtAccount (delegation/); an answer that is not hex bytes is the node's fault. */
  private code(v: unknown, account: string): AccountCode {
    if (typeof v !== 'string' || !CODE.test(v)) throw this.read.bad(`eth_getCode of ${account} answered ${JSON.stringify(v).slice(0, 80)}, not 0x-hex bytes`);
    return codeAtAccount(v);
  }

  private account(v: string): string {
    const r = this.codec.validate(v);
    if (!r.valid) throw new TypeError(`account ${JSON.stringify(v)} is not a valid EVM address: ${r.reason}`);
    return r.normalized;
  }
}
