import { expect } from 'chai';
import { AbiCoder, ContractFactory, Interface, Wallet, ZeroAddress } from 'ethers';
import { ANVIL_DEV_KEYS } from '../devnet';
import {
  authorizeWithDigest, codeAt, deployPresetToken, deployTestContract, freshDeposits, fundNative, mintTo, nativeBalance, send, sendBatch, sendMany,
  setupChain, stopChain, tokenBalance, type Chain, type RawReceipt,
} from './anvil.test-helper';
import { BATCH_SWEEPER_ARTIFACT } from './artifacts';
import { sweepBatchData, sweepOutcomes } from './batch';

const FORWARDER = new Interface(['function sweep(address token) returns (uint256)', 'function COLLECTOR() view returns (address)']);
const ATTACKER = new Interface([
  'function sweepDirect(address account, address token) returns (uint256)',
  'function tryCalls(address account, bytes[] payloads) returns (bool[])',
  'event Tried(uint256 index, bool ok, bytes returned)',
]);
const REENTRANT = new Interface(['event Reentered(bool sweptSelf, bool sweptNative, bool sweptVictim, bool executed)']);
const ERC20 = new Interface([
  'function transfer(address to, uint256 amount) returns (bool)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transferFrom(address from, address to, uint256 amount) returns (bool)',
]);

