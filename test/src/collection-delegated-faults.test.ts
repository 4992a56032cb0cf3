/**
 * Delegated sweeps (EIP-7702) when things go wrong, on anvil through the service with its
 * workers and the software key store (the happy path at scale: collection-delegated.test.ts):
 * - a paused ERC-20 in a batch: its entries fail inside the batch (SWEEP_CALL_FAILED, the token's
 *   reason) while the other token's and the native entries of the same transaction succeed; once
 *   unpaused, `wcs collect retry` sweeps them. With the paused token's items leading the
 *   processor's queue every item waits instead (a known bug of the launcher's price reading: the
 *   test for it is skipped until it is fixed, see there);
 * - a token whose transfer returns nothing (USDT-like, compiled here) is swept whole;
 * - a deposit address whose delegation was replaced by someone else is blocked: its item FAILED
 *   (DELEGATION_FOREIGN), one block, one alert, never in a batch again. The foreign delegation is
 *   made with anvil_setCode (`0xef0100 ‖ delegate`, exactly what an EIP-7702 delegation leaves in
 *   the account's code): a real authorization would need the deposit key, which only the key store
 *   holds, so the test cannot sign one;
 * - pass-through: deposits settle once the merchant's address received them; a new merchant
 *   address re-delegates the deposit address to the new collector's forwarder in the next batch;
 * - a node without EIP-7702 (anvil --hardfork cancun): DELEGATED policies take the top-up path.
 * The operator funds only the fee wallets: the service deploys its contracts, signs its
 * authorizations and pays every batch itself.
 */
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { anvilRpc, deployErc20, erc20Balance, mine, mintErc20, sendNative, waitForReceipt } from '@wcs/adapter-evm/devnet';
import { forwarderDeployment } from '@wcs/adapter-evm';
import { pollUntil, sleep } from './support/expect';
import { freshEvmAddress } from './support/payouts';
import { batchAuthorizations, ETH_TOKEN_ID, ETHER, rechargesConfirmed, startDelegatedHarness, transferKinds, type DelegatedHarness, type ItemRow } from './support/delegated-harness';
import { adapterTestContract, compileSolidity, deployBytecode, DEV_ACCOUNT, mintData, PAUSE, sendCall, UNPAUSE } from './support/solidity';
import { retryCollectionItem, setCollectionAddress } from './support/server-internals';

const TOKEN_A = 10299;
const TOKEN_B = 10298;
const USDT = 10297;
const GWEI = 10n ** 9n;
const USDT_UNIT = 10n ** 6n;
/** What an EIP-7702 delegation leaves in an account's code: 0xef0100 ‖ delegate. */
const delegatedTo = (delegate: string) => `0xef0100${delegate.slice(2).toLowerCase()}`;

