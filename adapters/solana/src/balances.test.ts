import { expect } from 'chai';
import { LiteSVM } from 'litesvm';
import { Keypair, PublicKey as SolanaPublicKey } from '@solana/web3.js';
import { ChainRpcError, type BalanceQuery } from '@wcs/core';
import { startReplayServer, testChain, type ReplayServer, type SeenRequest } from '@wcs/core/testing';
import { SolanaBalanceReader } from './balances';
import { LitesvmRpc, type RpcCall } from './litesvm-rpc.test-helper';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './scanner';
import { associatedTokenAddress } from './transfer';
import { plugin } from './index';

/**
 * The Solana balance reader on litesvm (the real runtime, in process) behind the package's litesvm
 * RPC helper (getMultipleAccounts: the runtime's accounts, base64, dataSlice, at the finalized
 * slot): native lamports, SPL Token and Token-2022 associated token accounts, accounts that do not
 * exist (NO_ACCOUNT).
 */
type Address = Parameters<LiteSVM['getBalance']>[0];
const addr = (s: string): Address => s as Address;

function setAccount(svm: LiteSVM, address: string, owner: string, data: Uint8Array): void {
  svm.setAccount({
    address: addr(address), data, executable: false, lamports: svm.minimumBalanceForRentExemption(BigInt(data.length)), programAddress: addr(owner), space: BigInt(data.length),
  } as unknown as Parameters<LiteSVM['setAccount']>[0]);
}

/** An initialized SPL mint (decimals 6) under `program`. */
function createMint(svm: LiteSVM, program: string): string {
  const mint = Keypair.generate().publicKey.toBase58();
  const data = Buffer.alloc(82);
  data.writeBigUInt64LE(10n ** 15n, 36);
  data[44] = 6;
  data[45] = 1;
  setAccount(svm, mint, program, data);
  return mint;
}

/** `owner`'s associated token account of `mint` holding `amount`. */
function fundToken(svm: LiteSVM, owner: string, mint: string, program: string, amount: bigint): void {
  const data = Buffer.alloc(165);
  Buffer.from(new SolanaPublicKey(mint).toBytes()).copy(data, 0);
  Buffer.from(new SolanaPublicKey(owner).toBytes()).copy(data, 32);
  data.writeBigUInt64LE(amount, 64);
  data[108] = 1;
  setAccount(svm, associatedTokenAddress(owner, mint, program), program, data);
}