describe('delegation: attacks on a delegated deposit address, on anvil', function () {
  this.timeout(60_000);
  let chain: Chain;
  let token: string;
  /** An outsider with ETH for gas, and its contract. */
  let attacker: Wallet;
  let attackerContract: string;

  before(async () => {
    chain = await setupChain();
    token = await deployPresetToken(chain, 'TKA');
    attacker = new Wallet(ANVIL_DEV_KEYS[5]!, chain.provider);
    attackerContract = await deployTestContract(chain, 'Attacker');
  });
  after(() => stopChain(chain));

  /** A delegated deposit address holding `tokens` of token and `wei` native. */
  async function delegatedDeposit(tokens: bigint, wei: bigint): Promise<string> {
    const [deposit] = freshDeposits(chain, 1);
    const account = deposit!.address;
    await mintTo(chain, token, [account], tokens);
    if (wei > 0n) await fundNative(chain, [account], wei);
    // Delegated by a type-4 transaction that does nothing else (a zero-value transfer to the fee wallet itself).
    await send(chain, chain.feeWallet, { type: 4, to: chain.feeWallet.address, authorizationList: [await authorizeWithDigest(chain, deposit!, chain.forwarder.address)], gasLimit: 100_000n });
    expect(await codeAt(chain, account)).to.deep.equal({ kind: 'DELEGATED', delegate: chain.forwarder.address });
    return account;
  }

  async function balances(account: string) {
    return {
      depositToken: await tokenBalance(chain, token, account),
      depositNative: await nativeBalance(chain, account),
      collectorToken: await tokenBalance(chain, token, chain.collector),
      collectorNative: await nativeBalance(chain, chain.collector),
      attackerToken: (await tokenBalance(chain, token, attacker.address)) + (await tokenBalance(chain, token, attackerContract)),
      attackerContractNative: await nativeBalance(chain, attackerContract),
    };
  }

  it('an outsider EOA calling sweep on the delegated address only moves the funds to COLLECTOR', async () => {
    const account = await delegatedDeposit(300n, 4000n);
    const before = await balances(account);
    await send(chain, attacker, { to: account, data: FORWARDER.encodeFunctionData('sweep', [token]) });
    await send(chain, attacker, { to: account, data: FORWARDER.encodeFunctionData('sweep', [ZeroAddress]) });
    expect(await balances(account)).to.deep.equal({
      ...before, depositToken: 0n, depositNative: 0n, collectorToken: before.collectorToken + 300n, collectorNative: before.collectorNative + 4000n,
    });
  });

  it('an attacker contract calling sweep only moves the funds to COLLECTOR; arbitrary calldata and selectors all revert', async () => {
    const account = await delegatedDeposit(300n, 4000n);
    const before = await balances(account);
    await send(chain, attacker, { to: attackerContract, data: ATTACKER.encodeFunctionData('sweepDirect', [account, token]) });
    await send(chain, attacker, { to: attackerContract, data: ATTACKER.encodeFunctionData('sweepDirect', [account, ZeroAddress]) });
    const after = await balances(account);
    expect(after).to.deep.equal({
      ...before, depositToken: 0n, depositNative: 0n, collectorToken: before.collectorToken + 300n, collectorNative: before.collectorNative + 4000n,
    });

    await mintTo(chain, token, [account], 50n);
    await fundNative(chain, [account], 60n);
    const dirtyAddress = `${FORWARDER.encodeFunctionData('sweep', [token]).slice(0, 10)}${'ff'.repeat(12)}${token.slice(2)}`;
    const payloads = [
      ERC20.encodeFunctionData('transfer', [attacker.address, 50n]),
      ERC20.encodeFunctionData('approve', [attacker.address, 1n << 255n]),
      ERC20.encodeFunctionData('transferFrom', [account, attacker.address, 50n]),
      new Interface(['function execute(address to, uint256 value, bytes data)']).encodeFunctionData('execute', [attacker.address, 60n, '0x']),
      new Interface(['function initialize(address owner)']).encodeFunctionData('initialize', [attacker.address]),
      '0xdeadbeef',
      '0x00',
      dirtyAddress,
      FORWARDER.encodeFunctionData('sweep', [token]).slice(0, 20), // sweep with its argument cut
    ];
    const receipt = await send(chain, attacker, { to: attackerContract, data: ATTACKER.encodeFunctionData('tryCalls', [account, payloads]), gasLimit: 2_000_000n });
    const tried = receipt.logs.map((l) => ATTACKER.parseLog(l)!).map((l) => l.args.ok as boolean);
    expect(tried).to.deep.equal(payloads.map(() => false));
    // Directly from the attacker EOA, each payload reverts too, and sweep refuses a value.
    for (const data of payloads) await send(chain, attacker, { to: account, data, gasLimit: 200_000n }, true);
    await send(chain, attacker, { to: account, data: FORWARDER.encodeFunctionData('sweep', [token]), value: 1n, gasLimit: 200_000n }, true);
    expect(await balances(account)).to.deep.equal({ ...after, depositToken: 50n, depositNative: 60n });
  });

  it('an attacker\'s own BatchSweeper only moves the funds to COLLECTOR, and its events are not read as ours', async () => {
    const accounts = [await delegatedDeposit(11n, 22n), await delegatedDeposit(33n, 0n)];
    const before = await balances(accounts[0]!);
    const factory = new ContractFactory(BATCH_SWEEPER_ARTIFACT.abi as never, BATCH_SWEEPER_ARTIFACT.bytecode, attacker);
    const deploy = await send(chain, attacker, { ...(await factory.getDeployTransaction()), gasLimit: 2_000_000n });
    const theirs = (await chain.provider.getTransactionReceipt(deploy.transactionHash))!.contractAddress!;
    expect(theirs).to.not.equal(chain.sweeper.address);
    const entries = [{ account: accounts[0]!, token }, { account: accounts[0]!, token: null }, { account: accounts[1]!, token }];
    const r: RawReceipt = await send(chain, attacker, { to: theirs, data: sweepBatchData(entries) });
    expect(sweepOutcomes(r.logs, chain.sweeper.address)).to.deep.equal([]);
    expect(sweepOutcomes(r.logs, theirs).map((o) => o.ok && o.amount)).to.deep.equal([11n, 22n, 33n]);
    const after = await balances(accounts[0]!);
    expect(after.collectorToken).to.equal(before.collectorToken + 44n);
    expect(after.collectorNative).to.equal(before.collectorNative + 22n);
    expect(after.attackerToken).to.equal(before.attackerToken);
    expect(after.attackerContractNative).to.equal(before.attackerContractNative);
  });

  for (const reenterBefore of [true, false]) {
    it(`a malicious token re-entering the forwarder ${reenterBefore ? 'before' : 'after'} its transfer sends nothing anywhere but COLLECTOR`, async () => {
      const evil = await deployTestContract(chain, 'ReentrantToken', [reenterBefore, token, attacker.address]);
      const [deposit] = freshDeposits(chain, 1);
      const account = deposit!.address;
      await mintTo(chain, token, [account], 70n);
      await mintTo(chain, evil, [account], 1000n);
      await fundNative(chain, [account], 80n);
      const before = await balances(account);
      const attackerNative = await nativeBalance(chain, attacker.address);
      const r = await sendBatch(chain, [{ account, token: evil }], { authorizations: [await authorizeWithDigest(chain, deposit!, chain.forwarder.address)] });
      const after = await balances(account);
      expect(after.attackerToken).to.equal(before.attackerToken);
      expect(after.attackerContractNative).to.equal(before.attackerContractNative);
      expect(await nativeBalance(chain, attacker.address)).to.equal(attackerNative);
      const reentered = r.receipt.logs.filter((l) => l.address.toLowerCase() === evil.toLowerCase() && l.topics[0] === REENTRANT.getEvent('Reentered')!.topicHash);
      if (reenterBefore) {
        // The inner sweep took the balance first, so the outer transfer failed: the whole entry reverted, nothing moved.
        expect(r.outcomes).to.deep.equal([{ account, token: evil, ok: false, reason: 'ERC20: transfer amount exceeds balance' }]);
        expect(reentered).to.deep.equal([]);
        expect(after).to.deep.equal(before);
        expect(await tokenBalance(chain, evil, account)).to.equal(1000n);
      } else {
        // Transfer first, then the call-backs: sweeping itself (0 left), the native coin and the other token all went to COLLECTOR; execute reverted.
        expect(r.outcomes).to.deep.equal([{ account, token: evil, ok: true, amount: 1000n }]);
        expect(reentered.map((l) => REENTRANT.parseLog(l)!.args.toArray())).to.deep.equal([[true, true, true, false]]);
        expect(after).to.deep.equal({
          ...before, depositToken: 0n, depositNative: 0n, collectorToken: before.collectorToken + 70n, collectorNative: before.collectorNative + 80n,
        });
        expect(await tokenBalance(chain, evil, chain.collector)).to.equal(1000n);
      }
    });
  }

  it('the forwarder contract itself (not delegated to) can only send its own balance to COLLECTOR too', async () => {
    const fwd = chain.forwarder.address;
    await sendMany(chain, chain.funder, [{ to: fwd, value: 999n, gasLimit: 60_000n }]);
    const collectorBefore = await nativeBalance(chain, chain.collector);
    await send(chain, attacker, { to: fwd, data: FORWARDER.encodeFunctionData('sweep', [ZeroAddress]) });
    expect(await nativeBalance(chain, fwd)).to.equal(0n);
    expect(await nativeBalance(chain, chain.collector)).to.equal(collectorBefore + 999n);
    // Constructor arguments are checked: a zero collector cannot be deployed.
    const zeroInit = chain.forwarder.initCode.slice(0, -64) + '00'.repeat(32);
    await send(chain, chain.funder, { data: zeroInit, gasLimit: 1_000_000n }, true);
    expect(AbiCoder.defaultAbiCoder().decode(['address'], `0x${chain.forwarder.initCode.slice(-64)}`)[0]).to.equal(chain.collector);
  });
});
