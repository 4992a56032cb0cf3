import { expect } from 'chai';
import { Address, beginCell, toNano } from '@ton/core';
import { WalletContractV4 } from '@ton/ton';
import type { SandboxContract, TreasuryContract } from '@ton/sandbox';
import { AdapterConfigError, paying, type ChainAdapter, type KeyRef, type ObservedTransfer, type SequenceCrafter, type SequenceTransferNode, type TransferIntent } from '@wcs/core';
import { DEFAULT_DEPOSIT_FLOAT, DEFAULT_JETTON_GAS, OP_JETTON_NOTIFICATION, commentCell, jettonMasterForm, plugin, tonScanner, type TonNodeTransferInput } from './index';
import { TonSandboxNode } from './test-support/sandbox-server';
import { deployJetton, testKeyStore, tonChain, type Jetton } from './test-support/fixtures';

/**
 * The adapter against the real TVM: @ton/sandbox behind the node API (test-support/sandbox-server),
 * a real TEP-74 jetton, wallet v4R2 deposit and hot wallets whose keys only the KeyStore holds.
 */
describe('TON adapter in @ton/sandbox', function () {
  this.timeout(120_000);
  let node: TonSandboxNode;
  let adapter: ChainAdapter;
  const keys = testKeyStore();
  let depositRef: KeyRef;
  let hotRef: KeyRef;
  let shared: string;
  let hot: string;
  let user: SandboxContract<TreasuryContract>;
  let jetton: Jetton;
  let usdt: string;

  const fresh = (n: number, bounceable: boolean) => WalletContractV4.create({ workchain: 0, publicKey: Buffer.alloc(32, n) }).address.toString({ urlSafe: true, bounceable, testOnly: true });

  before(async () => {
    node = await TonSandboxNode.start();
    adapter = plugin.create(tonChain());
    depositRef = { applicationId: 1, spec: adapter.keySpec('deposit'), purpose: 'deposit', index: 0 };
    hotRef = { applicationId: 1, spec: adapter.keySpec('hot'), purpose: 'hot', index: 0 };
    shared = adapter.address.addressFromPublicKey(await keys.getPublicKey(depositRef));
    hot = adapter.address.addressFromPublicKey(await keys.getPublicKey(hotRef));
    user = await node.blockchain.treasury('user');
    const admin = await node.blockchain.treasury('jetton admin');
    jetton = await deployJetton(node, admin);
    usdt = jettonMasterForm(jetton.master);
    await jetton.mint(user.address, 1_000_000_000n);
    expect(await jetton.balanceOf(user.address)).to.equal(1_000_000_000n);
  });

  after(async () => {
    await node?.close();
  });

  describe('deposits to the shared address', () => {
    let all: ObservedTransfer[];

    before(async () => {
      const to = Address.parse(shared);
      await user.send({ to, value: toNano('1.5'), bounce: false, body: commentCell('42') });
      await user.send({ to, value: toNano('0.3'), bounce: false });
      await jetton.transfer(user, to, 25_000_000n, '42');
      await jetton.transfer(user, to, 4_000_000n, null);
      // bounceable to a wallet that is not deployed: the value comes back
      await user.send({ to, value: toNano('0.2'), bounce: true, body: commentCell('42') });
      // a forged transfer_notification straight from the user (not from a jetton wallet)
      const forged = beginCell().storeUint(OP_JETTON_NOTIFICATION, 32).storeUint(0, 64).storeCoins(999_000_000n).storeAddress(user.address).storeBit(true).storeRef(commentCell('42')).endCell();
      await user.send({ to, value: toNano('0.05'), bounce: false, body: forged });
      const scanner = tonScanner(adapter, { url: node.url });
      const r = await scanner.transfersSince(shared, null, 100);
      all = [...r.transfers];
      const again = await scanner.transfersSince(shared, r.cursor, 100);
      expect(again.transfers).to.deep.equal([]);
      expect(again.cursor).to.equal(r.cursor);
    });

    it('detects a Toncoin deposit with its numeric comment as the memo', () => {
      expect(all[0]).to.deep.include({ toAddress: shared, contract: null, amount: 1_500_000_000n, memo: '42', succeeded: true, position: 0 });
      expect(all[0]!.fromAddress).to.equal(user.address.toString({ urlSafe: true, bounceable: false, testOnly: true }));
      expect(all[0]!.txHash).to.match(/^[0-9a-f]{64}$/);
    });

    it('reports a deposit without a comment with no memo (unattributed)', () => {
      expect(all[1]).to.deep.include({ contract: null, amount: 300_000_000n, memo: null, succeeded: true });
    });

    it('detects a jetton deposit from the notification of its genuine jetton wallet, memo from the forward payload', () => {
      expect(all[2]).to.deep.include({ contract: usdt, amount: 25_000_000n, memo: '42', succeeded: true });
      expect(all[2]!.fromAddress).to.equal(user.address.toString({ urlSafe: true, bounceable: false, testOnly: true }));
      expect(all[3]).to.deep.include({ contract: usdt, amount: 4_000_000n, memo: null, succeeded: true });
    });

    it('reports a deposit that bounced back as failed, and ignores a forged notification', () => {
      expect(all[4]).to.deep.include({ contract: null, amount: 200_000_000n, memo: '42', succeeded: false });
      expect(all).to.have.length(5);
    });

    it('pages oldest first from the cursor, one transaction at a time as well', async () => {
      const scanner = tonScanner(adapter, { url: node.url });
      const seen: ObservedTransfer[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 20; i++) {
        const r: { transfers: readonly ObservedTransfer[]; cursor: string | null } = await scanner.transfersSince(shared, cursor, 1);
        if (r.cursor === cursor) break;
        seen.push(...r.transfers);
        cursor = r.cursor;
      }
      expect(seen).to.deep.equal(all);
      // a new scanner from a stored cursor continues after it
      const later = await user.send({ to: Address.parse(shared), value: toNano('0.7'), bounce: false, body: commentCell('  77 ') });
      expect(later.transactions.length).to.be.greaterThan(0);
      const next = await tonScanner(adapter, { url: node.url }).transfersSince(shared, cursor, 100);
      expect(next.transfers.map((t) => [t.amount, t.memo])).to.deep.equal([[700_000_000n, '77']]);
      expect(Number(await scanner.tipHeight())).to.be.greaterThan(1);
    });
  });

  describe('withdrawals from the hot wallet', () => {
    let tn: SequenceTransferNode;
    let crafter: SequenceCrafter;
    async function pay(req: Omit<TransferIntent, 'from' | 'fromPublicKey'>) {
      const fromPublicKey = await keys.getPublicKey(hotRef);
      const base = { ...req, from: hot, fromPublicKey };
      const input = await tn.transferInput(base) as TonNodeTransferInput;
      const sequence = await tn.nextSequence(hot);
      const unsigned = crafter.craft({ ...base, sequence }, input);
      const signatures = [];
      for (const p of unsigned.payloads) signatures.push(await keys.sign(hotRef, p));
      const signed = crafter.combine(unsigned, signatures);
      const sent = await tn.broadcast(signed);
      expect(sent).to.deep.equal({ outcome: 'ACCEPTED', txHash: signed.txHash });
      return { signed, input, sequence, unsigned, status: await tn.status(signed.txHash, input) };
    }

    before(async () => {
      const payer = paying(adapter);
      if (payer.spendModel !== 'sequence') throw new Error('TON is a sequence chain');
      tn = payer.createTransferNode({ url: node.url });
      crafter = payer.transfers;
      await user.send({ to: Address.parse(hot), value: toNano('5'), bounce: false });
      await jetton.mint(Address.parse(hot), 100_000_000n);
      expect(await tn.nextSequence(hot)).to.equal(0n);
      expect(await tn.balance(hot, usdt)).to.equal(100_000_000n);
    });

    it('pays Toncoin with a comment, deploying the hot wallet on its first message (seqno 0)', async () => {
      const to = fresh(1, false);
      const signedBefore = keys.signed;
      const hotBefore = await tn.balance(hot, null);
      const r = await pay({ to, memo: '9001', contract: null, amount: 1_250_000_000n });
      expect(keys.signed - signedBefore, 'the KeyStore signed the one payload').to.equal(1);
      // the fee status() reports is what the wallet paid besides the amount (forwarding fees included), to the nanoton
      if (r.status.state !== 'MINED' || r.status.fee === null) throw new Error(`mined with a fee: ${JSON.stringify(r.status, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
      expect(hotBefore - (await tn.balance(hot, null))).to.equal(1_250_000_000n + r.status.fee);
      expect(r.status.fee <= r.unsigned.maxFee).to.equal(true);
      expect(r.input.deployed).to.equal(false);
      expect(r.status).to.deep.include({ state: 'MINED', succeeded: true });
      expect(await tn.balance(to, null)).to.equal(1_250_000_000n);
      expect(await tn.nextSequence(hot)).to.equal(1n);
      const dest = node.transactionsOf(Address.parse(to));
      const body = dest[dest.length - 1]!.tx.inMessage!.body.beginParse();
      expect(body.loadUint(32)).to.equal(0);
      expect(body.loadStringTail()).to.equal('9001');
      // sending the same message again: the wallet took it already
      expect(await tn.broadcast(r.signed)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: r.signed.txHash });
    });

    it('pays a jetton through the hot wallet\'s jetton wallet', async () => {
      const before = await jetton.balanceOf(user.address);
      const r = await pay({ to: user.address.toString({ urlSafe: true, bounceable: true, testOnly: true }), memo: 'usdt out', contract: usdt, amount: 10_000_000n });
      expect(r.input.jettonWallet).to.equal((await jetton.walletOf(Address.parse(hot))).toRawString());
      expect(r.status).to.deep.include({ state: 'MINED', succeeded: true });
      expect(await jetton.balanceOf(user.address)).to.equal(before + 10_000_000n);
      expect(await tn.balance(hot, usdt)).to.equal(90_000_000n);
      expect(r.unsigned.maxFee > 0n).to.equal(true);
    });

    it('reports a Toncoin transfer that bounced (bounceable, to an undeployed account) as failed', async () => {
      const to = fresh(2, true);
      const before = await tn.balance(hot, null);
      const r = await pay({ to, memo: null, contract: null, amount: 2_000_000_000n });
      expect(r.status).to.deep.include({ state: 'MINED', succeeded: false });
      expect(await tn.balance(to, null)).to.equal(0n);
      const spent = before - (await tn.balance(hot, null));
      expect(spent > 0n && spent < 2_000_000_000n, `the value came back (spent ${spent})`).to.equal(true);
    });

    it('reports a jetton transfer beyond the jetton balance as failed', async () => {
      const r = await pay({ to: fresh(3, false), memo: null, contract: usdt, amount: 500_000_000n });
      expect(r.status).to.deep.include({ state: 'MINED', succeeded: false });
      expect(await tn.balance(hot, usdt)).to.equal(90_000_000n);
    });

    it('a collection sweep of Toncoin leaves the deposit float (chain option depositFloat, default 0.1 TON) to pay jetton sweeps; a jetton sweep moves the whole balance', async () => {
      const ton = await tn.balance(hot, null);
      expect(ton > DEFAULT_DEPOSIT_FLOAT).to.equal(true);
      expect(await tn.sweepableBalance!(hot, null)).to.equal(ton - DEFAULT_DEPOSIT_FLOAT);
      expect(await tn.sweepableBalance!(hot, usdt)).to.equal(await tn.balance(hot, usdt));
      const other = paying(plugin.create(tonChain({ options: { depositFloat: '0.5' } }))).createTransferNode({ url: node.url });
      expect(await other.sweepableBalance!(hot, null)).to.equal(ton - 500_000_000n);
      const none = paying(plugin.create(tonChain({ options: { depositFloat: '1000' } }))).createTransferNode({ url: node.url });
      expect(await none.sweepableBalance!(hot, null), 'nothing above the float').to.equal(0n);
      expect(() => plugin.create(tonChain({ options: { depositFloat: '0.1 TON' } }))).to.throw(AdapterConfigError, /depositFloat/);
      expect(() => plugin.create(tonChain({ options: { depositFloat: '0.0000000001' } }))).to.throw(AdapterConfigError, /depositFloat/);
    });

    it('refuses a message whose seqno is not the wallet\'s, and knows nothing of an unsent one', async () => {
      const fromPublicKey = await keys.getPublicKey(hotRef);
      const base = { from: hot, fromPublicKey, to: fresh(4, false), memo: null, contract: null, amount: 1n };
      const input = await tn.transferInput(base);
      const unsigned = crafter.craft({ ...base, sequence: 99n }, input);
      const signed = crafter.combine(unsigned, [await keys.sign(hotRef, unsigned.payloads[0]!)]);
      const out = await tn.broadcast(signed);
      expect(out.outcome).to.equal('REJECTED');
      expect(await tn.status(signed.txHash, input)).to.deep.equal({ state: 'UNKNOWN' });
    });

    it('the first jetton transfer to an owner whose jetton wallet does not exist (a collection into a new hot wallet) deploys it and credits every unit; the attached Toncoin pays for it', async () => {
      // a wallet no one has sent anything to: no account, no jetton wallet (as a hot wallet before its first sweep)
      const owner = fresh(42, true);
      const ownerWallet = await jetton.walletOf(Address.parse(owner));
      expect((await node.blockchain.getContract(ownerWallet)).accountState?.type ?? 'uninit', 'its jetton wallet does not exist').to.equal('uninit');
      const hotTonBefore = await tn.balance(hot, null);
      const r = await pay({ to: owner, memo: null, contract: usdt, amount: 2_500_000n });
      expect(r.status).to.deep.include({ state: 'MINED', succeeded: true });
      expect((await node.blockchain.getContract(ownerWallet)).accountState?.type, 'deployed by the transfer').to.equal('active');
      expect(await jetton.balanceOf(Address.parse(owner))).to.equal(2_500_000n);
      expect(await tn.balance(owner, usdt)).to.equal(2_500_000n);
      // what the sender paid in Toncoin: the network fees and the new jetton wallet's storage and gas, out of the
      // attached jetton gas (the rest comes back as excess): within the crafted maxFee
      const spent = hotTonBefore - (await tn.balance(hot, null));
      expect(spent > 0n && spent <= r.unsigned.maxFee, `spent ${spent} within maxFee ${r.unsigned.maxFee}`).to.equal(true);
      // the reported fee is the wallet's own transaction; the attached Toncoin paid the rest, and most of it came back
      if (r.status.state !== 'MINED' || r.status.fee === null) throw new Error('mined with a fee');
      expect(r.status.fee > 0n && r.status.fee < spent).to.equal(true);
      const excessTx = node.transactionsOf(Address.parse(hot)).at(-1)!.tx;
      const excess = excessTx.inMessage!;
      expect(excess.info.src?.toString(), 'the excess comes back from the new jetton wallet').to.equal(ownerWallet.toString());
      expect(excess.info.type === 'internal' && excess.info.value.coins > 0n && excess.info.value.coins < DEFAULT_JETTON_GAS).to.equal(true);
      // spent: the wallet's transaction, the attached Toncoin less the excess, and the wallet's fee for taking the excess in
      expect(spent).to.equal(r.status.fee + DEFAULT_JETTON_GAS - (excess.info.type === 'internal' ? excess.info.value.coins : 0n) + excessTx.totalFees.coins);
      // what stays in the new jetton wallet (its storage reserve) is the first transfer's extra cost: a second
      // transfer to the same owner spends less
      const kept = (await node.blockchain.getContract(ownerWallet)).balance;
      expect(kept > 0n).to.equal(true);
      const again = await tn.balance(hot, null);
      const r2 = await pay({ to: owner, memo: null, contract: usdt, amount: 1_000_000n });
      expect(r2.status).to.deep.include({ state: 'MINED', succeeded: true });
      expect(await jetton.balanceOf(Address.parse(owner))).to.equal(3_500_000n);
      const spent2 = again - (await tn.balance(hot, null));
      expect(spent2 < spent, `the second transfer spent ${spent2}, the first ${spent}`).to.equal(true);
    });
  });
});