describe('SolanaBalanceReader (litesvm)', function () {
  this.timeout(60_000);
  let svm: LiteSVM;
  let rpc: LitesvmRpc;
  let server: ReplayServer;
  const seen: RpcCall[] = [];
  /** Added to context.slot of the next getMultipleAccounts answers (one per answer), to make a batch straddle two slots. */
  const skew: number[] = [];

  const finalizedSlot = (): number => rpc.answer({ id: 0, method: 'getSlot', params: [{ commitment: 'finalized' }] }).result as number;
  /** The helper's getMultipleAccounts, with context.slot moved by the next skew (to make a batch straddle two slots). */
  function getMultipleAccounts(c: RpcCall): Record<string, unknown> {
    const answer = rpc.answer(c);
    const shift = skew.shift() ?? 0;
    return shift === 0 || !answer.result ? answer : { ...answer, result: { ...answer.result, context: { slot: answer.result.context.slot + shift } } };
  }

  before(async () => {
    svm = new LiteSVM();
    rpc = new LitesvmRpc(svm);
    server = await startReplayServer((req: SeenRequest) => {
      const body = JSON.parse(req.body) as RpcCall | RpcCall[];
      const one = (c: RpcCall) => {
        seen.push(c);
        return c.method === 'getMultipleAccounts' ? getMultipleAccounts(c) : rpc.answer(c);
      };
      return { body: JSON.stringify(Array.isArray(body) ? body.map(one) : one(body)) };
    });
  });
  after(async () => server?.close());

  const reader = () => new SolanaBalanceReader({ url: server.url }, { attempts: 1 });

  it('the plugin builds it', () => {
    const adapter = plugin.create(testChain({ id: 105, code: 'SOL', name: 'Solana (litesvm)', family: 'solana', environment: 'test', network: 'devnet', nativeSymbol: 'SOL', decimals: 9, confirmations: 1 }));
    expect(adapter.createBalanceReader!({ url: server.url })).to.be.instanceOf(SolanaBalanceReader);
  });

  it('native lamports and SPL (Token, Token-2022) amounts in order; accounts that do not exist are NO_ACCOUNT, an empty one 0', async () => {
    const usdc = createMint(svm, TOKEN_PROGRAM_ID);
    const t22 = createMint(svm, TOKEN_2022_PROGRAM_ID);
    const owners = Array.from({ length: 130 }, () => Keypair.generate().publicKey.toBase58());
    const expected = new Map<string, bigint | null>();
    owners.forEach((o, i) => {
      if (i % 4 !== 3) svm.airdrop(addr(o), BigInt(1_000_000 + i) as never);
      if (i % 2 === 0) fundToken(svm, o, usdc, TOKEN_PROGRAM_ID, 5_000_000n + BigInt(i));
      if (i % 3 === 0) fundToken(svm, o, t22, TOKEN_2022_PROGRAM_ID, BigInt(i)); // owner 0's Token-2022 account holds 0
      expected.set(`${o}/`, i % 4 !== 3 ? BigInt(1_000_000 + i) : null);
      expected.set(`${o}/${usdc}`, i % 2 === 0 ? 5_000_000n + BigInt(i) : null);
      expected.set(`${o}/${t22}`, i % 3 === 0 ? BigInt(i) : null);
    });
    rpc.finalize();
    const queries: BalanceQuery[] = owners.flatMap((o) => [{ address: o, contract: t22 }, { address: o, contract: null }, { address: o, contract: usdc }]);
    const r = reader();
    expect(r.history).to.deep.equal({ kind: 'head' });
    const head = await r.head();
    expect(head).to.deep.equal({ height: BigInt(finalizedSlot()), blockHash: null });
    seen.length = 0;
    const { at, answers } = await r.balancesAt(queries, head);
    expect(at).to.deep.equal(head);
    expect(answers).to.deep.equal(queries.map((q) => {
      const v = expected.get(`${q.address}/${q.contract ?? ''}`);
      return v === null ? { kind: 'NO_ACCOUNT' } : { kind: 'AMOUNT', amount: v };
    }));
    expect(answers[0]).to.deep.equal({ kind: 'AMOUNT', amount: 0n });
    // mints once (one call), then 390 accounts in ceil(390 / 100) = 4 calls, each at finalized with minContextSlot
    const reads = seen.filter((c) => c.method === 'getMultipleAccounts');
    expect(reads.map((c) => (c.params[0] as string[]).length)).to.deep.equal([2, 100, 100, 100, 90]);
    for (const c of reads) expect(c.params[1]).to.deep.include({ commitment: 'finalized', minContextSlot: Number(head.height) });
    seen.length = 0;
    await r.balancesAt(queries.slice(0, 3), head);
    expect(seen.filter((c) => c.method === 'getMultipleAccounts')).to.have.length(1); // mints known
  });

  it('answers of different slots are read again; still different after the attempts: RPC_INCONSISTENT', async () => {
    const owners = Array.from({ length: 150 }, () => Keypair.generate().publicKey.toBase58());
    for (const o of owners) svm.airdrop(addr(o), 1_000_000n as never);
    const queries = owners.map((address) => ({ address, contract: null }));
    const r = new SolanaBalanceReader({ url: server.url }, { attempts: 1, consistencyAttempts: 2 });
    const head = await r.head();
    skew.push(0, 1); // first read: the two calls at two slots; second read: one slot
    const ok = await r.balancesAt(queries, head);
    expect(ok.answers.every((a) => a.kind === 'AMOUNT' && a.amount === 1_000_000n)).to.equal(true);
    skew.push(0, 1, 1, 0);
    const e = await r.balancesAt(queries, head).then(() => null, (x: unknown) => x);
    expect(e).to.be.instanceOf(ChainRpcError);
    expect((e as ChainRpcError).errorName).to.equal('RPC_INCONSISTENT');
  });

  it('a slot the node has not reached is not answered below it (minContextSlot)', async () => {
    const r = reader();
    const head = await r.head();
    const e = await r.balancesAt([{ address: Keypair.generate().publicKey.toBase58(), contract: null }], { height: head.height + 5n, blockHash: null }).then(() => null, (x: unknown) => x);
    expect(e).to.be.instanceOf(ChainRpcError);
  });

  it('refuses a bad address or mint before any node call; a mint that is no mint is RPC_BAD_RESPONSE', async () => {
    const r = reader();
    const head = await r.head();
    seen.length = 0;
    const owner = Keypair.generate().publicKey.toBase58();
    for (const q of [{ address: 'not-an-address', contract: null }, { address: owner, contract: '0x1234' }, { address: `${owner}0`, contract: null }]) {
      const e = await r.balancesAt([q], head).then(() => null, (x: unknown) => x);
      expect(e, q.address).to.be.instanceOf(TypeError);
    }
    expect(await r.balancesAt([], head)).to.deep.equal({ at: head, answers: [] });
    expect(seen).to.deep.equal([]);
    const notMint = Keypair.generate().publicKey.toBase58();
    svm.airdrop(addr(notMint), 5n as never);
    const e = await r.balancesAt([{ address: owner, contract: notMint }], head).then(() => null, (x: unknown) => x);
    expect((e as ChainRpcError).errorName).to.equal('RPC_BAD_RESPONSE');
  });
});