describe('delegated sweeps (EIP-7702) on anvil: faults — a paused token, a token without a return value, a foreign delegation, pass-through re-delegation', function () {
  this.timeout(180_000);
  let h: DelegatedHarness;
  let tokenA: string;
  let tokenB: string;
  let usdt: string;
  const codeOf = (a: string) => anvilRpc<string>(h.anvil.url, 'eth_getCode', [a, 'latest']);
  const tokenPolicy = (tokenId: number) => ({ tokenId, threshold: ETHER, nativeValue: 3000n * ETHER });
  const nativePolicy = { tokenId: ETH_TOKEN_ID, threshold: ETHER / 1000n };

  before(async () => {
    h = await startDelegatedHarness({
      tokens: async (url) => {
        tokenA = await deployErc20(url, { name: 'Pausable A', symbol: 'TKA' });
        tokenB = await deployErc20(url, { name: 'Token B', symbol: 'TKB' });
        // USDT-like: transfer() returns nothing; compiled now from the adapter's test contract
        usdt = await deployBytecode(url, compileSolidity(adapterTestContract('UsdtLikeToken.sol'), 'UsdtLikeToken').bytecode);
        return [
          { id: TOKEN_A, symbol: 'TKA', contract: tokenA, decimals: 18 },
          { id: TOKEN_B, symbol: 'TKB', contract: tokenB, decimals: 18 },
          { id: USDT, symbol: 'USDTL', contract: usdt, decimals: 6 },
        ];
      },
    });
  });

  after(async () => {
    await h?.stop();
  });

  it('a paused token fails only its own entries of the batch (SWEEP_CALL_FAILED, the reason readable); the other token and the native coin succeed in the same transaction; unpaused and retried, it sweeps', async () => {
    const { app, client } = h;
    const url = h.anvil.url;
    const addrs = { a: [] as string[], b: [] as string[], n: [] as string[] };
    for (let i = 0; i < 3; i++) {
      addrs.a.push(await h.newAddress(client, `a-${i}`));
      addrs.b.push(await h.newAddress(client, `b-${i}`));
      addrs.n.push(await h.newAddress(client, `n-${i}`));
    }
    const amountA = addrs.a.map((_x, i) => 5n * ETHER + BigInt(i));
    const amountB = addrs.b.map((_x, i) => 7n * ETHER + BigInt(i));
    const amountN = addrs.n.map((_x, i) => ETHER / 100n + BigInt(i) * GWEI);
    // token B's deposits first: their items lead the processor's queue (the next test has the paused token's lead it)
    for (const [i, a] of addrs.b.entries()) await mintErc20(url, tokenB, a, amountB[i]!);
    for (const [i, a] of addrs.a.entries()) await mintErc20(url, tokenA, a, amountA[i]!);
    for (const [i, a] of addrs.n.entries()) await sendNative(url, a, amountN[i]!);
    await rechargesConfirmed(h, app.id, 9);
    const hotNativeBefore = await h.balance(h.hot);

    // The items are planned (and priced) with the token still running; the contracts are not
    // deployed yet, so no batch can be made before the block that deploys them: the pause goes
    // into that very block, and every batch comes after it.
    let pauseBlock: bigint;
    await h.clock.pause();
    try {
      await h.setPolicies(app.id, [tokenPolicy(TOKEN_A), tokenPolicy(TOKEN_B), nativePolicy]);
      const planned = await pollUntil(() => h.items(app.id), (r) => r.length === 9, 30_000, 100);
      expect(planned.ok, `9 items planned: ${JSON.stringify(planned.result)}`).to.equal(true);
      expect(await transferKinds(h, app.id), 'no batch before the contracts exist').to.not.have.property('SWEEP_BATCH');
      const pause = await anvilRpc<string>(url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to: tokenA, data: PAUSE, gas: '0x30000' }]);
      await mine(url, 1);
      const receipt = await waitForReceipt<{ status: string; blockNumber: string }>(url, pause);
      expect(receipt.status, 'token A paused').to.equal('0x1');
      pauseBlock = BigInt(receipt.blockNumber);
    } finally {
      h.clock.resume();
    }

    // whatever happens below, token A runs again afterwards (the later scenarios share the application)
    let unpaused = false;
    const unpause = async () => {
      if (unpaused) return;
      unpaused = true;
      await sendCall(url, tokenA, UNPAUSE);
    };
    try {
      const done = await h.settled(app.id, 9, 30_000);
      const ofToken = (id: number) => done.filter((i) => i.chain_token_id === id);
      for (const i of ofToken(TOKEN_A)) {
        expect(i, `paused token item ${i.id}`).to.include({ status: 'FAILED', failure_code: 'SWEEP_CALL_FAILED' });
        expect(i.failure_message, 'the token\'s own reason').to.match(/paused/i);
      }
      for (const i of [...ofToken(TOKEN_B), ...ofToken(ETH_TOKEN_ID)]) expect(i, `item ${i.id}`).to.include({ status: 'SUCCESS', failure_code: null });
      // one batch transaction for all nine, mined after the pause
      const batches = [...new Set(done.map((i) => i.transfer_id))];
      expect(batches, 'all nine entries in one SWEEP_BATCH').to.have.length(1);
      const [batch] = await h.q<{ kind: string; status: string; block_height: string; tx_hash: string }>('SELECT kind, status, block_height::text AS block_height, tx_hash FROM transfers WHERE id = $1', [batches[0]]);
      expect(batch).to.include({ kind: 'SWEEP_BATCH', status: 'SUCCESS' });
      expect(BigInt(batch!.block_height) > pauseBlock!, `batch in block ${batch!.block_height}, pause in ${pauseBlock!}`).to.equal(true);
      expect(done.every((i) => i.tx_hash === batch!.tx_hash)).to.equal(true);
      // on chain: token A stays where it was; token B and every wei of the native deposits reached the hot wallet
      for (const [i, a] of addrs.a.entries()) expect(await erc20Balance(url, tokenA, a), `token A stays at ${a}`).to.equal(amountA[i]);
      expect(await erc20Balance(url, tokenA, h.hot)).to.equal(0n);
      expect(await erc20Balance(url, tokenB, h.hot)).to.equal(amountB.reduce((s, v) => s + v, 0n));
      for (const a of addrs.b) expect(await erc20Balance(url, tokenB, a)).to.equal(0n);
      for (const a of addrs.n) expect(await h.balance(a)).to.equal(0n);
      expect(await h.balance(h.hot) - hotNativeBefore).to.equal(amountN.reduce((s, v) => s + v, 0n));
      // the authorizations were applied whatever the entries did: every address now delegates to the forwarder
      const forwarder = forwarderDeployment(h.hot).address;
      expect((await batchAuthorizations(h, batches[0]!)).map((x) => x.authority).sort()).to.deep.equal([...addrs.a, ...addrs.b, ...addrs.n].map((a) => a.toLowerCase()).sort());
      for (const a of addrs.a) expect(await codeOf(a)).to.equal(delegatedTo(forwarder));
      // the callbacks say so, and each failure is alerted
      const failedIds = ofToken(TOKEN_A).map((i) => Number(i.id));
      const events = await pollUntil(async () => h.collectEvents(app.id), (e) => e.length >= 9, 30_000, 100);
      expect(events.result).to.have.length(9);
      for (const e of events.result) {
        if (failedIds.includes(e.id)) {
          expect(e).to.include({ status: 'FAILED', failureReasonCode: 'SWEEP_CALL_FAILED' });
          expect(e.failureReasonMessage).to.match(/paused/i);
        } else {
          expect(e).to.include({ status: 'SUCCESS', failureReasonCode: null });
        }
      }
      const alerts = await h.q<{ item: string }>(`SELECT details->>'item' AS item FROM operator_alerts WHERE kind = 'COLLECTION_FAILED' ORDER BY id`);
      expect(alerts.map((a) => Number(a.item)).sort()).to.deep.equal([...failedIds].sort());

      // unpaused, then `wcs collect retry` for each: swept, no new authorization (the addresses are delegated already)
      await unpause();
      for (const id of failedIds) {
        const r = await retryCollectionItem(h.svc, id);
        expect(r.item.status).to.equal('PLANNED');
      }
      const retried = await pollUntil(() => h.items(app.id), (rows) => rows.filter((i) => failedIds.includes(Number(i.id))).every((i) => i.status === 'SUCCESS' || (i.status === 'FAILED' && i.retry_times > 0)), 60_000, 200);
      const again = retried.result.filter((i) => failedIds.includes(Number(i.id)));
      expect(again.map((i) => [i.status, i.retry_times]), JSON.stringify(again)).to.deep.equal(failedIds.map(() => ['SUCCESS', 1]));
      expect(retried.result, 'no new item').to.have.length(9);
      expect(await erc20Balance(url, tokenA, h.hot)).to.equal(amountA.reduce((s, v) => s + v, 0n));
      for (const a of addrs.a) expect(await erc20Balance(url, tokenA, a)).to.equal(0n);
      for (const t of new Set(again.map((i) => i.transfer_id!))) {
        expect(t, 'a new batch').to.not.equal(batches[0]);
        expect(await batchAuthorizations(h, t), 'no authorization: delegated already').to.deep.equal([]);
      }
      const ev = await pollUntil(async () => h.collectEvents(app.id).filter((e) => failedIds.includes(e.id) && e.status === 'SUCCESS'), (e) => e.length === failedIds.length, 30_000, 100);
      expect(ev.result.map((e) => e.retryTimes)).to.deep.equal(failedIds.map(() => 1));
    } finally {
      await unpause();
    }
  });

  // the launcher reads the fee per gas by pricing an item's own transfer: a paused token's items
  // first in the queue must not hold up the others (DelegatedSweeper.pricePerGas tries a native item,
  // then one item per token)
  it('a paused token whose items lead the queue holds up no other item: they fail inside the batch, the others succeed beside them', async () => {
    const url = h.anvil.url;
    // a second application: its own hot wallet, so its own forwarder, whose deployment leaves time to pause the token between planning and batching
    const second = await h.createApp('paused-first');
    await sendNative(url, second.fee, ETHER);
    const a = [await h.newAddress(second.client, 'pf-a-0'), await h.newAddress(second.client, 'pf-a-1')];
    const b = await h.newAddress(second.client, 'pf-b-0');
    // token A's deposits first: their items get the lowest ids and lead the processor's queue
    for (const x of a) await mintErc20(url, tokenA, x, 2n * ETHER);
    await mintErc20(url, tokenB, b, 3n * ETHER);
    await rechargesConfirmed(h, second.app.id, 3);
    await h.clock.pause();
    try {
      await h.setPolicies(second.app.id, [tokenPolicy(TOKEN_A), tokenPolicy(TOKEN_B)]);
      const planned = await pollUntil(() => h.items(second.app.id), (r) => r.length === 3, 30_000, 100);
      expect(planned.ok, `3 items planned: ${JSON.stringify(planned.result)}`).to.equal(true);
      const pause = await anvilRpc<string>(url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to: tokenA, data: PAUSE, gas: '0x30000' }]);
      await mine(url, 1);
      expect((await waitForReceipt<{ status: string }>(url, pause)).status, 'token A paused').to.equal('0x1');
    } finally {
      h.clock.resume();
    }
    try {
      const held = (rows: ItemRow[]) => rows.filter((i) => /fee per gas could not be read/.test(i.waiting_reason ?? ''));
      const r = await pollUntil(() => h.items(second.app.id), (rows) => held(rows).length > 0 || rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), 30_000, 200);
      expect(held(r.result).map((i) => [i.id, i.chain_token_id, i.waiting_reason]), 'no item held up by the paused token\'s estimate').to.deep.equal([]);
      expect(r.ok, JSON.stringify(r.result)).to.equal(true);
      expect(r.result.map((i) => [i.chain_token_id, i.status, i.failure_code])).to.deep.equal([[TOKEN_A, 'FAILED', 'SWEEP_CALL_FAILED'], [TOKEN_A, 'FAILED', 'SWEEP_CALL_FAILED'], [TOKEN_B, 'SUCCESS', null]]);
      expect(new Set(r.result.map((i) => i.transfer_id)).size, 'one batch').to.equal(1);
      for (const x of a) expect(await erc20Balance(url, tokenA, x)).to.equal(2n * ETHER);
      expect(await erc20Balance(url, tokenB, second.hot)).to.equal(3n * ETHER);
    } finally {
      await sendCall(url, tokenA, UNPAUSE);
    }
  });

  it('an empty fee wallet, as a new operator has it: the items wait naming it, no deployment is attempted, one FEE_WALLET_LOW; funded, they are swept', async () => {
    const url = h.anvil.url;
    const third = await h.createApp('empty-fee-wallet');
    const x = await h.newAddress(third.client, 'ef-0');
    await mintErc20(url, tokenB, x, 4n * ETHER);
    await rechargesConfirmed(h, third.app.id, 1);
    await h.setPolicies(third.app.id, [tokenPolicy(TOKEN_B)]);
    const waits = await pollUntil(() => h.items(third.app.id), (rows) => rows.length === 1 && /fee wallet .* holds too little to deploy/.test(rows[0]!.waiting_reason ?? ''), 30_000, 100);
    expect(waits.ok, `the item waits for the fee wallet: ${JSON.stringify(waits.result)}`).to.equal(true);
    await sleep(1_000); // several steps: still no transfer of this application
    expect(await h.q(`SELECT kind, status FROM transfers WHERE application_id = $1`, [third.app.id]), 'no deployment made while the fee wallet cannot pay it').to.deep.equal([]);
    expect((await h.q<{ n: number }>(`SELECT count(*)::int AS n FROM operator_alerts WHERE kind = 'FEE_WALLET_LOW' AND details->>'address' = $1`, [third.fee]))[0]!.n).to.equal(1);
    await sendNative(url, third.fee, ETHER);
    const done = await pollUntil(() => h.items(third.app.id), (rows) => rows[0]?.status === 'SUCCESS', 60_000, 200);
    expect(done.ok, JSON.stringify(done.result)).to.equal(true);
    expect(await erc20Balance(url, tokenB, third.hot)).to.equal(4n * ETHER);
    expect((await h.q<{ kind: string; status: string }>(`SELECT kind, status FROM transfers WHERE application_id = $1 ORDER BY id`, [third.app.id])).map((t) => `${t.kind}:${t.status}`)).to.deep.equal(['DEPLOY:SUCCESS', 'SWEEP_BATCH:SUCCESS']);
  });

  it('a token whose transfer returns nothing (USDT-like) is swept whole to the hot wallet', async () => {
    const { app, client } = h;
    const url = h.anvil.url;
    const a = await h.newAddress(client, 'usdt-1');
    const amount = 250n * USDT_UNIT + 17n;
    const before = (await h.items(app.id)).length;
    await sendCall(url, usdt, mintData(a, amount));
    await h.setPolicies(app.id, [{ tokenId: USDT, threshold: USDT_UNIT, nativeValue: 3000n * USDT_UNIT }]);
    const done = await h.settled(app.id, before + 1);
    const item = done.find((i) => i.from_address === a && i.chain_token_id === USDT)!;
    expect(item, JSON.stringify(done.slice(before))).to.include({ status: 'SUCCESS', amount: amount.toString(), sweep_mode: 'DELEGATED' });
    expect(await erc20Balance(url, usdt, h.hot), 'every unit at the hot wallet').to.equal(amount);
    expect(await erc20Balance(url, usdt, a)).to.equal(0n);
    const [batch] = await h.q<{ kind: string }>('SELECT kind FROM transfers WHERE id = $1', [item.transfer_id]);
    expect(batch!.kind).to.equal('SWEEP_BATCH');
    expect(await batchAuthorizations(h, item.transfer_id!)).to.deep.equal([{ authority: a.toLowerCase(), address: forwarderDeployment(h.hot).address.toLowerCase() }]);
  });

  it('a delegation replaced by someone else: the item FAILED (DELEGATION_FOREIGN), one block, one alert, the tokens stay, and the address is never in a batch again', async () => {
    const { app, client } = h;
    const url = h.anvil.url;
    const a = await h.newAddress(client, 'foreign');
    const control = await h.newAddress(client, 'foreign-control');
    const ofAddress = (rows: ItemRow[], addr: string) => rows.filter((i) => i.from_address === addr);
    // swept once: delegated to the service's forwarder
    await mintErc20(url, tokenB, a, 4n * ETHER);
    const first = await pollUntil(() => h.items(app.id), (rows) => ofAddress(rows, a).some((i) => i.status === 'SUCCESS'), 60_000, 200);
    expect(first.ok, JSON.stringify(ofAddress(first.result, a))).to.equal(true);
    expect(await codeOf(a)).to.equal(delegatedTo(forwarderDeployment(h.hot).address));
    // someone with the key re-delegates it (see the file's comment: anvil_setCode stands for the authorization)
    const foreign = usdt;
    await anvilRpc(url, 'anvil_setCode', [a, delegatedTo(foreign)]);
    expect(await codeOf(a)).to.equal(delegatedTo(foreign));
    const last = (await h.q<{ last: string }>('SELECT coalesce(max(id), 0)::text AS last FROM transfers'))[0]!.last;

    await mintErc20(url, tokenB, a, 2n * ETHER);
    const blocked = await pollUntil(() => h.items(app.id), (rows) => ofAddress(rows, a).length === 2 && ofAddress(rows, a)[1]!.status === 'FAILED', 60_000, 200);
    const item = ofAddress(blocked.result, a)[1];
    expect(item, JSON.stringify(ofAddress(blocked.result, a))).to.include({ status: 'FAILED', failure_code: 'DELEGATION_FOREIGN', transfer_id: null });
    expect(item!.failure_message).to.match(/delegated to .* not to the service's forwarder/);
    const blocks = await h.q<{ found: string; delegate: string; released_at: Date | null; application_id: number }>('SELECT found, delegate, released_at, application_id FROM delegation_blocks WHERE address = $1', [a]);
    expect(blocks).to.have.length(1);
    expect(blocks[0]).to.include({ found: 'DELEGATED', released_at: null, application_id: app.id });
    expect(blocks[0]!.delegate.toLowerCase()).to.equal(foreign.toLowerCase());
    const alerts = () => h.q<{ n: number }>(`SELECT count(*)::int AS n FROM operator_alerts WHERE kind = 'DELEGATION_FOREIGN' AND details->>'address' = $1`, [a]);
    expect((await alerts())[0]!.n, 'one DELEGATION_FOREIGN alert').to.equal(1);
    const ev = await pollUntil(async () => h.collectEvents(app.id).filter((e) => e.id === Number(item!.id)), (e) => e.length === 1, 30_000, 100);
    expect(ev.result[0]).to.include({ status: 'FAILED', failureReasonCode: 'DELEGATION_FOREIGN' });
    expect(await erc20Balance(url, tokenB, a), 'the tokens stay').to.equal(2n * ETHER);

    // a further deposit is planned but never swept, while another address's sweep goes on around it
    await mintErc20(url, tokenB, a, ETHER);
    await mintErc20(url, tokenB, control, 3n * ETHER);
    const later = await pollUntil(() => h.items(app.id),
      (rows) => ofAddress(rows, control).some((i) => i.status === 'SUCCESS') && ofAddress(rows, a).length === 3 && /blocked/.test(ofAddress(rows, a)[2]!.waiting_reason ?? ''), 60_000, 200);
    expect(later.ok, JSON.stringify([...ofAddress(later.result, a), ...ofAddress(later.result, control)])).to.equal(true);
    await sleep(2000); // a few more processor steps
    const third = ofAddress(await h.items(app.id), a)[2]!;
    expect(third, 'waits, blocked').to.include({ status: 'PLANNED', transfer_id: null });
    expect(third.waiting_reason).to.match(/the address is blocked/);
    expect(await erc20Balance(url, tokenB, a)).to.equal(3n * ETHER);
    expect(await codeOf(a), 'nobody re-delegated it').to.equal(delegatedTo(foreign));
    expect((await alerts())[0]!.n, 'still one alert').to.equal(1);
    expect(await h.q('SELECT id FROM delegation_blocks WHERE address = $1', [a])).to.have.length(1);
    const batchesSince = await h.q<{ id: string }>(`SELECT id::text AS id FROM transfers WHERE kind = 'SWEEP_BATCH' AND id > $1`, [last]);
    expect(batchesSince.length, 'the control address was swept by a batch after the block').to.be.above(0);
    expect(await h.q(`SELECT i.id FROM collection_items i JOIN transfers x ON x.id = i.transfer_id WHERE x.kind = 'SWEEP_BATCH' AND x.id > $1 AND i.from_address = $2`, [last, a])).to.deep.equal([]);
    for (const b of batchesSince) expect((await batchAuthorizations(h, b.id)).map((x) => x.authority)).to.not.include(a.toLowerCase());
  });

  it('pass-through: deposits settle once the merchant\'s address holds them; a new merchant address re-delegates the deposit address to the new collector\'s forwarder in the next batch', async () => {
    const url = h.anvil.url;
    const pt = await h.createApp('pass-through');
    await h.q(`UPDATE applications SET settlement_mode = 'PASS_THROUGH' WHERE id = $1`, [pt.app.id]);
    await sendNative(url, pt.fee, 2n * ETHER);
    const merchant1 = (await setCollectionAddress(h.svc, { app: pt.app.id, chain: 'ETH', kind: 'MERCHANT', address: freshEvmAddress() })).address;
    await h.setPolicies(pt.app.id, [tokenPolicy(TOKEN_B), nativePolicy]);
    const p1 = await h.newAddress(pt.client, 'pt-1');
    const p2 = await h.newAddress(pt.client, 'pt-2');
    await mintErc20(url, tokenB, p1, 6n * ETHER);
    const nativeAmount = ETHER / 20n + 123n;
    await sendNative(url, p2, nativeAmount);

    const done = await h.settled(pt.app.id, 2);
    expect(done.map((i) => [i.status, i.to_address.toLowerCase()])).to.deep.equal([['SUCCESS', merchant1.toLowerCase()], ['SUCCESS', merchant1.toLowerCase()]]);
    expect(await erc20Balance(url, tokenB, merchant1)).to.equal(6n * ETHER);
    expect(await h.balance(merchant1), 'every wei of the native deposit: the fee wallet paid the gas').to.equal(nativeAmount);
    const forwarder1 = forwarderDeployment(merchant1).address;
    expect(await codeOf(p1)).to.equal(delegatedTo(forwarder1));
    const [deployed] = await h.q<{ role: string; deployed_at: Date | null; kind: string; application_id: number }>(
      `SELECT e.role, e.deployed_at, x.kind, x.application_id FROM evm_contracts e JOIN transfers x ON x.id = e.transfer_id WHERE lower(e.address) = lower($1)`, [forwarder1]);
    expect(deployed, 'the merchant\'s forwarder deployed by the application\'s fee wallet').to.include({ role: 'FORWARDER', kind: 'DEPLOY', application_id: pt.app.id });
    expect(deployed!.deployed_at).to.not.equal(null);
    await expectSettledAfterSweep(pt.app.id, 2);

    // the merchant changes its address: the next deposit to p1 goes there, p1 re-delegated to the new forwarder
    const changed = await setCollectionAddress(h.svc, { app: pt.app.id, chain: 'ETH', kind: 'MERCHANT', address: freshEvmAddress() });
    expect(changed.previousAddress).to.equal(merchant1);
    const merchant2 = changed.address;
    const forwarder2 = forwarderDeployment(merchant2).address;
    await mintErc20(url, tokenB, p1, 2n * ETHER);
    const after = await h.settled(pt.app.id, 3);
    const third = after[2]!;
    expect(third).to.include({ status: 'SUCCESS', from_address: p1, amount: (2n * ETHER).toString() });
    expect(third.to_address.toLowerCase()).to.equal(merchant2.toLowerCase());
    expect(await batchAuthorizations(h, third.transfer_id!), 'a new authorization for p1, to the new forwarder').to.deep.equal([{ authority: p1.toLowerCase(), address: forwarder2.toLowerCase() }]);
    expect(await codeOf(p1)).to.equal(delegatedTo(forwarder2));
    expect(await erc20Balance(url, tokenB, merchant2)).to.equal(2n * ETHER);
    expect(await erc20Balance(url, tokenB, merchant1), 'the old merchant address got nothing more').to.equal(6n * ETHER);
    expect(await erc20Balance(url, tokenB, p1)).to.equal(0n);
    await expectSettledAfterSweep(pt.app.id, 3);
  });

  /** Every recharge of the application SETTLED, each no earlier than its item's batch was final, its RECHARGE callbacks PENDING, CONFIRMED, SETTLED. */
  async function expectSettledAfterSweep(appId: number, n: number): Promise<void> {
    const rows = await pollUntil(() => h.q<{ id: string; tx_status: string; settled_at: Date | null; finished_at: Date | null }>(
      `SELECT r.id::text AS id, r.tx_status, r.settled_at, x.finished_at FROM recharges r JOIN collection_items i ON i.id = r.collection_item_id JOIN transfers x ON x.id = i.transfer_id
        WHERE r.application_id = $1 ORDER BY r.id`, [appId]), (r) => r.length === n && r.every((x) => x.tx_status === 'SETTLED'), 30_000, 100);
    expect(rows.ok, JSON.stringify(rows.result)).to.equal(true);
    for (const r of rows.result) expect(r.settled_at!.getTime() >= r.finished_at!.getTime(), `recharge ${r.id} settled once its batch was final`).to.equal(true);
    const events = await pollUntil(async () => h.receiver.received.filter((x) => x.target.startsWith(`/recharge/${appId}`)).map((x) => JSON.parse(x.body.toString('utf8')) as { id: number; txStatus: string }),
      (e) => e.filter((x) => x.txStatus === 'SETTLED').length === n, 30_000, 100);
    for (const r of rows.result) expect(events.result.filter((e) => e.id === Number(r.id)).map((e) => e.txStatus), `recharge ${r.id}`).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED']);
  }
});

