/**
 * Chain event subscriptions and custody outflows on a real EVM node (anvil): subscriptions on an
 * EOA and on a contract, IN and OUT, native and ERC-20, a token filter and a minimum, events sent
 * only once confirmed, a reorg before that sending nothing and one after it raising an alert,
 * 1,000 monitored addresses across 20 subscriptions, isolation between applications, bad input
 * on every operation, and TRANSFER: a deposit address's key used by the test itself. The
 * callbacks are checked field by field against the spec's `chain_event` table by a receiver that
 * verifies signatures from the spec.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { ANVIL_DEV_KEYS, anvilRpc, deployErc20, mine, mintErc20, sendNative, setAutomine, startAnvil, transferErc20, waitForReceipt, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, TEST_ACTOR, TEST_MNEMONIC, type TestDatabase } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectError, expectOk, pollUntil, sleep } from './support/expect';
import { tempDir } from './support/temp';
import { addressOfKey, eip55 as getAddress, randomAddress as fresh } from './support/evm-address';

const ETH_TEST_CHAIN_ID = 102;
const MIN_CONF = 3;
const TOKEN_ID = 10299;
const ETHER = 10n ** 18n;
const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** A contract whose code is one STOP: it accepts ether and tokens and does nothing. */
const SINK_INIT_CODE = '0x6001600c60003960016000f300';

const SUB = '/api/v1/wallet/chain-event/subscription';
const EVENTS = '/api/v1/wallet/chain-event';
const OUTFLOWS = '/api/v1/wallet/outflow';

/** The spec's `chain_event` fields ("Event chain_event"), exactly. */
const CHAIN_EVENT_FIELDS = ['event', 'id', 'subscriptionId', 'applicationId', 'chainId', 'chainTokenId', 'contractAddress', 'fromAddress', 'toAddress', 'amount',
  'txHash', 'blockHeight', 'directionMatched', 'addressNature'].sort();

const Code = {
  INVALID_PARAMETER: 1000001003, CHAIN_UNKNOWN: 1003001001, CHAIN_NOT_ENABLED: 1003001002, TOKEN_UNKNOWN: 1003001003,
  CHAIN_SUBSCRIPTION_NOT_FOUND: 1008001001, CHAIN_SUBSCRIPTION_CONFLICT: 1008001002, CHAIN_SUBSCRIPTION_LIMIT: 1008001003,
  SUBSCRIPTION_ADDRESS_INVALID: 1008001004, CHAIN_EVENTS_UNSUPPORTED: 1008001005, CHAIN_EVENT_NOT_FOUND: 1008002001, OUTFLOW_NOT_FOUND: 1008002002,
};

interface ChainEventCallback {
  event: string; id: number; subscriptionId: number; applicationId: number; chainId: number; chainTokenId: number; contractAddress: string;
  fromAddress: string; toAddress: string; amount: string; txHash: string; blockHeight: number; directionMatched: 'IN' | 'OUT'; addressNature: 'EOA' | 'CONTRACT';
}

