/**
 * `wcs collect …` (docs/collection.md) against a real database: policies written in exact base
 * units and shown as decimals, every bad input refused naming its option with nothing written,
 * collection addresses checked by the chain's adapter and stored normalized, settlement mode,
 * fee wallets made through the key store, items and status, run, and retry of a FAILED item
 * (rows inserted directly in SQL).
 */
import { expect } from 'chai';
import * as pg from 'pg';
import { createTestDatabase, testEnv, TEST_MNEMONIC, type TestDatabase } from '@wcs/server/testing';
import { Codes } from './support/expect';
import { cliJson, describeCli, runCli } from './support/processes';

const { initWasm } = require('@trustwallet/wallet-core');

// default catalogue, test environment
const ETH_CHAIN = 102;
const BTC_CHAIN = 101;
const ETH = 10200;
const USDC = 10202;

describe('wcs collect (operator CLI for collection)', function () {
  let db: TestDatabase;
  let env: Record<string, string | undefined>;
  let appId: number;
  let otherApp: number;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function wcs(args: string[], exit: number): Promise<any> {
    const r = await runCli([...args, '--json'], env);
    expect(r.code, describeCli(args, r)).to.equal(exit);
    expect(r.stderr, `nothing on stderr with --json: ${describeCli(args, r)}`).to.equal('');
    return cliJson(args, r);
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function sql(text: string, params: unknown[] = []): Promise<any[]> {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      return (await c.query(text, params)).rows;
    } finally {
      await c.end();
    }
  }
  const policies = () => sql(`SELECT application_id, chain_token_id, enabled, threshold::text, max_fee_bps, native_value::text, on_confirmed, schedule_seconds, max_wait_seconds,
                                     hot_low::text, hot_target::text, hot_high::text, last_run_at FROM collection_policies ORDER BY application_id, chain_token_id`);
  const addresses = () => sql('SELECT application_id, chain_id, kind, address, memo FROM collection_addresses ORDER BY application_id, chain_id, kind');
  const item = async (id: number) => (await sql(
    `SELECT status, retry_times, failure_code, failure_message, waiting_reason, transfer_id::text, topup_transfer_id::text, tx_hash, gas_fee::text, fee_per_unit::text,
            finished_at, amount::text FROM collection_items WHERE id = $1`, [id]))[0];

  before(async function () {
    db = await createTestDatabase();
    env = { ...process.env, ...testEnv(db.url) };
    appId = (await wcs(['app', 'create', '--name', 'collect', '--env', 'test', '--chains', 'ETH,BTC'], 0)).id;
    otherApp = (await wcs(['app', 'create', '--name', 'other', '--env', 'test', '--chains', 'BTC'], 0)).id;
  });
  after(async function () {
    if (db) await db.drop();
  });

  describe('policy set / show', function () {
    it('writes exact base units from the token\'s decimal strings and shows them back as given', async function () {
      const set = await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'eth', '--token', 'usdc', '--threshold', '12.345678', '--max-fee-percent', '2.5',
        '--native-value', '3000.5', '--on-confirmed', 'false', '--schedule-seconds', '60', '--max-wait-seconds', '600', '--hot-low', '10', '--hot-target', '50',
        '--hot-high', '100.000001'], 0);
      expect(set).to.deep.include({
        applicationId: appId, environment: 'test', chainCode: 'ETH', chainTokenId: USDC, token: 'USDC', decimals: 6, enabled: true, threshold: '12.345678', maxFeePercent: '2.5',
        nativeValue: '3000.5', onConfirmed: false, scheduleSeconds: 60, maxWaitSeconds: 600, hotLow: '10', hotTarget: '50', hotHigh: '100.000001', lastRunTime: null, created: true,
      });
      expect(await policies()).to.deep.equal([{
        application_id: appId, chain_token_id: USDC, enabled: true, threshold: '12345678', max_fee_bps: 250, native_value: '3000500000', on_confirmed: false, schedule_seconds: 60,
        max_wait_seconds: 600, hot_low: '10000000', hot_target: '50000000', hot_high: '100000001', last_run_at: null,
      }]);

      // a native coin of 18 decimals: 1 wei; every option left out takes the documented default
      await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'ETH', '--threshold', '0.000000000000000001'], 0);
      const eth = (await policies()).find((p) => p.chain_token_id === ETH);
      expect(eth).to.deep.equal({
        application_id: appId, chain_token_id: ETH, enabled: true, threshold: '1', max_fee_bps: 1000, native_value: null, on_confirmed: true, schedule_seconds: 300,
        max_wait_seconds: null, hot_low: null, hot_target: null, hot_high: null, last_run_at: null,
      });

      // an update changes only what is given
      const upd = await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'USDC', '--threshold', '20', '--schedule-seconds', 'off'], 0);
      expect(upd).to.deep.include({ created: false, threshold: '20', scheduleSeconds: null, nativeValue: '3000.5', hotHigh: '100.000001' });
      expect(upd.changed).to.deep.equal(['threshold', 'scheduleSeconds']);
      expect(set.notes).to.deep.equal([]);
      // a token policy without a native value: said at once, since its sweeps would all be skipped
      const priceless = await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'USDC', '--native-value', 'off'], 0);
      expect(priceless.notes).to.deep.equal([
        'no --native-value: the cost guard cannot price USDC sweeps\' ETH fees, so they are skipped until it is set',
        // on-confirmed false (set above) and now no schedule
        '--on-confirmed false and no schedule: nothing triggers planning of this token',
      ]);
      expect((await policies()).find((p) => p.chain_token_id === USDC).native_value).to.equal(null);
      await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'USDC', '--native-value', '3000.5'], 0);
      expect((await policies()).find((p) => p.chain_token_id === USDC)).to.include({ threshold: '20000000', schedule_seconds: null, native_value: '3000500000', max_fee_bps: 250 });

      const shown = await wcs(['collect', 'policy', 'show', '--app', String(appId)], 0);
      expect(shown.map((p: { token: string; threshold: string; maxFeePercent: string }) => [p.token, p.threshold, p.maxFeePercent])).to.deep.equal([['ETH', '0.000000000000000001', '10'], ['USDC', '20', '2.5']]);
      expect(await wcs(['collect', 'policy', 'show', '--app', String(otherApp)], 0)).to.deep.equal([]);
      const human = await runCli(['collect', 'policy', 'show'], env);
      expect(human.code).to.equal(0);
      expect(human.stdout).to.include(`app ${appId} test:ETH USDC#${USDC} enabled: threshold 20, max fee 2.5 %, native value 3000.5`);
    });

    it('refuses each bad input with a message naming the option (exit 2) and writes nothing', async function () {
      const before = await policies();
      const set = ['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'USDC'];
      const cases: Array<[string[], string]> = [
        [['--threshold', '-5'], '--threshold: must not be negative, got "-5"'],
        [['--threshold', '1e3'], '--threshold: must be a plain decimal amount of USDC such as "12.5", got "1e3"'],
        [['--threshold', '1.0000001'], '--threshold: "1.0000001" has more decimal places than USDC has (6)'],
        [['--max-fee-percent', '101'], '--max-fee-percent: the fee share cannot be over 100 %, got 101'],
        [['--max-fee-percent', '-1'], '--max-fee-percent: the fee share must not be negative, got "-1"'],
        [['--hot-low', '200', '--hot-target', 'off', '--hot-high', '100'], '--hot-low: the low watermark 200 is above the high watermark 100 (--hot-high): low <= target <= high'],
        // against the kept target (50)
        [['--hot-high', '40'], '--hot-target: the target 50 is above the high watermark 40 (--hot-high): low <= target <= high'],
        [['--schedule-seconds', '5'], '--schedule-seconds: must be at least 10 seconds (or off), got 5'],
        [['--on-confirmed', 'maybe'], '--on-confirmed: say true or false, got "maybe"'],
        [['--enable', '--disable'], '--enable/--disable: give one of them, not both'],
      ];
      for (const [extra, msg] of cases) {
        const out = await wcs([...set, ...extra], 2);
        expect(out.error, extra.join(' ')).to.deep.equal({ code: 'commander.invalidArgument', name: 'UsageError', msg: `collect policy set: ${msg}` });
      }
      // a native coin has no native value; several problems are all named at once
      expect((await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'ETH', '--native-value', '1'], 2)).error.msg)
        .to.equal('collect policy set: --native-value: ETH is the native coin of its chain: its fees are compared with the amount directly, there is nothing to convert');
      expect((await wcs([...set, '--threshold', '-1', '--max-fee-percent', '101'], 2)).error.msg)
        .to.equal('collect policy set: --threshold: must not be negative, got "-1"; --max-fee-percent: the fee share cannot be over 100 %, got 101');
      // a new policy refused is not created either
      await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'BTC', '--token', 'BTC', '--threshold', '0.000000001'], 2);
      expect(await policies()).to.deep.equal(before);
    });

    it('unknown application, chain or token: a runtime error naming the valid choices, nothing written', async function () {
      const before = await policies();
      const app = await wcs(['collect', 'policy', 'set', '--app', '999', '--chain', 'ETH', '--token', 'USDC'], 1);
      expect(app.error).to.include({ code: Codes.APPLICATION_NOT_FOUND });
      expect(app.error.msg).to.equal(`No application 999; applications: ${appId}, ${otherApp}`);
      const chain = await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'DOGE', '--token', 'X'], 1);
      expect(chain.error).to.include({ code: Codes.CHAIN_UNKNOWN });
      expect(chain.error.msg).to.equal('Unknown chain code "DOGE" in test; the catalogue has BTC, ETH, BSC, POLYGON, SOL, XRP, XLM, EOS');
      const off = await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'SOL', '--token', 'SOL'], 1);
      expect(off.error).to.include({ code: Codes.CHAIN_NOT_ENABLED, msg: `SOL is not enabled for application ${appId}; enabled: ETH, BTC (wcs app set-chains)` });
      const token = await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'USDT'], 1);
      expect(token.error).to.include({ code: Codes.TOKEN_UNKNOWN, msg: `No token "USDT" on test:ETH; its tokens: ETH (#${ETH}), USDC (#${USDC})` });
      expect(await policies()).to.deep.equal(before);
      // a usage error from commander itself: exit 2
      expect((await wcs(['collect', 'policy', 'set', '--app', 'x', '--chain', 'ETH', '--token', 'USDC'], 2)).error).to.include({ name: 'UsageError', code: 'commander.invalidArgument' });
    });
  });

  describe('address set / show', function () {
    it('stores the adapter\'s normalized form (EIP-55) and shows it; a change is kept in place', async function () {
      const out = await wcs(['collect', 'address', 'set', '--app', String(appId), '--chain', 'ETH', '--kind', 'COLD', '--address', '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'], 0);
      expect(out).to.deep.equal({
        applicationId: appId, environment: 'test', chainCode: 'ETH', kind: 'COLD', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', memo: null, previousAddress: null, previousMemo: null,
      });
      await wcs(['collect', 'address', 'set', '--app', String(appId), '--chain', 'BTC', '--kind', 'MERCHANT', '--address', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx'], 0);
      const again = await wcs(['collect', 'address', 'set', '--app', String(appId), '--chain', 'ETH', '--kind', 'COLD', '--address', '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359'], 0);
      expect(again).to.include({ address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', previousAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' });
      expect(await addresses()).to.deep.equal([
        { application_id: appId, chain_id: BTC_CHAIN, kind: 'MERCHANT', address: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', memo: null },
        { application_id: appId, chain_id: ETH_CHAIN, kind: 'COLD', address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', memo: null },
      ]);
      const shown = await wcs(['collect', 'address', 'show', '--app', String(appId)], 0);
      expect(shown.map((a: { chainCode: string; kind: string; address: string }) => [a.chainCode, a.kind, a.address])).to.deep.equal([
        ['BTC', 'MERCHANT', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx'], ['ETH', 'COLD', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'],
      ]);
    });

    it('refuses an address of the wrong network, a malformed or mis-checksummed EVM address, a memo on an HD chain, with the adapter\'s reason; nothing written', async function () {
      const before = await addresses();
      const set = (chain: string, address: string, ...extra: string[]) => ['collect', 'address', 'set', '--app', String(appId), '--chain', chain, '--kind', 'COLD', '--address', address, ...extra];
      const cases: Array<[string[], string]> = [
        [set('BTC', 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu'), '--address: not a valid BTC (test, testnet) address: address is for mainnet (hrp "bc"); this chain is testnet (hrp "tb")'],
        [set('ETH', '0x12345'), '--address: not a valid ETH (test, sepolia) address: address has 5 hex digits after "0x", not 40'],
        [set('ETH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'), '--address: not a valid ETH (test, sepolia) address: EIP-55 checksum mismatch: a mixed-case address must carry a valid checksum (check for a typo)'],
        [set('ETH', '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', '--memo', '7'), '--address: not a valid ETH (test, sepolia) address: EVM chains have no memo: send without one'],
      ];
      for (const [args, msg] of cases) {
        expect((await wcs(args, 2)).error, args.join(' ')).to.deep.equal({ code: 'commander.invalidArgument', name: 'UsageError', msg });
      }
      expect((await wcs(['collect', 'address', 'set', '--app', String(appId), '--chain', 'ETH', '--kind', 'HOT', '--address', '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'], 2)).error)
        .to.include({ name: 'UsageError', code: 'commander.invalidArgument' });
      expect(await addresses()).to.deep.equal(before);
    });

    it('refuses an address the service collects from (a fee wallet, a deposit address) as a target', async function () {
      const fw = await wcs(['collect', 'fee-wallets', '--app', String(appId)], 0);
      const before = await addresses();
      const out = await wcs(['collect', 'address', 'set', '--app', String(appId), '--chain', 'ETH', '--kind', 'MERCHANT', '--address', fw[0].address.toLowerCase()], 2);
      expect(out.error.msg).to.equal(`--address: ${fw[0].address} is a fee wallet on ETH: a MERCHANT target must be an address the service does not collect from`);
      expect(await addresses()).to.deep.equal(before);
    });
  });

  describe('settlement and fee wallets', function () {
    it('settlement: sets applications.settlement_mode and says what waits; one info log line per change', async function () {
      const out = await wcs(['collect', 'settlement', '--app', String(otherApp), '--mode', 'PASS_THROUGH'], 0);
      expect(out).to.deep.equal({
        applicationId: otherApp, settlementMode: 'PASS_THROUGH', previousSettlementMode: 'ON_CONFIRM',
        notes: ['no MERCHANT address on BTC: sweeps there wait (wcs collect address set --kind MERCHANT)', 'deposits settle only once collected: tokens without an enabled policy stay CONFIRMED (enabled policies: none)'],
      });
      expect((await sql('SELECT settlement_mode FROM applications WHERE id = $1', [otherApp]))[0].settlement_mode).to.equal('PASS_THROUGH');
      expect((await sql('SELECT settlement_mode FROM applications WHERE id = $1', [appId]))[0].settlement_mode, 'the other application untouched').to.equal('ON_CONFIRM');
      expect((await wcs(['collect', 'settlement', '--app', String(otherApp), '--mode', 'SOMETIMES'], 2)).error).to.include({ name: 'UsageError', code: 'commander.invalidArgument' });

      // without WCS_LOG_LEVEL the change is logged (info, stderr); stdout stays the one JSON document
      const quiet = { ...env };
      delete quiet.WCS_LOG_LEVEL;
      const r = await runCli(['collect', 'settlement', '--app', String(otherApp), '--mode', 'ON_CONFIRM', '--json'], quiet);
      expect(r.code, describeCli(['collect', 'settlement'], r)).to.equal(0);
      expect(JSON.parse(r.stdout)).to.include({ settlementMode: 'ON_CONFIRM', previousSettlementMode: 'PASS_THROUGH' });
      expect(r.stderr).to.match(new RegExp(`info settlement mode set \\{"applicationId":${otherApp},"from":"PASS_THROUGH","to":"ON_CONFIRM"\\}`));
      expect((await sql('SELECT settlement_mode FROM applications WHERE id = $1', [otherApp]))[0].settlement_mode).to.equal('ON_CONFIRM');
    });

    it('fee-wallets: makes the fee wallet of each enabled EVM chain through the key store once, and lists it with its last reading', async function () {
      const first = await wcs(['collect', 'fee-wallets'], 0);
      // appId has ETH (EVM) and BTC; otherApp only BTC: one fee wallet (made by the earlier test or now)
      expect(first).to.have.length(1);
      expect(first[0]).to.include({ applicationId: appId, environment: 'test', chainCode: 'ETH', balance: null, symbol: 'ETH', observedTime: null, reason: null });
      expect(first[0].address).to.match(/^0x[0-9a-fA-F]{40}$/);
      const rows = await sql('SELECT application_id, chain_id, key_namespace, key_index, address, on_chain FROM fee_wallets');
      expect(rows).to.deep.equal([{ application_id: appId, chain_id: ETH_CHAIN, key_namespace: 'evm', key_index: 0, address: first[0].address, on_chain: null }]);
      // the key store's 'fee' key of the application (BIP-44 change level 2, index 0), checked against an independent derivation (wallet-core)
      const core = await initWasm();
      const key = core.HDWallet.createWithMnemonic(TEST_MNEMONIC, '').getKey(core.CoinType.ethereum, `m/44'/60'/${appId}'/2/0`);
      expect(first[0].address).to.equal(core.AnyAddress.createWithPublicKey(key.getPublicKeySecp256k1(false), core.CoinType.ethereum).description());
      await sql(`UPDATE fee_wallets SET on_chain = 1500000000000000000, observed_at = now()`);
      const second = await wcs(['collect', 'fee-wallets', '--app', String(appId)], 0);
      expect(second).to.have.length(1);
      expect(second[0]).to.include({ address: first[0].address, balance: '1.5', created: false });
      expect(await wcs(['collect', 'fee-wallets', '--app', String(otherApp)], 0)).to.deep.equal([]);
    });
  });

  describe('items, status, run and retry (rows inserted in SQL)', function () {
    let request: number;
    let userAddress: string;
    let rechargeIds: number[];

    /** A transfer row (a top-up or a sweep) in a given state. */
    async function transfer(kind: 'SWEEP' | 'TOP_UP' | 'COLD_TRANSFER', token: number, status: string, from: string, to: string, amount: string, extra: { tx?: string; fee?: string; code?: string } = {}): Promise<number> {
      const [r] = await sql(
        `INSERT INTO transfers (application_id, chain_id, chain_token_id, kind, key_purpose, key_namespace, key_index, from_address, to_address, amount, status, tx_hash, fee, fail_code, fail_reason, finished_at)
         VALUES ($1, $2, $3, $4, $5, 'evm', 0, $6, $7, $8, $9, $10, $11, $12, $13, CASE WHEN $14::boolean THEN now() END) RETURNING id::int AS id`,
        [appId, ETH_CHAIN, token, kind, kind === 'TOP_UP' ? 'fee' : kind === 'SWEEP' ? 'deposit' : 'hot', from, to, amount, status, extra.tx ?? null, extra.fee ?? null, extra.code ?? null,
          extra.code ? `the node said ${extra.code}` : null, status === 'SUCCESS' || status === 'FAILED'],
      );
      return r.id;
    }
    async function newItem(over: Record<string, unknown>): Promise<number> {
      const v = {
        stage: 'HOT_GATHER', token: USDC, from_id: 1, from: userAddress, to: '0x000000000000000000000000000000000000dEaD', amount: '25000000', status: 'PLANNED',
        code: null, message: null, transfer: null, topup: null, tx: null, gas: null, fpu: null, waiting: null, ...over,
      };
      const [r] = await sql(
        `INSERT INTO collection_items (request_id, application_id, chain_id, chain_token_id, stage, from_address_id, from_address, to_address, amount, status, failure_code, failure_message,
                                       transfer_id, topup_transfer_id, tx_hash, gas_fee, fee_per_unit, waiting_reason, source, finished_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, '{"key":{"namespace":"evm","index":0}}',
                 CASE WHEN $19::boolean THEN now() END) RETURNING id::int AS id`,
        [request, appId, ETH_CHAIN, v.token, v.stage, v.from_id, v.from, v.to, v.amount, v.status, v.code, v.message, v.transfer, v.topup, v.tx, v.gas, v.fpu, v.waiting, v.status === 'SUCCESS' || v.status === 'FAILED'],
      );
      return r.id;
    }

    before(async function () {
      // a user's deposit address (its key row stands in for the key store's) and two confirmed deposits
      userAddress = '0x1111111111111111111111111111111111111111';
      const [k] = await sql(`INSERT INTO user_keys (application_id, namespace, external_user_id, key_index, public_key) VALUES ($1, 'evm', 'u1', 0, '\\x02') RETURNING id`, [appId]);
      const [a] = await sql(`INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, user_key_id) VALUES ($1, $2, 'ETH', 'u1', $3, $4) RETURNING id`,
        [appId, ETH_CHAIN, userAddress, k.id]);
      const recharges = await sql(
        `INSERT INTO recharges (application_id, chain_id, chain_token_id, address_id, external_user_id, address, tx_hash, position, amount, block_height, block_hash, tx_status, confirmations, min_confirmations, confirmed_at, settled_at)
         SELECT $1, $2, $3, $4, 'u1', $5, '0x' || lpad(n::text, 64, '0'), 0, 12500000, 10 + n, '0xb', 'SETTLED', 3, 3, now(), now() FROM generate_series(1, 2) n RETURNING id::int AS id`,
        [appId, ETH_CHAIN, USDC, a.id, userAddress]);
      rechargeIds = recharges.map((r: { id: number }) => r.id).sort((x: number, y: number) => x - y);
      [{ id: request }] = await sql(`INSERT INTO collection_requests (application_id, chain_id, chain_token_id, trigger) VALUES ($1, $2, $3, 'DEPOSIT') RETURNING id::int AS id`, [appId, ETH_CHAIN, USDC]);
    });

    it('retry: a FAILED sweep after a successful top-up goes back to PLANNED (top-up kept, sweep and failure cleared, deposits still linked); anything not FAILED is refused', async function () {
      const hot = '0x000000000000000000000000000000000000dEaD';
      const topup = await transfer('TOP_UP', ETH, 'SUCCESS', '0xB2cc63048B9bCc14E75F1315d416DCF234A2a221', userAddress, '150000000000000', { tx: '0xaa' });
      const sweep = await transfer('SWEEP', USDC, 'FAILED', userAddress, hot, '25000000', { tx: '0xbb', fee: '90000000000000', code: 'REVERTED' });
      const failed = await newItem({ status: 'FAILED', code: 'SWEEP_REVERTED', message: 'the transaction failed on chain (reverted)', transfer: sweep, topup, tx: '0xbb', gas: '90000000000000', fpu: '5000000000' });
      await sql('UPDATE recharges SET collection_item_id = $1 WHERE id = ANY($2::bigint[])', [failed, rechargeIds]);

      const out = await wcs(['collect', 'retry', '--item', String(failed)], 0);
      expect(out).to.deep.include({
        event: 'collect', id: failed, itemId: failed, requestId: request, applicationId: appId, chainId: ETH_CHAIN, chainTokenId: USDC, stage: 'HOT_GATHER', fromAddressId: 1,
        fromAddress: userAddress, amount: '25', txHash: null, status: 'PLANNED', failureReasonCode: null, failureReasonMessage: null, retryTimes: 1, gasFee: null, gasFeeCurrency: null,
        relatedRechargeIds: rechargeIds, finishedTime: null, token: 'USDC', waitingReason: null,
      });
      expect(out.gasFunding).to.deep.equal({
        id: topup, status: 'SUCCESS', txHash: '0xaa', feeAddress: '0xB2cc63048B9bCc14E75F1315d416DCF234A2a221', userAddress, amount: '0.00015', failureReasonMessage: null,
      });
      expect(await item(failed)).to.deep.equal({
        status: 'PLANNED', retry_times: 1, failure_code: null, failure_message: null, waiting_reason: null, transfer_id: null, topup_transfer_id: String(topup), tx_hash: null,
        gas_fee: null, fee_per_unit: '5000000000', finished_at: null, amount: '25000000',
      });
      expect((await sql('SELECT id::int AS id FROM recharges WHERE collection_item_id = $1 ORDER BY id', [failed])).map((r) => r.id), 'its recharges stay linked').to.deep.equal(rechargeIds);
      // the failed transfer itself is kept as it was
      expect((await sql('SELECT status, fail_code FROM transfers WHERE id = $1', [sweep]))[0]).to.deep.equal({ status: 'FAILED', fail_code: 'REVERTED' });

      // now PLANNED: refused, unchanged
      const again = await wcs(['collect', 'retry', '--item', String(failed)], 1);
      expect(again.error).to.deep.equal({ code: null, name: 'COLLECTION_ITEM_NOT_RETRYABLE', msg: `item ${failed} is PLANNED: only a FAILED item can be retried` });
      expect((await item(failed)).retry_times).to.equal(1);
      expect((await wcs(['collect', 'retry', '--item', '999999'], 1)).error).to.deep.equal({ code: null, name: 'COLLECTION_ITEM_NOT_FOUND', msg: 'no collection item 999999' });
      expect((await wcs(['collect', 'retry', '--item', 'abc'], 2)).error).to.include({ name: 'UsageError' });

      // SUCCESS and SWEEPING are refused too
      await sql(`UPDATE collection_items SET status = 'SWEEPING' WHERE id = $1`, [failed]);
      expect((await wcs(['collect', 'retry', '--item', String(failed)], 1)).error.msg).to.equal(`item ${failed} is SWEEPING: only a FAILED item can be retried`);
      await sql(`UPDATE collection_items SET status = 'SUCCESS', finished_at = now() WHERE id = $1`, [failed]);
      expect((await wcs(['collect', 'retry', '--item', String(failed)], 1)).error.msg).to.equal(`item ${failed} is SUCCESS: only a FAILED item can be retried`);
      expect(await item(failed)).to.include({ status: 'SUCCESS', retry_times: 1 });
    });

    it('retry: a failed top-up is not kept; refused while another item collects the same address, and for a COLD_TRANSFER', async function () {
      const topup = await transfer('TOP_UP', ETH, 'FAILED', '0xB2cc63048B9bCc14E75F1315d416DCF234A2a221', userAddress, '150000000000000', { code: 'NODE_REJECTED' });
      const failed = await newItem({ status: 'FAILED', code: 'GAS_TOPUP_FAILED', message: 'the gas top-up failed: the node said NODE_REJECTED', topup, fpu: '5000000000' });
      // another open item on the same (token, address): the retry would be a second sweep of the same funds
      const open = await newItem({ status: 'PLANNED', waiting: `the fee wallet 0xB2cc… holds too little for a top-up of 150000000000000 wei (fund it)` });
      const refused = await wcs(['collect', 'retry', '--item', String(failed)], 1);
      expect(refused.error).to.deep.equal({ code: null, name: 'COLLECTION_ITEM_NOT_RETRYABLE', msg: `item ${open} (PLANNED) is already collecting ${userAddress}: retry item ${failed} once it has ended` });
      expect(await item(failed)).to.include({ status: 'FAILED', retry_times: 0, failure_code: 'GAS_TOPUP_FAILED', topup_transfer_id: String(topup) });

      // items and status while it waits
      const items = await wcs(['collect', 'items', '--app', String(appId), '--status', 'PLANNED'], 0);
      expect(items.map((i: { itemId: number; status: string; waitingReason: string }) => [i.itemId, i.status, i.waitingReason]))
        .to.deep.equal([[open, 'PLANNED', 'the fee wallet 0xB2cc… holds too little for a top-up of 150000000000000 wei (fund it)']]);
      await sql(`INSERT INTO collection_skips (application_id, chain_token_id, address, amount, fee, reason) VALUES ($1, $2, '0x2222222222222222222222222222222222222222', 1500000, 2100000000000000, 'below the threshold of 20000000')`, [appId, USDC]);
      await sql(`INSERT INTO operator_alerts (chain_id, kind, message, details) VALUES ($1, 'COLLECTION_FAILED', 'collection item failed', $2), ($1, 'FEE_WALLET_LOW', 'fee wallet low', $3),
                                                                                    ($1, 'SEQUENCE_GAP', 'not a collection alert', '{}'), ($1, 'COLLECTION_STUCK', 'acknowledged', $2)`,
        [ETH_CHAIN, JSON.stringify({ item: String(failed), code: 'GAS_TOPUP_FAILED' }), JSON.stringify({ applicationId: appId, spendable: '0', needed: '1' })]);
      await sql(`UPDATE operator_alerts SET acknowledged_at = now() WHERE message = 'acknowledged'`);
      const status = await wcs(['collect', 'status', '--app', String(appId)], 0);
      const usdc = status.tokens.find((t: { chainTokenId: number }) => t.chainTokenId === USDC);
      expect(usdc).to.deep.include({
        applicationId: appId, chainCode: 'ETH', token: 'USDC', policy: 'enabled', open: { PLANNED: 1, TOPPING_UP: 0, FUNDED: 0, SWEEPING: 0 }, failed: 1, skippedTotal: 1,
        waiting: [{ reason: 'the fee wallet 0xB2cc… holds too little for a top-up of 150000000000000 wei (fund it)', items: 1 }],
      });
      expect(usdc.skipped).to.have.length(1);
      expect(usdc.skipped[0]).to.include({ address: '0x2222222222222222222222222222222222222222', amount: '1.5', fee: '0.0021', reason: 'below the threshold of 20000000' });
      expect(usdc.feeWallet).to.include({ balance: '1.5', symbol: 'ETH' });
      expect(status.alerts.map((a: { kind: string; applicationId: number }) => [a.kind, a.applicationId])).to.deep.equal([['FEE_WALLET_LOW', appId], ['COLLECTION_FAILED', appId]]);
      expect((await wcs(['collect', 'status', '--app', String(otherApp)], 0))).to.deep.equal({ tokens: [], alerts: [] });

      // the other item ended: the retry goes, the failed top-up is dropped (a new one is measured), and so is the price it was measured at
      await sql(`UPDATE collection_items SET status = 'SUCCESS', finished_at = now() WHERE id = $1`, [open]);
      const out = await wcs(['collect', 'retry', '--item', String(failed)], 0);
      expect(out).to.include({ status: 'PLANNED', retryTimes: 1, gasFunding: null });
      expect(await item(failed)).to.include({ status: 'PLANNED', retry_times: 1, failure_code: null, topup_transfer_id: null, fee_per_unit: null, finished_at: null });

      const cold = await newItem({ stage: 'COLD_TRANSFER', token: ETH, from_id: 0, from: '0x3333333333333333333333333333333333333333', status: 'FAILED', code: 'SWEEP_FAILED' });
      expect((await wcs(['collect', 'retry', '--item', String(cold)], 1)).error).to.deep.equal({
        code: null, name: 'COLLECTION_ITEM_NOT_RETRYABLE',
        msg: `item ${cold} is a COLD_TRANSFER: cold transfers are not retried; the watermark check makes a new one while the hot wallet stays above its high watermark`,
      });
      expect(await item(cold)).to.include({ status: 'FAILED', retry_times: 0 });
    });

    it('run: clears the last run of a scheduled policy (due at the next pass); with the schedule off it says nothing is forced; no policy is refused', async function () {
      await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'ETH', '--schedule-seconds', '600'], 0);
      await sql(`UPDATE collection_policies SET last_run_at = now() WHERE application_id = $1`, [appId]);
      const out = await wcs(['collect', 'run', '--app', String(appId), '--chain', 'ETH', '--token', 'ETH'], 0);
      expect(out).to.include({ applicationId: appId, chainCode: 'ETH', chainTokenId: ETH, token: 'ETH', scheduleSeconds: 600, effective: true, withinMs: 5000 });
      expect(out.previousRunTime).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
      expect(out.notes).to.deep.equal([]);
      const rows = await sql(`SELECT chain_token_id, last_run_at, schedule_seconds FROM collection_policies WHERE application_id = $1 ORDER BY chain_token_id`, [appId]);
      expect(rows.map((r) => [r.chain_token_id, r.last_run_at === null, r.schedule_seconds])).to.deep.equal([[ETH, true, 600], [USDC, false, null]]);

      const off = await wcs(['collect', 'run', '--app', String(appId), '--chain', 'ETH', '--token', 'USDC'], 0);
      expect(off).to.include({ effective: false, scheduleSeconds: null, withinMs: null });
      expect(off.notes[0]).to.match(/^the schedule is off, so the planner does not read the last run: nothing is forced/);
      expect((await sql(`SELECT last_run_at, schedule_seconds FROM collection_policies WHERE application_id = $1 AND chain_token_id = $2`, [appId, USDC]))[0]).to.deep.equal({ last_run_at: null, schedule_seconds: null });

      expect((await wcs(['collect', 'run', '--app', String(appId), '--chain', 'BTC', '--token', 'BTC'], 1)).error).to.deep.equal({
        code: null, name: 'COLLECTION_POLICY_NOT_FOUND', msg: `application ${appId} has no collection policy for BTC on BTC: wcs collect policy set first`,
      });
      await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'ETH', '--disable'], 0);
      expect((await wcs(['collect', 'run', '--app', String(appId), '--chain', 'ETH', '--token', 'ETH'], 1)).error.name).to.equal('COLLECTION_POLICY_DISABLED');
      expect((await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'ETH', '--enable'], 0)).enabled).to.equal(true);
    });
  });
});