describe('delegated sweeps on a node without EIP-7702 (anvil --hardfork cancun): DELEGATED policies take the top-up path', function () {
  this.timeout(120_000);
  let h: DelegatedHarness;
  let token: string;
  const log: string[] = [];

  before(async () => {
    const stream = new Writable({ write(chunk: Buffer, _enc, done) { log.push(...chunk.toString('utf8').split('\n').filter(Boolean)); done(); } });
    h = await startDelegatedHarness({
      anvilArgs: ['--hardfork', 'cancun'],
      log: stream,
      tokens: async (url) => {
        token = await deployErc20(url, { name: 'Token C', symbol: 'TKC' });
        return [{ id: TOKEN_A, symbol: 'TKC', contract: token, decimals: 18 }];
      },
    });
  });

  after(async () => {
    await h?.stop();
  });

  it('token and native deposits swept by TOP_UP and SWEEP transfers (no SWEEP_BATCH, no DEPLOY), every unit at the hot wallet, the reason logged once', async () => {
    const { app, client } = h;
    const url = h.anvil.url;
    const tokens = [await h.newAddress(client, 'c-0'), await h.newAddress(client, 'c-1')];
    const native = await h.newAddress(client, 'c-n');
    for (const [i, a] of tokens.entries()) await mintErc20(url, token, a, 4n * ETHER + BigInt(i));
    const nativeAmount = ETHER / 50n;
    await sendNative(url, native, nativeAmount);
    await rechargesConfirmed(h, app.id, 3);
    await h.setPolicies(app.id, [{ tokenId: TOKEN_A, threshold: ETHER, nativeValue: 3000n * ETHER }, { tokenId: ETH_TOKEN_ID, threshold: ETHER / 1000n }]);
    const done = await h.settled(app.id, 3);
    expect(done.map((i) => [i.status, i.sweep_mode]), JSON.stringify(done)).to.deep.equal([['SUCCESS', 'DELEGATED'], ['SUCCESS', 'DELEGATED'], ['SUCCESS', 'DELEGATED']]);
    expect(await erc20Balance(url, token, h.hot)).to.equal(8n * ETHER + 1n);
    for (const a of tokens) expect(await erc20Balance(url, token, a)).to.equal(0n);
    expect(await h.balance(native)).to.equal(0n);
    const kinds = await transferKinds(h, app.id);
    expect(kinds, JSON.stringify(kinds)).to.deep.equal({ TOP_UP: 2, SWEEP: 3 });
    for (const a of [...tokens, native]) expect(await anvilRpc<string>(url, 'eth_getCode', [a, 'latest']), 'never delegated').to.equal('0x');
    expect(await h.q('SELECT address FROM evm_contracts')).to.deep.equal([]);
    const said = log.filter((l) => l.includes('delegated sweeps not possible here'));
    expect(said, log.slice(0, 5).join('\n')).to.have.length(1);
    expect(said[0]).to.match(/does not run delegated sweeps now/);
  });
});
