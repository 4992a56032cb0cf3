/**
 * A database restore never hands out a deposit address twice (docs/deployment.md, "Key-index
 * marks"): the service issues addresses, the database is dumped with pg_dump, more addresses are
 * issued (the lost window; one of them receives ETH on anvil), the dump is restored with
 * pg_restore into a new database and the service restarted on it. The next creates never get a
 * key index (nor an address) issued before, no address belongs to two users, KEY_INDEX_ROLLBACK
 * names the windows, and the funded address of the lost window is alerted
 * (ADDRESS_IN_LOST_WINDOW) while the unfunded ones are not. Once with the software key store
 * (marks in the key-store file), once with the PKCS#11 key store on SoftHSM2 (marks in a token
 * data object, and the runbook's `wcs keystore marks --apply` before the restart), each also
 * through `wcs keystore marks` and `wcs keystore verify-backup`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'chai';
import { Client } from 'pg';
import { sendNative, startAnvil, waitForReceipt, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import { WcsService, type CreatedApplication } from '@wcs/server';
import { prepareTestKeystore, TEST_ACTOR, testConfig, testEnv, testLogger } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { expectOk, pollUntil } from './support/expect';
import { dumpHost, type DumpableDatabase, type DumpHost } from './support/pg-dump';
import { cliJson, describeCli, runCli } from './support/processes';
import { createTestToken } from './support/softhsm';
import { tempDir } from './support/temp';

const CREATE = '/api/v1/wallet/address/create';
const ETHER = 10n ** 18n;

interface Issued {
  readonly user: string;
  readonly chain: 'ETH' | 'SOL';
  readonly address: string;
  readonly namespace: string;
  readonly keyIndex: number;
}

async function query<R>(url: string, sql: string, bind: unknown[] = []): Promise<R[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, bind)).rows as R[];
  } finally {
    await c.end();
  }
}

function scenario(label: string, keyStoreEnv: () => Record<string, string>, options: { applyWithCli: boolean }): void {
  describe(`a database restore never hands out a deposit address twice (${label})`, function () {
    this.timeout(300_000);
    let anvil: AnvilDevnet;
    let host: DumpHost;
    let env: Record<string, string>;
    let svc: WcsService | null = null;
    let original: DumpableDatabase;
    let restored: DumpableDatabase;
    let dump: string;
    let app: CreatedApplication;
    const earlier: Issued[] = [];
    const lost: Issued[] = [];
    let funded: Issued;

    const start = (url: string) => WcsService.start(testConfig(url, { WCS_RPC_TEST_ETH: anvil.url, ...env }), testLogger(), { api: true, workers: false });
    /** Creates the users' addresses on ETH and SOL through the API and reads back their key indices. */
    const issue = async (url: string, users: string[]): Promise<Issued[]> => {
      const client = new SigningClient(svc!.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
      const out: Issued[] = [];
      for (const user of users) {
        for (const chain of ['ETH', 'SOL'] as const) {
          const rec = expectOk(await client.post(CREATE, { chainCode: chain, externalUserId: user })) as { address: string };
          const [k] = await query<{ namespace: string; key_index: string }>(url,
            `SELECT k.namespace, k.key_index::text AS key_index FROM addresses a JOIN user_keys k ON k.id = a.user_key_id WHERE a.application_id = $1 AND a.chain_code = $2 AND a.external_user_id = $3`,
            [app.id, chain, user]);
          out.push({ user, chain, address: rec.address, namespace: k!.namespace, keyIndex: Number(k!.key_index) });
        }
      }
      return out;
    };
    const alerts = (url: string, kind: string) =>
      query<{ details: Record<string, unknown>; message: string }>(url, 'SELECT details, message FROM operator_alerts WHERE kind = $1 ORDER BY id', [kind]);
    const cliEnv = (url: string, extra: Record<string, string> = {}) => ({ ...process.env, ...testEnv(url, { WCS_RPC_TEST_ETH: anvil.url, ...env }), ...extra });

    before(async () => {
      anvil = await startAnvil({ chainId: 11155111 }); // the catalogue's test ETH (Sepolia) id
      await prepareTestKeystore();
      env = keyStoreEnv();
      host = await dumpHost();
      original = await host.createDatabase();
      svc = await start(original.url);
      app = await svc.storage.applications.create(TEST_ACTOR, { name: 'restore', environment: 'test', chains: ['ETH', 'SOL'] });
    });
    after(async () => {
      await svc?.stop();
      await host?.stop();
      await anvil?.stop();
    });

    it('before the backup: addresses of 5 users; the database knows the key store\'s marks above every index handed out', async () => {
      earlier.push(...(await issue(original.url, ['u1', 'u2', 'u3', 'u4', 'u5'])));
      expect(earlier.filter((i) => i.chain === 'ETH').map((i) => i.keyIndex)).to.deep.equal([0, 1, 2, 3, 4]);
      const counters = await query<{ namespace: string; next_index: string; marked: string }>(original.url, 'SELECT namespace, next_index::text, marked::text FROM key_counters ORDER BY namespace');
      expect(counters.map((c) => c.namespace)).to.deep.equal(['evm', 'sol']);
      for (const c of counters) expect(Number(c.marked), c.namespace).to.be.at.least(Number(c.next_index));
    });

    it('pg_dump; then the lost window: 7 more users, one of whose ETH address receives 1 ETH on anvil; the service stops', async () => {
      dump = await host.dump(original);
      expect(fs.statSync(dump).size).to.be.above(1000);
      lost.push(...(await issue(original.url, ['u6', 'u7', 'u8', 'u9', 'u10', 'u11', 'u12'])));
      funded = lost.find((i) => i.user === 'u8' && i.chain === 'ETH')!;
      await waitForReceipt(anvil.url, await sendNative(anvil.url, funded.address, ETHER));
      await svc!.stop();
      svc = null;
    });

    it('pg_restore into a new database and a restart on it: same lineage; the counters continue above the key store\'s marks; KEY_INDEX_ROLLBACK names the windows', async () => {
      restored = await host.restore(dump);
      const [a] = await query<{ lineage: string }>(original.url, 'SELECT lineage FROM database_lineage');
      const [b] = await query<{ lineage: string }>(restored.url, 'SELECT lineage FROM database_lineage');
      expect(b!.lineage).to.equal(a!.lineage);
      // the restored copy knows only the first five users
      expect((await query<{ n: number }>(restored.url, 'SELECT count(*)::int AS n FROM user_keys'))[0]!.n).to.equal(10);
      if (options.applyWithCli) {
        // the runbook's step before any start: the database is behind (exit 1), then --apply
        const look = ['keystore', 'marks', '--json'];
        const r = await runCli(look, cliEnv(restored.url));
        expect(r.code, describeCli(look, r)).to.equal(1);
        expect(cliJson(look, r).marks.map((m: { namespace: string; state: string }) => [m.namespace, m.state])).to.deep.equal([['evm', 'DATABASE_BEHIND'], ['sol', 'DATABASE_BEHIND']]);
        const apply = ['keystore', 'marks', '--apply', '--json'];
        const a = await runCli(apply, cliEnv(restored.url));
        expect(a.code, describeCli(apply, a)).to.equal(0);
        const out = cliJson(apply, a);
        expect(out.applied.gaps.map((g: { namespace: string }) => g.namespace)).to.deep.equal(['evm', 'sol']);
        expect(out.lookedUp.map((g: { used: unknown[] }) => g.used.length).sort()).to.deep.equal([0, 1]);
        expect(out.marks.map((m: { state: string }) => m.state)).to.deep.equal(['OK', 'OK']);
        const audit = await query<{ action: string }>(restored.url, `SELECT action FROM audit_log WHERE action = 'keystore.marks-apply'`);
        expect(audit).to.have.length(1);
      }
      svc = await start(restored.url);
      const highest = Math.max(...lost.map((i) => i.keyIndex));
      const gaps = await query<{ namespace: string; from_index: number; to_index: number; application_known: boolean }>(restored.url,
        'SELECT namespace, from_index::int AS from_index, to_index::int AS to_index, application_known FROM key_index_gaps ORDER BY namespace');
      expect(gaps.map((g) => [g.namespace, g.from_index, g.application_known])).to.deep.equal([['evm', 5, true], ['sol', 5, true]]);
      for (const g of gaps) expect(g.to_index, `${g.namespace} window reaches past every lost index`).to.be.above(highest);
      const counters = await query<{ namespace: string; next_index: string }>(restored.url, 'SELECT namespace, next_index::text FROM key_counters ORDER BY namespace');
      for (const c of counters) expect(Number(c.next_index), c.namespace).to.be.above(highest);
      const rollback = await alerts(restored.url, 'KEY_INDEX_ROLLBACK');
      expect(rollback).to.have.length(1);
      expect((rollback[0]!.details.gaps as unknown[]).length).to.equal(2);
    });

    it('new users, and the lost users asked for again, never get a key index or an address handed out before; no address belongs to two users', async () => {
      const after = await issue(restored.url, ['n1', 'n2', 'n3', 'n4', 'n5', 'u6', 'u8', 'u12']);
      for (const ns of ['evm', 'sol']) {
        const old = new Set([...earlier, ...lost].filter((i) => i.namespace === ns).map((i) => i.keyIndex));
        const reused = after.filter((i) => i.namespace === ns && old.has(i.keyIndex));
        expect(reused, `${ns} indices handed out again`).to.deep.equal([]);
      }
      // every address ever handed out, before and after the restore: one user each
      const owners = new Map<string, Set<string>>();
      for (const i of [...earlier, ...lost, ...after]) {
        const k = `${i.chain}:${i.address.toLowerCase()}`;
        owners.set(k, (owners.get(k) ?? new Set()).add(i.user));
      }
      const shared = [...owners.entries()].filter(([, users]) => users.size > 1).map(([a, users]) => `${a}: ${[...users].join(', ')}`);
      expect(shared, 'addresses handed out to two users').to.deep.equal([]);
      // the lost users got new addresses (theirs from the lost window are not in the database)
      expect(after.find((i) => i.user === 'u8' && i.chain === 'ETH')!.address).to.not.equal(funded.address);
      const dup = await query(restored.url, 'SELECT chain_id, address, count(DISTINCT external_user_id) AS n FROM addresses GROUP BY chain_id, address HAVING count(DISTINCT external_user_id) > 1');
      expect(dup).to.deep.equal([]);
    });

    it('the funded address of the lost window is alerted (ADDRESS_IN_LOST_WINDOW, with its balance), the unfunded ones are not; SOL is named as not asked (no RPC endpoint)', async () => {
      const r = await pollUntil(async () => query<{ checked_at: Date | null; namespace: string }>(restored.url, 'SELECT namespace, checked_at FROM key_index_gaps'), (rows) => rows.every((g) => g.checked_at !== null), 60_000, 200);
      expect(r.ok, JSON.stringify(r.result)).to.equal(true);
      const used = await alerts(restored.url, 'ADDRESS_IN_LOST_WINDOW');
      expect(used.map((u) => (u.details.address as string).toLowerCase())).to.deep.equal([funded.address.toLowerCase()]);
      expect(used[0]!.details).to.deep.include({ applicationId: app.id, namespace: 'evm', keyIndex: funded.keyIndex, chainCode: 'ETH', evidence: { native: ETHER.toString() } });
      const gaps = await query<{ namespace: string; with_history: number; unchecked_chains: string | null }>(restored.url, 'SELECT namespace, with_history, unchecked_chains FROM key_index_gaps ORDER BY namespace');
      expect(gaps.map((g) => [g.namespace, g.with_history])).to.deep.equal([['evm', 1], ['sol', 0]]);
      expect(gaps[1]!.unchecked_chains).to.match(/test:SOL: no RPC endpoint/);
      // ETH was asked (the catalogue's test tokens, absent from anvil, are named as unreadable); BSC and POLYGON have no endpoint
      expect(gaps[0]!.unchecked_chains).to.match(/test:BSC: no RPC endpoint/).and.not.match(/test:ETH: no RPC endpoint/);
    });

    it('a second restart finds nothing new: no second window or alert', async () => {
      await svc!.stop();
      svc = await start(restored.url);
      expect(await alerts(restored.url, 'KEY_INDEX_ROLLBACK')).to.have.length(1);
      expect((await query<{ n: number }>(restored.url, 'SELECT count(*)::int AS n FROM key_index_gaps'))[0]!.n).to.equal(2);
    });

    it('wcs keystore marks: every (application, namespace) OK, the windows listed as looked up; exit 0', async () => {
      const args = ['keystore', 'marks', '--json'];
      const r = await runCli(args, cliEnv(restored.url));
      expect(r.code, describeCli(args, r)).to.equal(0);
      const out = cliJson(args, r);
      expect(out.marks.map((m: { namespace: string; state: string }) => [m.namespace, m.state])).to.deep.equal([['evm', 'OK'], ['sol', 'OK']]);
      expect(out.gaps.map((g: { namespace: string; withHistory: number }) => [g.namespace, g.withHistory])).to.deep.equal([['evm', 1], ['sol', 0]]);
    });

    it('wcs keystore verify-backup: the key store derives every address of the database (exit 0, counts, no key material)', async () => {
      const file = env.WCS_KEYSTORE_BACKEND === 'pkcs11' ? [] : [(() => {
        const copy = path.join(tempDir('wcs-ks-backup-'), 'keystore-backup.json');
        fs.copyFileSync(testEnv('x').WCS_KEYSTORE_FILE!, copy);
        return copy;
      })()];
      const args = ['keystore', 'verify-backup', ...file, '--json'];
      const r = await runCli(args, cliEnv(restored.url));
      expect(r.code, describeCli(args, r)).to.equal(0);
      const out = cliJson(args, r);
      const rows = (await query<{ n: number }>(restored.url, 'SELECT count(*)::int AS n FROM addresses'))[0]!.n;
      expect(out).to.include({ ok: true, addresses: rows, matched: rows, mismatched: 0 });
      expect(out.mismatches).to.deep.equal([]);
      expect(r.stdout + r.stderr).to.not.match(/abandon|xprv|tprv/);
    });
  });
}

// the software scenario lets the service's start apply the marks; the PKCS#11 one runs the runbook's `wcs keystore marks --apply` first
scenario('software key store: marks in the key-store file', () => ({}), { applyWithCli: false });
scenario('PKCS#11 key store on SoftHSM2: marks in a token data object', () => {
  const { SOFTHSM2_CONF: _conf, ...tokenEnv } = createTestToken().env;
  return tokenEnv;
}, { applyWithCli: true });
