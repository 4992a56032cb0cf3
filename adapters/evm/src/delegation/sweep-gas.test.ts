import { expect } from 'chai';
import { Interface } from 'ethers';
import {
  authorizeWithDigest, deployPresetToken, freshDeposits, fundNative, mintTo, send, sendBatch, setupChain, stopChain, type Chain,
} from './anvil.test-helper';

/**
 * Gas per swept deposit address, batches of 1, 10 and 50, on a Prague chain (the fork EIP-7702
 * needs), against the design it replaces: a 21000-gas top-up, then an ERC-20 transfer sent by the
 * deposit address itself. The collector already holds some of the token and coin (as it would
 * after its first sweep). Set SWEEP_GAS_REPORT=1 to print the table.
 */
describe('delegation: gas per swept deposit address, on anvil (prague)', function () {
  this.timeout(60_000);
  let chain: Chain;
  let token: string;
  const table: string[] = [];

  before(async () => {
    chain = await setupChain({ extraArgs: ['--hardfork', 'prague'] });
    token = await deployPresetToken(chain, 'TKA');
    await mintTo(chain, token, [chain.collector], 1n);
    await fundNative(chain, [chain.collector], 1n);
  });
  after(async () => {
    if (process.env.SWEEP_GAS_REPORT) process.stderr.write(`\n${table.join('\n')}\n`);
    await stopChain(chain);
  });

  it('the old design: top-up (21000) + the deposit address\'s own ERC-20 transfer', async () => {
    const [deposit] = freshDeposits(chain, 1);
    await mintTo(chain, token, [deposit!.address], 1000n);
    const topUp = await send(chain, chain.funder, { to: deposit!.address, value: 10n ** 15n });
    const transfer = await send(chain, deposit!, { to: token, data: new Interface(['function transfer(address,uint256)']).encodeFunctionData('transfer', [chain.collector, 1000n]) });
    const total = BigInt(topUp.gasUsed) + BigInt(transfer.gasUsed);
    table.push(`old design, ERC-20: top-up ${BigInt(topUp.gasUsed)} + transfer ${BigInt(transfer.gasUsed)} = ${total} per address`);
    expect(BigInt(topUp.gasUsed)).to.equal(21_000n);
    expect(total > 40_000n).to.equal(true);
  });

  const perEntry = (gas: bigint, n: number) => Number(gas) / n;

  for (const kind of ['ERC-20', 'native'] as const) {
    it(`${kind}: first sweep (with authorizations) and a later one, batches of 1, 10, 50`, async () => {
      const measured: Record<number, { first: bigint; later: bigint }> = {};
      for (const n of [1, 10, 50]) {
        const deposits = freshDeposits(chain, n);
        const accounts = deposits.map((d) => d.address);
        const entries = accounts.map((account) => ({ account, token: kind === 'ERC-20' ? token : null }));
        const fund = () => (kind === 'ERC-20' ? mintTo(chain, token, accounts, 1000n) : fundNative(chain, accounts, 1000n));
        await fund();
        const authorizations = await Promise.all(deposits.map((d) => authorizeWithDigest(chain, d, chain.forwarder.address)));
        const first = await sendBatch(chain, entries, { authorizations });
        await fund();
        const later = await sendBatch(chain, entries);
        for (const r of [first, later]) expect(r.outcomes.every((o) => o.ok && o.amount === 1000n)).to.equal(true);
        measured[n] = { first: first.gasUsed, later: later.gasUsed };
        table.push(`${kind} batch of ${String(n).padStart(2)}: first ${first.gasUsed} (${perEntry(first.gasUsed, n).toFixed(0)}/entry), later ${later.gasUsed} (${perEntry(later.gasUsed, n).toFixed(0)}/entry)`);
      }
      const marginalFirst = Number(measured[50]!.first - measured[10]!.first) / 40;
      const marginalLater = Number(measured[50]!.later - measured[10]!.later) / 40;
      table.push(`${kind} marginal entry (50 vs 10): first ${marginalFirst.toFixed(0)}, later ${marginalLater.toFixed(0)}`);
      if (kind === 'ERC-20') {
        // Well under half of a top-up + transfer (~51k) once delegated; under it even with the 25000 of the authorization.
        expect(perEntry(measured[10]!.later, 10)).to.be.below(17_000);
        expect(marginalLater).to.be.below(15_000);
        expect(marginalFirst).to.be.below(40_000);
      } else {
        // Under a plain 21000-gas transfer per address once delegated.
        expect(perEntry(measured[10]!.later, 10)).to.be.below(17_000);
        expect(marginalLater).to.be.below(15_000);
      }
    });
  }
});
