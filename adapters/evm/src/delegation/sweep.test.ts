import { expect } from 'chai';
import { Interface, Wallet, keccak256 } from 'ethers';
import { anvilRpc } from '../devnet';
import {
  authorizeWithDigest, codeAt, deployPresetToken, deployTestContract, freshDeposits, fundNative, mintTo, nativeBalance, send, sendBatch, setupChain,
  stopChain, tokenBalance, type Chain,
} from './anvil.test-helper';
import { BATCH_MAX_REASON_BYTES, BATCH_PER_CALL_GAS, sweepBatchData } from './batch';
import { CREATE2_DEPLOYER } from './deployment';

const ETH = 10n ** 18n;
const VIEWS = new Interface([
  'function COLLECTOR() view returns (address)',
  'function PER_CALL_GAS() view returns (uint256)',
  'function MAX_REASON_BYTES() view returns (uint256)',
  'function pause()',
  'function index() view returns (uint256)',
  'function sharesOf(address) view returns (uint256)',
  'function mintShares(address to, uint256 shares)',
  'error NotEnoughGasForEntry(uint256 index)',
]);

describe('delegation: EIP-7702 deposit sweeps on anvil', function () {
  this.timeout(60_000);
  let chain: Chain;
  let token: string;

  before(async () => {
    chain = await setupChain();
    token = await deployPresetToken(chain, 'TKA');
  });
  after(() => stopChain(chain));

  async function view(to: string, fn: string, args: unknown[] = []): Promise<unknown> {
    const data = VIEWS.encodeFunctionData(fn, args);
    return VIEWS.decodeFunctionResult(fn, await chain.provider.call({ to, data }))[0];
  }
  const authorizeAll = (deposits: Wallet[]) => Promise.all(deposits.map((d) => authorizeWithDigest(chain, d, chain.forwarder.address)));

  it('anvil has the CREATE2 deployer predeployed; both contracts sit at the computed addresses with the computed code', async () => {
    expect(await chain.provider.getCode(CREATE2_DEPLOYER)).to.not.equal('0x');
    for (const d of [chain.forwarder, chain.sweeper]) expect(keccak256(await chain.provider.getCode(d.address))).to.equal(d.runtimeCodeHash);
    expect(await view(chain.forwarder.address, 'COLLECTOR')).to.equal(chain.collector);
    expect(await view(chain.sweeper.address, 'PER_CALL_GAS')).to.equal(BATCH_PER_CALL_GAS);
    expect(await view(chain.sweeper.address, 'MAX_REASON_BYTES')).to.equal(BigInt(BATCH_MAX_REASON_BYTES));
    // Deploying again through the proxy changes nothing (CREATE2 to an occupied address fails).
    await send(chain, chain.funder, { to: CREATE2_DEPLOYER, data: chain.sweeper.deployData, gasLimit: 3_000_000n }, true);
  });

  it('sweeps ERC-20 and native entries of fresh deposit EOAs (no ETH) to the collector; authorizations only on the first sweep', async () => {
    const deposits = freshDeposits(chain, 3);
    const accounts = deposits.map((d) => d.address);
    const amounts = [1000n, 2000n, 3000n];
    for (const [i, a] of accounts.entries()) await mintTo(chain, token, [a], amounts[i]!);
    await fundNative(chain, [accounts[0]!], ETH / 100n);
    for (const a of accounts) expect((await codeAt(chain, a)).kind).to.equal('EMPTY');
    const tokenBefore = await tokenBalance(chain, token, chain.collector);
    const nativeBefore = await nativeBalance(chain, chain.collector);

    const entries = [...accounts.map((account) => ({ account, token })), { account: accounts[0]!, token: null }];
    const first = await sendBatch(chain, entries, { authorizations: await authorizeAll(deposits) });
    expect(first.outcomes).to.deep.equal([
      ...accounts.map((account, i) => ({ account, token, ok: true, amount: amounts[i] })),
      { account: accounts[0], token: null, ok: true, amount: ETH / 100n },
    ]);
    expect(await tokenBalance(chain, token, chain.collector)).to.equal(tokenBefore + 6000n);
    expect(await nativeBalance(chain, chain.collector)).to.equal(nativeBefore + ETH / 100n);
    for (const a of accounts) {
      expect(await tokenBalance(chain, token, a)).to.equal(0n);
      expect(await nativeBalance(chain, a)).to.equal(0n);
      expect(await codeAt(chain, a)).to.deep.equal({ kind: 'DELEGATED', delegate: chain.forwarder.address });
    }

    // Later deposits: no authorization needed, a plain type-2 transaction.
    await mintTo(chain, token, accounts, 500n);
    await fundNative(chain, [accounts[2]!], 7n);
    const second = await sendBatch(chain, [...accounts.map((account) => ({ account, token })), { account: accounts[2]!, token: null }]);
    expect(second.outcomes.map((o) => (o.ok ? o.amount : o.reason))).to.deep.equal([500n, 500n, 500n, 7n]);
    expect(await tokenBalance(chain, token, chain.collector)).to.equal(tokenBefore + 7500n);
    expect(await nativeBalance(chain, chain.collector)).to.equal(nativeBefore + ETH / 100n + 7n);
  });

  it('a plain native transfer to a delegated deposit address succeeds (receive); one hard-coded at 21000 gas runs out of gas', async () => {
    const [deposit] = freshDeposits(chain, 1);
    await mintTo(chain, token, [deposit!.address], 1n);
    await sendBatch(chain, [{ account: deposit!.address, token }], { authorizations: await authorizeAll([deposit!]) });
    const sent = await chain.funder.sendTransaction({ to: deposit!.address, value: 12345n });
    const receipt = await chain.provider.waitForTransaction(sent.hash, 1, 10_000);
    expect(receipt!.status).to.equal(1);
    // 21000 + the forwarder's receive path (a few dozen gas): ethers' estimate covers it ...
    expect(receipt!.gasUsed > 21_000n && receipt!.gasUsed < 21_200n, String(receipt!.gasUsed)).to.equal(true);
    expect(await nativeBalance(chain, deposit!.address)).to.equal(12345n);
    // ... a sender that never estimates and sends exactly 21000 fails (and pays): documented limitation.
    await send(chain, chain.funder, { to: deposit!.address, value: 1n, gasLimit: 21_000n }, true);
    expect(await nativeBalance(chain, deposit!.address)).to.equal(12345n);
    const swept = await sendBatch(chain, [{ account: deposit!.address, token: null }]);
    expect(swept.outcomes).to.deep.equal([{ account: deposit!.address, token: null, ok: true, amount: 12345n }]);
  });

  it('a paused token\'s entries fail with a readable reason while the other entries of the batch succeed', async () => {
    const paused = await deployPresetToken(chain, 'PAUSED');
    const deposits = freshDeposits(chain, 2);
    const [a, b] = deposits.map((d) => d.address);
    await mintTo(chain, paused, [a!, b!], 100n);
    await mintTo(chain, token, [a!, b!], 40n);
    await send(chain, chain.funder, { to: paused, data: VIEWS.encodeFunctionData('pause') });
    const r = await sendBatch(chain, [{ account: a!, token: paused }, { account: a!, token }, { account: b!, token: paused }, { account: b!, token }], { authorizations: await authorizeAll(deposits) });
    const reason = 'ERC20Pausable: token transfer while paused';
    expect(r.outcomes).to.deep.equal([
      { account: a, token: paused, ok: false, reason },
      { account: a, token, ok: true, amount: 40n },
      { account: b, token: paused, ok: false, reason },
      { account: b, token, ok: true, amount: 40n },
    ]);
    expect(await tokenBalance(chain, paused, a!)).to.equal(100n);
  });

  it('a token without a return value (USDT-like) is swept', async () => {
    const usdt = await deployTestContract(chain, 'UsdtLikeToken');
    const deposits = freshDeposits(chain, 2);
    await mintTo(chain, usdt, deposits.map((d) => d.address), 5_000_000n);
    const r = await sendBatch(chain, deposits.map((d) => ({ account: d.address, token: usdt })), { authorizations: await authorizeAll(deposits) });
    expect(r.outcomes.every((o) => o.ok && o.amount === 5_000_000n), JSON.stringify(r.outcomes, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).to.equal(true);
    expect(await tokenBalance(chain, usdt, chain.collector)).to.equal(10_000_000n);
  });

  it('fee-on-transfer: Swept reports what left the deposit address, the collector gets that less the fee', async () => {
    const fot = await deployTestContract(chain, 'FeeOnTransferToken');
    const [deposit] = freshDeposits(chain, 1);
    await mintTo(chain, fot, [deposit!.address], 10_000n);
    const r = await sendBatch(chain, [{ account: deposit!.address, token: fot }], { authorizations: await authorizeAll([deposit!]) });
    expect(r.outcomes).to.deep.equal([{ account: deposit!.address, token: fot, ok: true, amount: 10_000n }]);
    expect(await tokenBalance(chain, fot, deposit!.address)).to.equal(0n);
    expect(await tokenBalance(chain, fot, chain.collector)).to.equal(9_900n);
  });

  it('rebasing: the whole balance at the sweep\'s own block is swept, not one read earlier', async () => {
    const rebasing = await deployTestContract(chain, 'RebasingToken');
    const [deposit] = freshDeposits(chain, 1);
    await send(chain, chain.funder, { to: rebasing, data: VIEWS.encodeFunctionData('mintShares', [deposit!.address, 1_000_000n]) });
    const readEarlier = await tokenBalance(chain, rebasing, deposit!.address);
    await anvilRpc(chain.url, 'anvil_mine', ['0x3']);
    const r = await sendBatch(chain, [{ account: deposit!.address, token: rebasing }], { authorizations: await authorizeAll([deposit!]) });
    const index = BigInt(await chain.provider.call({ to: rebasing, data: VIEWS.encodeFunctionData('index'), blockTag: Number(r.receipt.blockNumber) }));
    const atSweep = (1_000_000n * index) / ETH;
    expect(atSweep > readEarlier).to.equal(true);
    expect(r.outcomes).to.deep.equal([{ account: deposit!.address, token: rebasing, ok: true, amount: atSweep }]);
    expect(await view(rebasing, 'sharesOf', [deposit!.address])).to.equal(0n);
    expect(await view(rebasing, 'sharesOf', [chain.collector])).to.equal(1_000_000n);
  });

  it('an account not delegated (a plain EOA) in a batch: SweepFailed "not delegated", the others succeed', async () => {
    const [delegated, plain] = freshDeposits(chain, 2);
    await mintTo(chain, token, [delegated!.address, plain!.address], 9n);
    await fundNative(chain, [plain!.address], 3n);
    const r = await sendBatch(chain, [
      { account: plain!.address, token },
      { account: delegated!.address, token },
      { account: plain!.address, token: null },
    ], { authorizations: await authorizeAll([delegated!]) });
    expect(r.outcomes).to.deep.equal([
      { account: plain!.address, token, ok: false, reason: 'not delegated (no code answered)' },
      { account: delegated!.address, token, ok: true, amount: 9n },
      { account: plain!.address, token: null, ok: false, reason: 'not delegated (no code answered)' },
    ]);
    expect(await tokenBalance(chain, token, plain!.address)).to.equal(9n);
    expect(await nativeBalance(chain, plain!.address)).to.equal(3n);
  });

  it('with eth_estimateGas\'s limit every entry gets PER_CALL_GAS and succeeds; a lower limit reverts the whole batch, nothing moves', async () => {
    const deposits = freshDeposits(chain, 8);
    const accounts = deposits.map((d) => d.address);
    await mintTo(chain, token, accounts, 77n);
    const authorizations = await authorizeAll(deposits);
    // Delegate first (and check it sweeps), so the rest compares like with like.
    await sendBatch(chain, [{ account: accounts[0]!, token }], { authorizations });
    await mintTo(chain, token, accounts, 1n);
    const entries = accounts.map((account) => ({ account, token }));
    const tx = { from: chain.feeWallet.address, to: chain.sweeper.address, data: sweepBatchData(entries) };
    const estimate = await chain.provider.estimateGas(tx);

    const fails = async (gasLimit: bigint): Promise<string | null> => {
      try {
        await chain.provider.call({ ...tx, gasLimit });
        return null;
      } catch (e) {
        const data = (e as { data?: string }).data;
        if (typeof data !== 'string') throw e;
        return data;
      }
    };
    expect(await fails(estimate)).to.equal(null);
    // The lowest limit at which the batch goes through, by bisection.
    let [low, high] = [100_000n, estimate];
    while (high - low > 1n) {
      const mid = (low + high) / 2n;
      if ((await fails(mid)) === null) high = mid;
      else low = mid;
    }
    // One gas less: the whole batch reverts at the last entry's check, before its call; never an entry failing for want of gas.
    const decoded = VIEWS.parseError((await fails(high - 1n))!);
    expect(decoded?.name).to.equal('NotEnoughGasForEntry');
    expect(decoded!.args[0]).to.equal(BigInt(accounts.length - 1));
    const failed = await sendBatch(chain, entries, { gasLimit: high - 1n, expectFailure: true });
    expect(failed.receipt.logs).to.deep.equal([]);
    expect(await tokenBalance(chain, token, accounts[1]!)).to.equal(78n);

    // At the lowest limit, and at the estimate, every entry is swept.
    const lowest = await sendBatch(chain, entries, { gasLimit: high });
    expect(lowest.outcomes.map((o) => (o.ok ? o.amount : o.reason))).to.deep.equal([1n, ...accounts.slice(1).map(() => 78n)]);
    await mintTo(chain, token, accounts, 2n);
    const estimated = await sendBatch(chain, entries);
    expect(estimated.outcomes.map((o) => (o.ok ? o.amount : o.reason))).to.deep.equal(accounts.map(() => 2n));
  });

  it('a deposit address re-delegated by its key to another contract: codeAtAccount reports the other delegate, a batch refuses it', async () => {
    const other = await deployTestContract(chain, 'Attacker');
    const [deposit] = freshDeposits(chain, 1);
    await mintTo(chain, token, [deposit!.address], 5n);
    await sendBatch(chain, [{ account: deposit!.address, token }], { authorizations: await authorizeAll([deposit!]) });
    expect(await codeAt(chain, deposit!.address)).to.deep.equal({ kind: 'DELEGATED', delegate: chain.forwarder.address });

    // The deposit key signs (ethers' own authorize) for the other contract, at its current nonce (1 after the first delegation).
    const auth = await deposit!.authorize({ address: other });
    expect(auth.nonce).to.equal(1n);
    await send(chain, chain.feeWallet, { type: 4, to: chain.feeWallet.address, authorizationList: [auth], gasLimit: 100_000n });
    expect(await codeAt(chain, deposit!.address)).to.deep.equal({ kind: 'DELEGATED', delegate: other });

    await mintTo(chain, token, [deposit!.address], 5n);
    const r = await sendBatch(chain, [{ account: deposit!.address, token }]);
    expect(r.outcomes).to.deep.equal([{ account: deposit!.address, token, ok: false, reason: 'reverted without data (out of gas, a token that is not a contract, or a revert without a reason)' }]);
  });
});
