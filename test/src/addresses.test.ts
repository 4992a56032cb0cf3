import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import type { CreatedApplication } from '@wcs/server';
import { startTestService, TEST_MNEMONIC, type TestService, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { Codes, expectError, expectOk, pollUntil } from './support/expect';

const CREATE = '/api/v1/wallet/address/create';
const BATCH = '/api/v1/wallet/address/batch-create';
const LIST = '/api/v1/wallet/address/list-by-user';
const VALIDATE = '/api/v1/wallet/address/validate';

interface Address { id: number; chainCode: string; address: string; memo: string | null; addressType: string; externalUserId: string; status: string }

// Independent oracle: Trust Wallet's wallet-core (C++ compiled to WASM) derives the same paths.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { initWasm } = require('@trustwallet/wallet-core');

describe('deposit addresses through the signed API (real Postgres, software key store)', function () {
  let svc: TestService;
  let tmp: string;
  let client: (a: CreatedApplication) => SigningClient;
  let count: (sql: string, bind?: unknown[]) => Promise<number>;

  before(async function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-addr-'));
    const cfg = path.join(tmp, 'chains.json');
    // EOS deposit accounts are created on chain by the operator and configured, not derived.
    fs.writeFileSync(cfg, JSON.stringify({
      chains: [
        { id: 108, code: 'EOS', name: 'EOS Jungle Testnet', family: 'eos', environment: 'test', network: 'jungle4', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, evmChainId: null, options: { depositAccount: 'wcsdeposit11' } },
        { id: 8, code: 'EOS', name: 'EOS', family: 'eos', environment: 'live', network: 'mainnet', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, evmChainId: null, options: { depositAccount: 'wcsdeposit11' } },
      ],
    }));
    svc = await startTestService({ env: { WCS_CONFIG: cfg } });
    client = (a) => new SigningClient(svc.url, { apiKey: a.apiKey, apiSecret: a.apiSecret });
    count = async (sql, bind = []) => {
      const [rows] = await svc.service.storage.database.sequelize.query(sql, { bind });
      return Number((rows as Array<{ n: string }>)[0]!.n);
    };
  });
  after(async function () {
    if (svc) await svc.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('50 concurrent identical creates return one id and one address, and use one key index', async function () {
    const app = await svc.createApp({ chains: ['ETH', 'BSC', 'POLYGON'] });
    const c = client(app);
    const results = await Promise.all(Array.from({ length: 50 }, () => c.post(CREATE, { chainCode: 'ETH', externalUserId: 'race-user' })));
    const records: Address[] = results.map(expectOk);
    expect(new Set(records.map((r) => r.id)).size).to.equal(1);
    expect(new Set(records.map((r) => r.address)).size).to.equal(1);
    expect(await count(`SELECT count(*) AS n FROM user_keys WHERE application_id = $1`, [app.id])).to.equal(1);
    expect(await count(`SELECT count(*) AS n FROM addresses WHERE application_id = $1`, [app.id])).to.equal(3); // ETH, BSC, POLYGON
    // 30 different users at once: 30 distinct indices, none used twice, none skipped
    await Promise.all(Array.from({ length: 30 }, (_, i) => c.post(CREATE, { chainCode: 'BSC', externalUserId: `many-${i}` })).map(async (p) => expectOk(await p)));
    const [rows] = await svc.service.storage.database.sequelize.query(`SELECT key_index FROM user_keys WHERE application_id = $1 ORDER BY key_index`, { bind: [app.id] });
    expect((rows as Array<{ key_index: string }>).map((r) => Number(r.key_index))).to.deep.equal(Array.from({ length: 31 }, (_, i) => i));
  });

  it('derives the same addresses as an independent implementation (wallet-core) for the key store mnemonic', async function () {
    const core = await initWasm();
    const wallet = core.HDWallet.createWithMnemonic(TEST_MNEMONIC, '');
    const app = await svc.createApp({ chains: ['ETH', 'BTC', 'SOL', 'XRP', 'XLM'] });
    const c = client(app);
    const a = app.id;
    const eth: Address = expectOk(await c.post(CREATE, { chainCode: 'ETH', externalUserId: 'oracle-0' }));
    const eth1: Address = expectOk(await c.post(CREATE, { chainCode: 'ETH', externalUserId: 'oracle-1' }));
    const oracleAddress = (coin: unknown, p: string, kind: 'secp' | 'secpU' | 'ed') => {
      const key = wallet.getKey(coin, p);
      const pub = kind === 'ed' ? key.getPublicKeyEd25519() : key.getPublicKeySecp256k1(kind === 'secp');
      return core.AnyAddress.createWithPublicKey(pub, coin).description();
    };
    expect(eth.address).to.equal(oracleAddress(core.CoinType.ethereum, `m/44'/60'/${a}'/0/0`, 'secpU'));
    expect(eth1.address).to.equal(oracleAddress(core.CoinType.ethereum, `m/44'/60'/${a}'/0/1`, 'secpU'));
    const sol: Address = expectOk(await c.post(CREATE, { chainCode: 'SOL', externalUserId: 'oracle-0' }));
    expect(sol.address).to.equal(oracleAddress(core.CoinType.solana, `m/44'/501'/${a}'/0'`, 'ed'));
    const xrp: Address = expectOk(await c.post(CREATE, { chainCode: 'XRP', externalUserId: 'oracle-0' }));
    expect(xrp.address).to.equal(oracleAddress(core.CoinType.xrp, `m/44'/144'/${a}'/0/0`, 'secp'));
    const xlm: Address = expectOk(await c.post(CREATE, { chainCode: 'XLM', externalUserId: 'oracle-0' }));
    expect(xlm.address).to.equal(oracleAddress(core.CoinType.stellar, `m/44'/148'/${a}'/0'`, 'ed'));
    // BTC test network: wallet-core encodes the same key with the testnet hrp.
    const btc: Address = expectOk(await c.post(CREATE, { chainCode: 'BTC', externalUserId: 'oracle-0' }));
    const btcKey = wallet.getKey(core.CoinType.bitcoin, `m/84'/1'/${a}'/0/0`);
    expect(btc.address).to.equal(core.AnyAddress.createBech32WithPublicKey(btcKey.getPublicKeySecp256k1(true), core.CoinType.bitcoin, 'tb').description());
    for (const r of [eth, sol, btc]) expect(r.memo).to.equal(null);
  });

  it('EVM namespace rule: one address on every enabled EVM chain; later chains join on the next create', async function () {
    const app = await svc.createApp({ chains: ['ETH', 'BSC'] });
    const c = client(app);
    const eth: Address = expectOk(await c.post(CREATE, { chainCode: 'ETH', externalUserId: 'ns-user' }));
    expect(eth).to.include({ chainCode: 'ETH', addressType: 'USER', externalUserId: 'ns-user', status: 'ACTIVE', memo: null });
    expect(eth.address).to.match(/^0x[0-9a-fA-F]{40}$/).and.not.equal(eth.address.toLowerCase());
    const listed: Address[] = expectOk(await c.get(`${LIST}?externalUserId=ns-user`));
    expect(listed.map((r) => r.chainCode)).to.deep.equal(['ETH', 'BSC']);
    expect(new Set(listed.map((r) => r.address))).to.deep.equal(new Set([eth.address]));
    const bsc: Address = expectOk(await c.post(CREATE, { chainCode: 'BSC', externalUserId: 'ns-user' }));
    expect(bsc).to.deep.equal(listed.find((r) => r.chainCode === 'BSC'));

    await svc.service.storage.applications.setChains(TEST_ACTOR, app.id, ['ETH', 'BSC', 'POLYGON']);
    const { ok, result } = await pollUntil(() => c.post(CREATE, { chainCode: 'POLYGON', externalUserId: 'ns-user' }), (r) => r.json?.code === 0, 3000);
    expect(ok, result.text).to.equal(true);
    expect(result.json.data.address).to.equal(eth.address);
    expect(expectOk(await c.post(CREATE, { chainCode: 'ETH', externalUserId: 'ns-user' }))).to.deep.equal(eth);
    const after: Address[] = expectOk(await c.get(`${LIST}?externalUserId=ns-user`));
    expect(after.map((r) => `${r.chainCode}:${r.address}`)).to.deep.equal(['ETH', 'BSC', 'POLYGON'].map((x) => `${x}:${eth.address}`));
    expect(await count(`SELECT count(*) AS n FROM user_keys WHERE application_id = $1`, [app.id])).to.equal(1);
    const only: Address[] = expectOk(await c.get(`${LIST}?externalUserId=ns-user&chainCode=BSC`));
    expect(only.map((r) => r.chainCode)).to.deep.equal(['BSC']);
  });

  it('memo chains: one shared address per application and chain, a unique memo per user', async function () {
    const app = await svc.createApp({ chains: ['XRP', 'XLM', 'EOS'] });
    const other = await svc.createApp({ chains: ['XRP', 'EOS'] });
    const c = client(app);
    for (const chainCode of ['XRP', 'XLM', 'EOS']) {
      const users = ['m-a', 'm-b', 'm-c'];
      const recs: Address[] = [];
      for (const u of users) recs.push(expectOk(await c.post(CREATE, { chainCode, externalUserId: u })));
      expect(new Set(recs.map((r) => r.address)).size, chainCode).to.equal(1);
      expect(new Set(recs.map((r) => r.memo)).size, chainCode).to.equal(3);
      for (const r of recs) expect(r.memo, chainCode).to.match(/^[1-9][0-9]*$/);
      expect(expectOk(await c.post(CREATE, { chainCode, externalUserId: 'm-b' }))).to.deep.equal(recs[1]);
    }
    const xrpA: Address = expectOk(await c.post(CREATE, { chainCode: 'XRP', externalUserId: 'm-a' }));
    const xrpOther: Address = expectOk(await client(other).post(CREATE, { chainCode: 'XRP', externalUserId: 'm-a' }));
    expect(xrpOther.address).to.not.equal(xrpA.address); // each application has its own XRP account
    // EOS: both applications share the configured account, so memos stay unique across them
    const eosA: Address = expectOk(await c.post(CREATE, { chainCode: 'EOS', externalUserId: 'm-a' }));
    const eosOther: Address = expectOk(await client(other).post(CREATE, { chainCode: 'EOS', externalUserId: 'm-a' }));
    expect(eosOther.address).to.equal('wcsdeposit11');
    expect(eosOther.address).to.equal(eosA.address);
    expect(eosOther.memo).to.not.equal(eosA.memo);
    // concurrency: 20 users at once get 20 distinct tags
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => c.post(CREATE, { chainCode: 'XRP', externalUserId: `tag-${i}` })));
    expect(new Set(many.map((r) => expectOk(r).memo)).size).to.equal(20);
  });

  it('isolation: another application\'s user id never yields this application\'s addresses', async function () {
    const a = await svc.createApp({ chains: ['ETH', 'SOL'] });
    const b = await svc.createApp({ chains: ['ETH', 'SOL'] });
    const ra: Address = expectOk(await client(a).post(CREATE, { chainCode: 'ETH', externalUserId: 'alice' }));
    const rb: Address = expectOk(await client(b).post(CREATE, { chainCode: 'ETH', externalUserId: 'alice' }));
    expect(ra.address).to.not.equal(rb.address);
    expect(ra.id).to.not.equal(rb.id);
    const sa: Address = expectOk(await client(a).post(CREATE, { chainCode: 'SOL', externalUserId: 'alice' }));
    const sb: Address = expectOk(await client(b).post(CREATE, { chainCode: 'SOL', externalUserId: 'alice' }));
    expect(sa.address).to.not.equal(sb.address);
    const la: Address[] = expectOk(await client(a).get(`${LIST}?externalUserId=alice`));
    expect(la.map((r) => r.id).sort()).to.deep.equal([ra.id, sa.id].sort());
    expectOk(await client(b).post(CREATE, { chainCode: 'ETH', externalUserId: 'only-b' }));
    expect(expectOk(await client(a).get(`${LIST}?externalUserId=only-b`))).to.deep.equal([]);
  });

  it('batch-create: per-entry results in request order; bad entries fail alone and persist nothing', async function () {
    const app = await svc.createApp({ chains: ['ETH', 'BTC', 'XRP'] });
    const c = client(app);
    const res = expectOk(await c.post(BATCH, { items: [
      { chainCode: 'ETH', externalUserId: 'b1' },
      { chainCode: 'DOGE', externalUserId: 'b1' },
      { chainCode: 'SOL', externalUserId: 'b1' },
      { chainCode: 'BTC', externalUserId: 'bad user' },
      { chainCode: 'BTC', externalUserId: 42 },
      { chainCode: 'XRP', externalUserId: 'b1', extra: true },
      'not an object',
      { chainCode: 'XRP', externalUserId: 'b1' },
      { chainCode: 'ETH', externalUserId: 'b1' },
    ] }));
    expect(res).to.include({ total: 9, successCount: 3, failedCount: 6 });
    const items = res.items as Array<{ success: boolean; errorCode: number | null; address: Address | null; chainCode: string | null; externalUserId: string | null }>;
    expect(items.map((i) => i.success)).to.deep.equal([true, false, false, false, false, false, false, true, true]);
    expect(items.map((i) => i.errorCode)).to.deep.equal([null, Codes.CHAIN_UNKNOWN, Codes.CHAIN_NOT_ENABLED, Codes.INVALID_PARAMETER, Codes.INVALID_PARAMETER, Codes.INVALID_PARAMETER, Codes.INVALID_PARAMETER, null, null]);
    expect(items[0]!.address).to.deep.equal(items[8]!.address); // idempotent per entry
    expect(items[4]).to.include({ chainCode: 'BTC', externalUserId: null });
    for (const i of items) if (!i.success) expect(i.address).to.equal(null);
    expect(await count(`SELECT count(*) AS n FROM addresses WHERE application_id = $1`, [app.id])).to.equal(2); // ETH + XRP for b1

    const before = await count(`SELECT count(*) AS n FROM addresses`);
    for (const body of [{}, { items: [] }, { items: 'x' }, { items: Array.from({ length: 101 }, (_, i) => ({ chainCode: 'ETH', externalUserId: `x${i}` })) }, { items: [{ chainCode: 'ETH', externalUserId: 'y' }], more: 1 }, []]) {
      expectError(await c.post(BATCH, body), 400, Codes.INVALID_PARAMETER);
    }
    expect(await count(`SELECT count(*) AS n FROM addresses`)).to.equal(before);
    // exactly 100 is accepted
    const full = expectOk(await c.post(BATCH, { items: Array.from({ length: 100 }, (_, i) => ({ chainCode: 'BTC', externalUserId: `full-${i}` })) }));
    expect(full).to.include({ total: 100, successCount: 100, failedCount: 0 });
  });

  it('bad input on create and list gets a clear code and persists nothing', async function () {
    const app = await svc.createApp({ chains: ['ETH'] });
    const c = client(app);
    const before = await count(`SELECT count(*) AS n FROM addresses`);
    const cases: Array<[unknown, number, number]> = [
      [{ chainCode: 'NOPE', externalUserId: 'u' }, 200, Codes.CHAIN_UNKNOWN],
      [{ chainCode: 'BTC', externalUserId: 'u' }, 200, Codes.CHAIN_NOT_ENABLED],
      [{ chainCode: 'eth', externalUserId: 'u' }, 400, Codes.INVALID_PARAMETER],
      [{ chainCode: 'ETH', externalUserId: '' }, 400, Codes.INVALID_PARAMETER],
      [{ chainCode: 'ETH', externalUserId: 'x'.repeat(65) }, 400, Codes.INVALID_PARAMETER],
      [{ chainCode: 'ETH', externalUserId: 'has space' }, 400, Codes.INVALID_PARAMETER],
      [{ chainCode: 'ETH', externalUserId: 'ünicode' }, 400, Codes.INVALID_PARAMETER],
      [{ chainCode: 'ETH', externalUserId: 123 }, 400, Codes.INVALID_PARAMETER],
      [{ chainCode: ['ETH'], externalUserId: 'u' }, 400, Codes.INVALID_PARAMETER],
      [{ chainCode: 'ETH' }, 400, Codes.INVALID_PARAMETER],
      [{ chainCode: 'ETH', externalUserId: 'u', memo: 'x' }, 400, Codes.INVALID_PARAMETER],
      [[{ chainCode: 'ETH', externalUserId: 'u' }], 400, Codes.INVALID_PARAMETER],
      ['"ETH"', 400, Codes.INVALID_PARAMETER], // a JSON string, not an object
    ];
    for (const [body, status, code] of cases) expectError(await c.post(CREATE, body), status, code);
    expect(await count(`SELECT count(*) AS n FROM addresses`)).to.equal(before);
    expect(expectOk(await c.post(CREATE, { chainCode: 'ETH', externalUserId: 'x'.repeat(64) })).externalUserId).to.have.length(64);
    expectError(await c.get(LIST), 400, Codes.INVALID_PARAMETER);
    expectError(await c.get(`${LIST}?externalUserId=a%20b`), 400, Codes.INVALID_PARAMETER);
    expectError(await c.get(`${LIST}?externalUserId=u&chainCode=NOPE`), 200, Codes.CHAIN_UNKNOWN);
    expectError(await c.get(`${LIST}?externalUserId=u&page=2`), 400, Codes.INVALID_PARAMETER);
  });

  it('a chain missing a required adapter setting answers CHAIN_NOT_CONFIGURED (enabled before the setting was removed)', async function () {
    const plain = await startTestService();
    try {
      // an application cannot enable it (wcs app create / set-chains refuse) ...
      try {
        await plain.createApp({ chains: ['EOS'] });
        expect.fail('EOS without depositAccount enabled');
      } catch (e) {
        expect((e as { code?: number }).code, String(e)).to.equal(Codes.CHAIN_NOT_CONFIGURED);
      }
      // ... but one enabled while the chain had it keeps it when the setting is gone
      const app = await plain.createApp({ chains: ['ETH'] });
      await plain.service.storage.database.sequelize.query(`UPDATE applications SET enabled_chains = '{EOS}' WHERE id = $1`, { bind: [app.id] });
      const c = new SigningClient(plain.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
      expectError(await c.post(CREATE, { chainCode: 'EOS', externalUserId: 'u' }), 200, Codes.CHAIN_NOT_CONFIGURED, /depositAccount/);
      const [rows] = await plain.service.storage.database.sequelize.query(`SELECT count(*) AS n FROM addresses`);
      expect(Number((rows as Array<{ n: string }>)[0]!.n)).to.equal(0);
    } finally {
      await plain.stop();
    }
  });

  it('validate: canonical forms, and the rejections a withdrawal must not pass', async function () {
    const live = await svc.createApp({ environment: 'live', chains: ['ETH', 'BTC', 'XRP', 'EOS'] });
    const test = await svc.createApp({ environment: 'test', chains: ['BTC', 'XRP'] });
    const v = async (a: CreatedApplication, chainCode: string, address: string, memo?: string) =>
      expectOk(await client(a).post(VALIDATE, memo === undefined ? { chainCode, address } : { chainCode, address, memo }));
    // EIP-55 (examples from EIP-55 itself)
    const ok = await v(live, 'ETH', '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed');
    expect(ok).to.deep.equal({ chainCode: 'ETH', address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', valid: true, normalizedAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', memo: null, memoRequired: false, reason: null });
    const bad = await v(live, 'ETH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD');
    expect(bad).to.include({ valid: false, normalizedAddress: null });
    expect(bad.reason).to.match(/checksum/i);
    // BTC: BIP-84 vector on mainnet; a testnet address on mainnet and the reverse; bad checksum
    expect(await v(live, 'BTC', 'BC1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8Z306FYU')).to.include({ valid: true, normalizedAddress: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' });
    expect((await v(live, 'BTC', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx')).valid).to.equal(false);
    expect((await v(test, 'BTC', 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu')).valid).to.equal(false);
    expect((await v(live, 'BTC', 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv')).valid).to.equal(false);
    // XRP X-address (XLS-5d table, rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf with tag 4294967295): tag carried; conflicting memo refused; other network refused
    const x = await v(live, 'XRP', 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi');
    expect(x).to.include({ valid: true, normalizedAddress: 'rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf', memo: '4294967295', memoRequired: true });
    expect((await v(live, 'XRP', 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi', '999')).valid).to.equal(false);
    expect((await v(test, 'XRP', 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi')).valid).to.equal(false);
    expect(await v(live, 'XRP', 'rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf', '42')).to.include({ valid: true, memo: '42' });
    expect((await v(live, 'ETH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '1')).valid).to.equal(false);
    expect(await v(live, 'EOS', 'eosio.token')).to.include({ valid: true, memoRequired: true });
    // request errors, not answers
    expectError(await client(live).post(VALIDATE, { chainCode: 'SOL', address: 'x' }), 200, Codes.CHAIN_NOT_ENABLED);
    expectError(await client(live).post(VALIDATE, { chainCode: 'ETH' }), 400, Codes.INVALID_PARAMETER);
    expectError(await client(live).post(VALIDATE, { chainCode: 'ETH', address: 5 }), 400, Codes.INVALID_PARAMETER);
  });

  it('serves its OpenAPI document', async function () {
    const res = await fetch(`${svc.url}/openapi.json`);
    expect(res.status).to.equal(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).to.match(/^3\./);
    for (const p of [CREATE, BATCH, LIST, VALIDATE]) expect(doc.paths).to.have.property(p);
  });
});

