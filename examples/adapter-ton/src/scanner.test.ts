import { expect } from 'chai';
import { Address, beginCell, contractAddress, toNano, type Cell } from '@ton/core';
import { createShardAccount, internal, type SandboxContract, type TreasuryContract } from '@ton/sandbox';
import type { ObservedTransfer } from '@wcs/core';
import { OP_JETTON_INTERNAL_TRANSFER, OP_JETTON_NOTIFICATION, TonAddresses, TonScanner, commentCell, jettonMasterForm, plugin } from './index';
import { TonSandboxNode } from './test-support/sandbox-server';
import { JETTON_WALLET_CODE, deployJetton, testKeyStore, tonChain, type Jetton } from './test-support/fixtures';

/**
 * The jetton wallet check of the deposit scanner: a transfer_notification is a deposit only when
 * its sender is the jetton wallet its master derives for the scanned address. Both ways of checking
 * (from the cells of the reference jetton code, and by the get methods) must refuse every fake.
 */
describe('TON scanner: jetton wallet checks in @ton/sandbox', function () {
  this.timeout(120_000);
  let node: TonSandboxNode;
  let shared: string;
  let us: Address;
  let user: SandboxContract<TreasuryContract>;
  let a: Jetton;
  let b: Jetton;
  let fakeMaster: SandboxContract<TreasuryContract>;
  const addresses = new TonAddresses('sandbox');

  const notification = (amount: bigint, from: Address, comment: string) =>
    beginCell().storeUint(OP_JETTON_NOTIFICATION, 32).storeUint(0, 64).storeCoins(amount).storeAddress(from).storeBit(true).storeRef(commentCell(comment)).endCell();
  /** A notification to the shared address "from" any address (the sandbox takes an internal message from anyone). */
  const inject = async (from: Address, amount: bigint, comment: string) => {
    await node.blockchain.sendMessage(internal({ from, to: us, value: toNano('0.05'), bounce: false, body: notification(amount, from, comment) }));
  };
  /** An account at `at` with the reference jetton wallet's code and the given data (never deployed by a master). */
  const plant = async (at: Address, data: Cell) => {
    await node.blockchain.setShardAccount(at, createShardAccount({ address: at, code: JETTON_WALLET_CODE, data, balance: toNano('1') }));
  };
  const walletData = (balance: bigint, owner: Address, master: Address) =>
    beginCell().storeCoins(balance).storeAddress(owner).storeAddress(master).storeRef(JETTON_WALLET_CODE).endCell();

  before(async () => {
    node = await TonSandboxNode.start();
    const adapter = plugin.create(tonChain());
    shared = adapter.address.addressFromPublicKey(await testKeyStore().getPublicKey({ applicationId: 1, spec: adapter.keySpec('deposit'), purpose: 'deposit', index: 0 }));
    us = Address.parse(shared);
    user = await node.blockchain.treasury('user');
    a = await deployJetton(node, await node.blockchain.treasury('admin a'));
    b = await deployJetton(node, await node.blockchain.treasury('admin b'));
    expect(a.master.equals(b.master)).to.equal(false);
    await a.mint(user.address, 1_000_000_000n);
    await b.mint(user.address, 1_000_000_000n);

    // genuine deposits of both jettons (each from the shared address's own jetton wallet of its master)
    await a.transfer(user, us, 11n, '1');
    await b.transfer(user, us, 22n, '2');
    await a.transfer(user, us, 33n, '3');

    // 1. a notification straight from a wallet contract (not a jetton wallet)
    await inject(user.address, 1_001n, '42');
    // 2. the reference wallet code, data naming the shared address and jetton a, at an address a does not derive
    const fakeA = Address.parseRaw(`0:${'a1'.repeat(32)}`);
    await plant(fakeA, walletData(5_000n, us, a.master));
    await inject(fakeA, 1_002n, '42');
    // 3. the same code and data deployed at their own StateInit's address, with a nonzero balance: still not a's derivation
    const selfA = contractAddress(0, { code: JETTON_WALLET_CODE, data: walletData(1n, us, a.master) });
    await plant(selfA, walletData(1n, us, a.master));
    await inject(selfA, 1_003n, '42');
    // 4. a genuine jetton wallet of b, but the user's (owner is not the shared address)
    await inject(await b.walletOf(user.address), 1_004n, '42');
    // 5. a real reference jetton wallet of the shared address under a "master" that is a plain wallet: it takes
    //    internal_transfer from its master and sends a real transfer_notification (no injected message)
    fakeMaster = await node.blockchain.treasury('fake master');
    const init = { code: JETTON_WALLET_CODE, data: walletData(0n, us, fakeMaster.address) };
    const fake = contractAddress(0, init);
    const body = beginCell().storeUint(OP_JETTON_INTERNAL_TRANSFER, 32).storeUint(0, 64).storeCoins(1_005n)
      .storeAddress(fakeMaster.address).storeAddress(fakeMaster.address).storeCoins(toNano('0.01')).storeBit(true).storeRef(commentCell('42')).endCell();
    await fakeMaster.send({ to: fake, value: toNano('0.2'), init, body, bounce: false });
    const fromFake = node.transactionsOf(us).filter((r) => r.tx.inMessage?.info.src instanceof Address && r.tx.inMessage.info.src.equals(fake));
    expect(fromFake, 'the fake wallet sent a transfer_notification').to.have.length(1);
    // 6. a zero amount from the genuine wallet of a
    await inject(await a.walletOf(us), 0n, '42');
  });

  after(async () => {
    await node?.close();
  });

  const scanAll = async (scanner: TonScanner, limit = 100) => {
    const all: ObservedTransfer[] = [];
    let cursor: string | null = null;
    for (;;) {
      const r: { transfers: readonly ObservedTransfer[]; cursor: string | null } = await scanner.transfersSince(shared, cursor, limit);
      if (r.cursor === cursor) return all;
      all.push(...r.transfers);
      cursor = r.cursor;
    }
  };
  const jettons = (all: readonly ObservedTransfer[]) => all.filter((t) => t.contract !== null).map((t) => [t.contract, t.amount, t.memo]);
  const genuine = () => [[jettonMasterForm(a.master), 11n, '1'], [jettonMasterForm(b.master), 22n, '2'], [jettonMasterForm(a.master), 33n, '3']];

  for (const readJettonCode of [true, false]) {
    describe(readJettonCode ? 'from the cells of the reference jetton code' : 'by the get methods', () => {
      it('credits each genuine jetton deposit with its own master, and none of the fakes', async () => {
        const since = node.requests.length;
        const all = await scanAll(new TonScanner({ url: node.url }, addresses, { readJettonCode }));
        expect(jettons(all)).to.deep.equal(genuine());
        const gets = node.requests.slice(since).filter((p) => p === '/runGetMethod').length;
        // from the cells: only the fake whose master is no minter (5) and the contract of another code (1) are asked get methods
        if (readJettonCode) expect(gets).to.equal(2);
        else expect(gets).to.be.greaterThan(6);
      });

      it('gives the same answers one transaction at a time', async () => {
        expect(jettons(await scanAll(new TonScanner({ url: node.url }, addresses, { readJettonCode }), 1))).to.deep.equal(genuine());
      });

      it('keeps each wallet\'s own answer in the shared cache: a second scanner asks nothing and credits the same', async () => {
        const jettonWallets = new Map<string, Address | null>();
        const first = await scanAll(new TonScanner({ url: node.url }, addresses, { readJettonCode, jettonWallets }));
        const usRaw = us.toRawString();
        expect(jettonWallets.get(`${(await a.walletOf(us)).toRawString()}>${usRaw}`)!.equals(a.master)).to.equal(true);
        expect(jettonWallets.get(`${(await b.walletOf(us)).toRawString()}>${usRaw}`)!.equals(b.master)).to.equal(true);
        expect([...jettonWallets.values()].filter((m) => m !== null)).to.have.length(2);
        const since = node.requests.length;
        const second = await scanAll(new TonScanner({ url: node.url }, addresses, { readJettonCode, jettonWallets }));
        expect(node.requests.slice(since).filter((p) => p !== '/getTransactions')).to.deep.equal([]);
        expect(second).to.deep.equal(first);
        expect(jettons(second)).to.deep.equal(genuine());
      });
    });
  }

  it('computes the master\'s wallet address as its get_wallet_address does (the deposits above came through it)', async () => {
    const scanner = new TonScanner({ url: node.url }, addresses);
    const since = node.requests.length;
    const all = await scanAll(scanner);
    expect(jettons(all)).to.deep.equal(genuine());
    // one getAddressInformation for each of the 7 senders and each of the 3 masters they name (a, b, the fake one)
    expect(node.requests.slice(since).filter((p) => p === '/getAddressInformation')).to.have.length(10);
    expect((await a.walletOf(us)).equals(contractAddress(0, { code: JETTON_WALLET_CODE, data: walletData(0n, us, a.master) }))).to.equal(true);
  });
});