describe('chain events on anvil (subscriptions, IN/OUT, confirmations, reorgs, TRANSFER)', function () {
  this.timeout(300_000);
  let anvil: AnvilDevnet;
  let token: string;
  let sink: string;
  let nativeId: number;
  let db: TestDatabase;
  let pool: Pool;
  let svc: WcsService;
  let app: CreatedApplication;
  let other: CreatedApplication;
  let client: SigningClient;
  let otherClient: SigningClient;
  const receiver = new CallbackReceiver();
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const tip = async () => BigInt(await anvilRpc<string>(anvil.url, 'eth_blockNumber'));
  const caughtUp = async () => {
    const t = await tip();
    const r = await pollUntil(async () => BigInt((await q<{ h: string | null }>('SELECT height::text AS h FROM scan_cursors WHERE chain_id = $1', [ETH_TEST_CHAIN_ID]))[0]?.h ?? '-1'), (h) => h >= t, 30_000);
    expect(r.ok, `scanner at ${r.result}, tip ${t}`).to.equal(true);
  };
  /** chain_event callbacks received for an application, verified against its secret. */
  const callbacks = (a: CreatedApplication): ChainEventCallback[] =>
    receiver.received
      .filter((r) => r.target === `/merchant/${a.id}/chain-event`)
      .map((r) => {
        expect(verifyCallback(r, a.apiKey, a.apiSecret)).to.equal(null);
        return JSON.parse(r.body.toString('utf8')) as ChainEventCallback;
      });
  const ofSub = (a: CreatedApplication, subscriptionId: number) => callbacks(a).filter((e) => e.subscriptionId === subscriptionId);
  const waitCallbacks = async (a: CreatedApplication, subscriptionId: number, n: number) => {
    const r = await pollUntil(async () => ofSub(a, subscriptionId), (l) => l.length >= n, 30_000, 100);
    expect(r.ok, `callbacks of subscription ${subscriptionId}: ${JSON.stringify(r.result)}`).to.equal(true);
    return r.result;
  };
  const subscribe = async (c: SigningClient, body: Record<string, unknown>) => expectOk(await c.post(`${SUB}/create`, body)) as { id: number; created: boolean; addresses: string[]; addressCount: number };

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    token = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
    await mintErc20(anvil.url, token, DEV_ACCOUNT, 1_000_000n * ETHER);
    const deployed = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, data: SINK_INIT_CODE }]);
    sink = getAddress((await waitForReceipt<{ contractAddress: string }>(anvil.url, deployed)).contractAddress);
    const configFile = path.join(tempDir('wcs-cev-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    svc = await WcsService.start(testConfig(db.url, {
      WCS_RPC_TEST_ETH: anvil.url, WCS_SCAN_POLL_MS: '50', WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1', WCS_CONFIG: configFile,
    }), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'watcher', environment: 'test', chains: ['ETH', 'BTC', 'XRP'] });
    other = await svc.storage.applications.create(TEST_ACTOR, { name: 'other', environment: 'test', chains: ['ETH'] });
    for (const a of [app, other]) {
      await svc.storage.applications.setCallback(TEST_ACTOR, a.id, 'CHAIN_EVENT', receiver.url(`/merchant/${a.id}/chain-event`));
      await svc.storage.applications.setCallback(TEST_ACTOR, a.id, 'TRANSFER', receiver.url(`/merchant/${a.id}/transfer`));
    }
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    otherClient = new SigningClient(svc.url, { apiKey: other.apiKey, apiSecret: other.apiSecret });
    nativeId = (await q<{ id: number }>('SELECT id FROM chain_tokens WHERE chain_id = $1 AND contract IS NULL', [ETH_TEST_CHAIN_ID]))[0]!.id;
    await caughtUp();
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await anvil?.stop();
  });

  it('refuses bad input on every operation with a clear code, and persists nothing', async () => {
    const addr = fresh();
    const bad: Array<[Record<string, unknown>, number, string]> = [
      [{ chainCode: 'ETH', addresses: [addr] }, Code.INVALID_PARAMETER, 'appSubscriptionNo'],
      [{ appSubscriptionNo: 'a', addresses: [addr] }, Code.INVALID_PARAMETER, 'chainCode'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH' }, Code.INVALID_PARAMETER, 'addresses'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH', addresses: [] }, Code.INVALID_PARAMETER, 'addresses'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH', addresses: 'x' }, Code.INVALID_PARAMETER, 'addresses'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH', addresses: Array.from({ length: 1001 }, fresh) }, Code.INVALID_PARAMETER, 'at most 1000'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH', addresses: [addr, '0x123'] }, Code.SUBSCRIPTION_ADDRESS_INVALID, 'addresses[1]'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH', addresses: [addr], direction: 'UP' }, Code.INVALID_PARAMETER, 'direction'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH', addresses: [addr], minAmount: '0' }, Code.INVALID_PARAMETER, 'minAmount'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH', addresses: [addr], minAmount: 5 }, Code.INVALID_PARAMETER, 'minAmount'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH', addresses: [addr], chainTokenIds: [99999] }, Code.TOKEN_UNKNOWN, '99999'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH', addresses: [addr], contractAddresses: [fresh()] }, Code.TOKEN_UNKNOWN, 'contract'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH', addresses: [addr], webhook: 'x' }, Code.INVALID_PARAMETER, 'webhook'],
      [{ appSubscriptionNo: 'a b', chainCode: 'ETH', addresses: [addr] }, Code.INVALID_PARAMETER, 'appSubscriptionNo'],
      [{ appSubscriptionNo: 'a', chainCode: 'DOGE', addresses: [addr] }, Code.CHAIN_UNKNOWN, 'DOGE'],
      [{ appSubscriptionNo: 'a', chainCode: 'SOL', addresses: [addr] }, Code.CHAIN_NOT_ENABLED, 'SOL'],
      [{ appSubscriptionNo: 'a', chainCode: 'BTC', addresses: ['tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx'] }, Code.CHAIN_EVENTS_UNSUPPORTED, 'no RPC endpoint'],
      [{ appSubscriptionNo: 'a', chainCode: 'XRP', addresses: ['rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh'] }, Code.CHAIN_EVENTS_UNSUPPORTED, 'XRP'],
    ];
    for (const [body, code, msg] of bad) expectError(await client.post(`${SUB}/create`, body), code === Code.INVALID_PARAMETER ? 400 : 200, code, msg);
    const made = await subscribe(client, { appSubscriptionNo: 'input-checks', chainCode: 'ETH', addresses: [addr] });
    const updates: Array<[Record<string, unknown>, number, string]> = [
      [{ id: made.id }, Code.INVALID_PARAMETER, 'names no change'],
      [{ id: made.id, status: 'DELETED' }, Code.INVALID_PARAMETER, 'status'],
      [{ id: made.id, removeAddresses: [addr] }, Code.INVALID_PARAMETER, 'without addresses'],
      [{ id: made.id, addAddresses: ['nope'] }, Code.SUBSCRIPTION_ADDRESS_INVALID, 'addAddresses[0]'],
      [{ id: made.id, minAmount: '-1' }, Code.INVALID_PARAMETER, 'minAmount'],
      [{ id: made.id, direction: 'IN', extra: 1 }, Code.INVALID_PARAMETER, 'extra'],
      [{ id: 987654, direction: 'IN' }, Code.CHAIN_SUBSCRIPTION_NOT_FOUND, ''],
    ];
    for (const [body, code, msg] of updates) expectError(await client.post(`${SUB}/update`, body), code === Code.INVALID_PARAMETER ? 400 : 200, code, msg);
    expectError(await client.post(`${SUB}/delete`, { id: 987654 }), 200, Code.CHAIN_SUBSCRIPTION_NOT_FOUND);
    expectError(await client.get(`${SUB}/get?id=abc`), 400, Code.INVALID_PARAMETER, 'id');
    expectError(await client.get(`${SUB}/list?pageSize=201`), 400, Code.INVALID_PARAMETER, 'pageSize');
    expectError(await client.get(`${SUB}/list?status=DELETED`), 400, Code.INVALID_PARAMETER, 'status');
    expectError(await client.get(`${EVENTS}/get?id=1`), 200, Code.CHAIN_EVENT_NOT_FOUND);
    expectError(await client.get(`${EVENTS}/list?direction=SIDEWAYS`), 400, Code.INVALID_PARAMETER, 'direction');
    expectError(await client.get(`${OUTFLOWS}/get?id=1`), 200, Code.OUTFLOW_NOT_FOUND);
    expectError(await client.get(`${OUTFLOWS}/list?addressKind=COLD`), 400, Code.INVALID_PARAMETER, 'addressKind');
    // nothing but the one valid subscription was written, and it is unchanged
    expect(await q('SELECT app_subscription_no, direction, min_amount, status FROM chain_subscriptions')).to.deep.equal([{ app_subscription_no: 'input-checks', direction: 'BOTH', min_amount: null, status: 'ACTIVE' }]);
    expect(await q('SELECT address FROM chain_subscription_addresses')).to.deep.equal([{ address: addr }]);
    // another application's subscription is "not found" everywhere
    expectError(await otherClient.get(`${SUB}/get?id=${made.id}`), 200, Code.CHAIN_SUBSCRIPTION_NOT_FOUND);
    expectError(await otherClient.post(`${SUB}/update`, { id: made.id, direction: 'IN' }), 200, Code.CHAIN_SUBSCRIPTION_NOT_FOUND);
    expectError(await otherClient.post(`${SUB}/delete`, { id: made.id }), 200, Code.CHAIN_SUBSCRIPTION_NOT_FOUND);
    expect((expectOk(await otherClient.get(`${SUB}/list`)) as { total: number }).total).to.equal(0);
    expect(expectOk(await client.post(`${SUB}/delete`, { id: made.id }))).to.deep.equal({ id: made.id, status: 'DELETED' });
    expectError(await client.get(`${SUB}/get?id=${made.id}`), 200, Code.CHAIN_SUBSCRIPTION_NOT_FOUND);
  });

  it('create is idempotent on appSubscriptionNo (same body: the same subscription); other settings under it: CHAIN_SUBSCRIPTION_CONFLICT', async () => {
    const a = fresh();
    const b = fresh();
    const first = await subscribe(client, { appSubscriptionNo: 'idem-1', chainCode: 'ETH', addresses: [a, b.toLowerCase()], direction: 'IN', minAmount: '1.50' });
    expect(first).to.include({ created: true, addressCount: 2, direction: 'IN', minAmount: '1.5', status: 'ACTIVE', chainCode: 'ETH', chainId: ETH_TEST_CHAIN_ID });
    expect(first.addresses).to.deep.equal([a, b].sort(), 'stored in canonical (EIP-55) form');
    const again = await subscribe(client, { appSubscriptionNo: 'idem-1', chainCode: 'ETH', addresses: [b, a], direction: 'IN', minAmount: '1.5' });
    expect(again).to.deep.include({ id: first.id, created: false });
    expectError(await client.post(`${SUB}/create`, { appSubscriptionNo: 'idem-1', chainCode: 'ETH', addresses: [a], direction: 'IN', minAmount: '1.5' }), 200, Code.CHAIN_SUBSCRIPTION_CONFLICT);
    expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM chain_subscriptions WHERE app_subscription_no = 'idem-1'`))[0]!.n).to.equal(1);
    // update: add and remove addresses, pause; list shows it
    const updated = expectOk(await client.post(`${SUB}/update`, { id: first.id, addAddresses: [fresh()], removeAddresses: [a], status: 'PAUSED', minAmount: null, chainTokenIds: [TOKEN_ID] }));
    expect(updated).to.deep.include({ id: first.id, addressCount: 2, status: 'PAUSED', minAmount: null, chainTokenIds: [TOKEN_ID] });
    const listed = expectOk(await client.get(`${SUB}/list?status=PAUSED`)) as { list: Array<{ id: number; addresses?: unknown }>; total: number };
    expect(listed.total).to.equal(1);
    expect(listed.list[0]!.id).to.equal(first.id);
    expect(listed.list[0]!.addresses).to.equal(undefined);
    expectOk(await client.post(`${SUB}/delete`, { id: first.id }));
    // the reference is free again once deleted
    expect((await subscribe(client, { appSubscriptionNo: 'idem-1', chainCode: 'ETH', addresses: [a] })).created).to.equal(true);
  });

  it('an EOA monitored both ways: native and ERC-20, IN and OUT, each event sent once confirmed, with every field of the spec', async () => {
    const key = ANVIL_DEV_KEYS[5]!;
    const m = addressOfKey(key);
    const sub = await subscribe(client, { appSubscriptionNo: 'eoa-both', chainCode: 'ETH', addresses: [m] });
    await caughtUp(); // the scanner has the new monitored address before the transfers
    const inNative = await sendNative(anvil.url, m, ETHER);
    const inToken = await transferErc20(anvil.url, token, m, 5n * ETHER);
    const outNative = await sendNative(anvil.url, sink, ETHER / 10n, { fromPrivateKey: key });
    await mintErc20(anvil.url, token, m, 10n * ETHER);
    const outToken = await transferErc20(anvil.url, token, sink, 2n * ETHER, { fromPrivateKey: key });
    await caughtUp();
    // recorded, PENDING, nothing sent before the confirmations
    const pending = expectOk(await client.get(`${EVENTS}/list?subscriptionId=${sub.id}&status=PENDING`)) as { total: number };
    expect(pending.total).to.be.greaterThan(0);
    await sleep(300);
    const sentEarly = ofSub(app, sub.id).filter((e) => e.txHash === outToken);
    expect(sentEarly, 'the last transfer is one block deep: nothing sent yet').to.deep.equal([]);
    await mine(anvil.url, MIN_CONF);
    const got = await waitCallbacks(app, sub.id, 5); // + the mint to m (IN, from the zero address)
    const mintTx = got.find((e) => e.fromAddress === '0x0000000000000000000000000000000000000000');
    expect(mintTx, 'the mint is an IN transfer from the zero address').to.not.equal(undefined);
    const byTx = (h: string) => got.filter((e) => e.txHash === h);
    for (const e of got) {
      expect(Object.keys(e).sort()).to.deep.equal(CHAIN_EVENT_FIELDS);
      expect(e).to.include({ event: 'chain_event', subscriptionId: sub.id, applicationId: app.id, chainId: ETH_TEST_CHAIN_ID });
      expect(e.id).to.be.a('number');
      expect(e.blockHeight).to.be.a('number');
    }
    const receipt = await waitForReceipt<{ blockNumber: string }>(anvil.url, inNative);
    expect(byTx(inNative)).to.deep.equal([{ ...byTx(inNative)[0]!, chainTokenId: nativeId, contractAddress: '', fromAddress: DEV_ACCOUNT, toAddress: m, amount: '1', directionMatched: 'IN', addressNature: 'EOA', blockHeight: Number(BigInt(receipt.blockNumber)) }]);
    expect(byTx(inToken)).to.deep.equal([{ ...byTx(inToken)[0]!, chainTokenId: TOKEN_ID, contractAddress: getAddress(token), fromAddress: DEV_ACCOUNT, toAddress: m, amount: '5', directionMatched: 'IN', addressNature: 'EOA' }]);
    expect(byTx(outNative)).to.deep.equal([{ ...byTx(outNative)[0]!, chainTokenId: nativeId, contractAddress: '', fromAddress: m, toAddress: sink, amount: '0.1', directionMatched: 'OUT', addressNature: 'CONTRACT' }]);
    expect(byTx(outToken)).to.deep.equal([{ ...byTx(outToken)[0]!, chainTokenId: TOKEN_ID, contractAddress: getAddress(token), fromAddress: m, toAddress: sink, amount: '2', directionMatched: 'OUT', addressNature: 'CONTRACT' }]);
    // one callback per event, and the records agree
    await mine(anvil.url, 2);
    await caughtUp();
    await sleep(300);
    expect(ofSub(app, sub.id)).to.have.length(5);
    const rec = expectOk(await client.get(`${EVENTS}/get?id=${byTx(outNative)[0]!.id}`));
    expect(rec).to.include({ status: 'CONFIRMED', directionMatched: 'OUT', monitoredAddress: m, amount: '0.1', chainCode: 'ETH', tokenSymbol: 'ETH', addressNature: 'CONTRACT', minConfirmations: MIN_CONF });
    expect(rec.callbackTaskId).to.be.a('number');
  });

  it('a contract monitored IN with a token filter and a minimum: only listed-token transfers at or above the minimum', async () => {
    const sub = await subscribe(client, { appSubscriptionNo: 'contract-in', chainCode: 'ETH', addresses: [sink], direction: 'IN', chainTokenIds: [TOKEN_ID], minAmount: '1' });
    await caughtUp();
    const below = await transferErc20(anvil.url, token, sink, ETHER / 2n);
    const native = await sendNative(anvil.url, sink, 3n * ETHER);
    const at = await transferErc20(anvil.url, token, sink, ETHER);
    const above = await transferErc20(anvil.url, token, sink, 3n * ETHER);
    await mine(anvil.url, MIN_CONF);
    const got = await waitCallbacks(app, sub.id, 2);
    await mine(anvil.url, 1);
    await caughtUp();
    await sleep(300);
    expect(ofSub(app, sub.id).map((e) => [e.txHash, e.amount, e.directionMatched, e.addressNature]).sort()).to.deep.equal([[at, '1', 'IN', 'EOA'], [above, '3', 'IN', 'EOA']].sort());
    expect(got.some((e) => e.txHash === below || e.txHash === native)).to.equal(false);
  });

  it('direction IN sees no outgoing transfer and OUT no incoming one', async () => {
    const key = ANVIL_DEV_KEYS[6]!;
    const m = addressOfKey(key);
    const inOnly = await subscribe(client, { appSubscriptionNo: 'in-only', chainCode: 'ETH', addresses: [m], direction: 'IN' });
    const outOnly = await subscribe(client, { appSubscriptionNo: 'out-only', chainCode: 'ETH', addresses: [m], direction: 'OUT' });
    await caughtUp();
    const incoming = await sendNative(anvil.url, m, ETHER);
    const outgoing = await sendNative(anvil.url, fresh(), ETHER / 4n, { fromPrivateKey: key });
    await mine(anvil.url, MIN_CONF);
    await waitCallbacks(app, inOnly.id, 1);
    await waitCallbacks(app, outOnly.id, 1);
    await mine(anvil.url, 1);
    await caughtUp();
    await sleep(300);
    expect(ofSub(app, inOnly.id).map((e) => [e.txHash, e.directionMatched])).to.deep.equal([[incoming, 'IN']]);
    expect(ofSub(app, outOnly.id).map((e) => [e.txHash, e.directionMatched])).to.deep.equal([[outgoing, 'OUT']]);
  });

  it('a reorg before the confirmations sends nothing (the event is DROPPED); one after them raises an operator alert and changes nothing', async () => {
    const m = fresh();
    const sub = await subscribe(client, { appSubscriptionNo: 'reorg', chainCode: 'ETH', addresses: [m], direction: 'IN' });
    await caughtUp();
    const dropped = await sendNative(anvil.url, m, ETHER / 3n);
    const seen = await pollUntil(async () => (expectOk(await client.get(`${EVENTS}/list?subscriptionId=${sub.id}`)) as { list: Array<{ txHash: string; status: string }> }).list,
      (l) => l.some((e) => e.txHash === dropped && e.status === 'PENDING'), 30_000, 100);
    expect(seen.ok, JSON.stringify(seen.result)).to.equal(true);
    await anvilRpc(anvil.url, 'anvil_reorg', [1, []]);
    await mine(anvil.url, MIN_CONF + 1);
    await caughtUp();
    await sleep(500);
    expect(ofSub(app, sub.id), 'nothing sent for the dropped transfer').to.deep.equal([]);
    const rec = (expectOk(await client.get(`${EVENTS}/list?subscriptionId=${sub.id}`)) as { list: Array<{ txHash: string; status: string }> }).list;
    expect(rec.map((e) => [e.txHash, e.status])).to.deep.equal([[dropped, 'DROPPED']]);
    // confirmed and sent, then a reorg deeper than the safe depth removes its block
    const deep = await sendNative(anvil.url, m, ETHER / 5n);
    await mine(anvil.url, MIN_CONF);
    const sent = await waitCallbacks(app, sub.id, 1);
    expect(sent.map((e) => e.txHash)).to.deep.equal([deep]);
    await caughtUp();
    const depth = Number((await tip()) - BigInt(sent[0]!.blockHeight)) + 1;
    await anvilRpc(anvil.url, 'anvil_reorg', [depth, []]);
    const alert = await pollUntil(
      () => q<{ details: { chainEvents: Array<{ id: string }> } }>(`SELECT details FROM operator_alerts WHERE kind = 'REORG_CONFIRMED_CHAIN_EVENT' ORDER BY id DESC LIMIT 1`),
      (rows) => rows.length === 1 && rows[0]!.details.chainEvents.some((e) => Number(e.id) === sent[0]!.id), 30_000, 100,
    );
    expect(alert.ok, JSON.stringify(alert.result)).to.equal(true);
    await mine(anvil.url, MIN_CONF + 1);
    await caughtUp();
    expect(expectOk(await client.get(`${EVENTS}/get?id=${sent[0]!.id}`))).to.include({ status: 'CONFIRMED', txHash: deep });
    expect(ofSub(app, sub.id)).to.have.length(1);
  });

  it('1,000 monitored addresses across 20 subscriptions: a transfer to one address of each reaches its own subscription only', async function () {
    const subs: Array<{ id: number; addresses: string[] }> = [];
    for (let i = 0; i < 20; i++) {
      const addresses = Array.from({ length: 50 }, fresh);
      const s = await subscribe(client, { appSubscriptionNo: `bulk-${i}`, chainCode: 'ETH', addresses, direction: 'IN' });
      expect(s.addressCount).to.equal(50);
      subs.push({ id: s.id, addresses });
    }
    expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM chain_subscription_addresses a JOIN chain_subscriptions s ON s.id = a.subscription_id WHERE s.app_subscription_no LIKE 'bulk-%'`))[0]!.n).to.equal(1000);
    await caughtUp();
    await setAutomine(anvil.url, false);
    const sent = new Map<number, string>();
    try {
      for (const [i, s] of subs.entries()) {
        sent.set(s.id, await sendNative(anvil.url, s.addresses[(i * 7) % 50]!, BigInt(i + 1) * 10n ** 15n, { wait: false }));
      }
      await mine(anvil.url, 1);
    } finally {
      await setAutomine(anvil.url, true);
    }
    await mine(anvil.url, MIN_CONF);
    for (const [i, s] of subs.entries()) {
      const got = await waitCallbacks(app, s.id, 1);
      expect(got.map((e) => [e.txHash, e.toAddress, e.amount])).to.deep.equal([[sent.get(s.id), s.addresses[(i * 7) % 50], (Number(i + 1) / 1000).toString()]]);
    }
  });

  it('an event already confirmed when first seen (a catch-up) is recorded CONFIRMED with its callback in one transaction, sent once', async () => {
    const m = fresh();
    const sub = await subscribe(client, { appSubscriptionNo: 'catch-up', chainCode: 'ETH', addresses: [m], direction: 'IN' });
    await caughtUp();
    await setAutomine(anvil.url, false);
    let tx: string;
    try {
      tx = await sendNative(anvil.url, m, ETHER / 7n, { wait: false });
      await mine(anvil.url, MIN_CONF + 2); // one anvil_mine: the scanner first sees the transfer 5 blocks deep
    } finally {
      await setAutomine(anvil.url, true);
    }
    const got = await waitCallbacks(app, sub.id, 1);
    expect(got.map((e) => e.txHash)).to.deep.equal([tx]);
    const [row] = await q<{ status: string; same: boolean }>('SELECT status, confirmed_at = created_at AS same FROM chain_events WHERE subscription_id = $1', [sub.id]);
    expect(row, 'confirmed in the transaction that recorded it').to.deep.equal({ status: 'CONFIRMED', same: true });
    await mine(anvil.url, 2);
    await caughtUp();
    await sleep(300);
    expect(ofSub(app, sub.id)).to.have.length(1);
  });

  it('isolation: two applications monitoring one address each get their own event; neither sees the other\'s records', async () => {
    const m = fresh();
    const mine1 = await subscribe(client, { appSubscriptionNo: 'shared', chainCode: 'ETH', addresses: [m], direction: 'IN' });
    const theirs = await subscribe(otherClient, { appSubscriptionNo: 'shared', chainCode: 'ETH', addresses: [m], direction: 'IN' });
    await caughtUp();
    const tx = await sendNative(anvil.url, m, ETHER / 8n);
    await mine(anvil.url, MIN_CONF);
    const a = await waitCallbacks(app, mine1.id, 1);
    const b = await waitCallbacks(other, theirs.id, 1);
    expect(a[0]).to.include({ txHash: tx, applicationId: app.id });
    expect(b[0]).to.include({ txHash: tx, applicationId: other.id });
    expect(a[0]!.id).to.not.equal(b[0]!.id);
    expectError(await otherClient.get(`${EVENTS}/get?id=${a[0]!.id}`), 200, Code.CHAIN_EVENT_NOT_FOUND);
    expectError(await otherClient.get(`${SUB}/get?id=${mine1.id}`), 200, Code.CHAIN_SUBSCRIPTION_NOT_FOUND);
    const theirList = expectOk(await otherClient.get(`${EVENTS}/list`)) as { list: Array<{ applicationId: number }> };
    expect(theirList.list.every((e) => e.applicationId === other.id)).to.equal(true);
    expect(callbacks(other).every((e) => e.applicationId === other.id)).to.equal(true);
  });

  it('TRANSFER: a deposit address\'s key used outside the service gives one transfer callback, an operator alert and a record', async () => {
    const owner = await svc.storage.applications.create(TEST_ACTOR, { name: 'custody', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, owner.id, 'TRANSFER', receiver.url(`/merchant/${owner.id}/transfer`));
    const c = new SigningClient(svc.url, { apiKey: owner.apiKey, apiSecret: owner.apiSecret });
    const deposit = (expectOk(await c.post('/api/v1/wallet/address/create', { chainCode: 'ETH', externalUserId: 'leaky' })) as { address: string }).address;
    // the key the service holds for this address (BIP-44, account = application id, index 0), derived by the test itself
    const node = HDKey.fromMasterSeed(mnemonicToSeedSync(TEST_MNEMONIC)).derive(`m/44'/60'/${owner.id}'/0/0`);
    const key = '0x' + Buffer.from(node.privateKey!).toString('hex');
    expect(addressOfKey(key)).to.equal(deposit);
    await caughtUp();
    await sendNative(anvil.url, deposit, ETHER);
    const thief = fresh();
    const stolen = await sendNative(anvil.url, thief, ETHER / 2n, { fromPrivateKey: key });
    await caughtUp();
    const got = await pollUntil(async () => receiver.received.filter((r) => r.target === `/merchant/${owner.id}/transfer`), (l) => l.length >= 1, 30_000, 100);
    expect(got.ok).to.equal(true);
    await mine(anvil.url, MIN_CONF + 1);
    await caughtUp();
    await sleep(300);
    const all = receiver.received.filter((r) => r.target === `/merchant/${owner.id}/transfer`);
    expect(all).to.have.length(1);
    expect(verifyCallback(all[0]!, owner.apiKey, owner.apiSecret)).to.equal(null);
    const ev = JSON.parse(all[0]!.body.toString('utf8'));
    expect(ev).to.deep.equal({
      event: 'transfer', id: ev.id, applicationId: owner.id, chainId: ETH_TEST_CHAIN_ID, chainTokenId: nativeId, contractAddress: '', addressKind: 'DEPOSIT',
      fromAddress: deposit, externalUserId: 'leaky', toAddress: thief, amount: '0.5', txHash: stolen, blockHeight: ev.blockHeight,
    });
    const alerts = await q<{ details: { outflowId: number } }>(`SELECT details FROM operator_alerts WHERE kind = 'UNEXPECTED_OUTFLOW'`);
    expect(alerts.map((a) => a.details.outflowId)).to.deep.equal([ev.id]);
    expect(expectOk(await c.get(`${OUTFLOWS}/get?id=${ev.id}`))).to.include({ addressKind: 'DEPOSIT', txHash: stolen, amount: '0.5', fromAddress: deposit, toAddress: thief });
    expect((expectOk(await c.get(`${OUTFLOWS}/list`)) as { total: number }).total).to.equal(1);
    expectError(await client.get(`${OUTFLOWS}/get?id=${ev.id}`), 200, Code.OUTFLOW_NOT_FOUND);
    // the deposit into it was credited as usual, and nothing else was reported
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM custody_outflows'))[0]!.n).to.equal(1);
  });
});
