/**
 * Delegated sweeps (EIP-7702) signed by the PKCS#11 key store (a SoftHSM2 token) on anvil: the
 * deposit keys sign the addresses' authorizations and the fee wallet's key signs the contracts'
 * deployments and the batch, all on the token. A few ERC-20 and native deposit addresses are swept
 * with no top-up; the authorities recovered from each mined batch's authorizationList (from the
 * EIP's digest, not the adapter's code) are exactly the deposit addresses, each the address of a
 * deposit key the token holds (custody_keys); each address is delegated to the forwarder of the hot
 * wallet; the node recovers the fee wallet (its key on the token) as the sender of every batch.
 */
import { expect } from 'chai';
import { anvilRpc, erc20Balance, mintErc20, sendNative, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import { batchSweeperDeployment, forwarderDeployment } from '@wcs/adapter-evm';
import type { CreatedApplication } from '@wcs/server';
import type { TestService } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { authorityOf, delegationCode, evmAddressOfKey, type RpcAuthorization } from './support/eip7702';
import { waitForHotWallet } from './support/payouts';
import { expectOk, pollUntil } from './support/expect';
import { ADDRESS_CREATE } from './support/recharge-types';
import { startHsmEvm, type HsmEvm } from './support/hsm-evm';

const ETH_CHAIN = 102;
const ETH_TOKEN_ID = 10200;
const TOKEN_ID = 10299;
const ETHER = 10n ** 18n;
const EVM_CHAIN_ID = 11155111n;
const TOKEN_ADDRESSES = 3;
const NATIVE_ADDRESSES = 2;

interface Item { id: string; from_address: string; chain_token_id: number; status: string; amount: string; source: { key: { namespace: string; index: number } }; transfer_id: string | null; topup_transfer_id: string | null; tx_hash: string | null }
interface Transfer { id: string; kind: string; key_purpose: string; key_namespace: string; key_index: number; from_address: string; to_address: string; fee: string; tx_hash: string; status: string }
interface Key { backend: string; namespace: string; purpose: string; application_id: number; key_index: string; public_key: Buffer }

describe('delegated sweeps (EIP-7702) signed by the PKCS#11 key store (SoftHSM2) on anvil: authorizations by the deposit keys, batches by the fee key', function () {
  this.timeout(180_000);
  let anvil: AnvilDevnet;
  let token: string;
  let env: HsmEvm | undefined;
  let svc: TestService;
  let app: CreatedApplication;
  let client: SigningClient;
  let hot: string;
  let fee: string;
  const q = async <R>(sql: string, bind: unknown[] = []) => (await svc.service.storage.database.sequelize.query(sql, { bind }))[0] as R[];
  const lower = (a: string) => a.toLowerCase();
  const balance = (a: string) => anvilRpc<string>(anvil.url, 'eth_getBalance', [a, 'latest']).then(BigInt);
  const newAddress = async (user: string) => (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string }).address;
  const items = () => q<Item>(
    `SELECT id::text AS id, from_address, chain_token_id, status, amount::text AS amount, source, transfer_id::text AS transfer_id, topup_transfer_id::text AS topup_transfer_id, tx_hash
       FROM collection_items WHERE application_id = $1 ORDER BY id`, [app.id]);
  const transfers = () => q<Transfer>(
    `SELECT id::text AS id, kind, key_purpose, key_namespace, key_index::int AS key_index, from_address, to_address, fee::text AS fee, tx_hash, status
       FROM transfers WHERE application_id = $1 ORDER BY id`, [app.id]);

  before(async () => {
    env = await startHsmEvm('delegated-hsm', Number(EVM_CHAIN_ID));
    ({ anvil, token, svc } = env);
    app = await svc.createApp({ chains: ['ETH'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_CHAIN);
    const fw = await pollUntil(() => q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]), (r) => r.length === 1, 30_000, 100);
    expect(fw.ok, 'the fee wallet exists').to.equal(true);
    fee = fw.result[0]!.address;
    // the operator funds the fee wallet only: it pays the deployments and the batches; the deposit addresses never get gas
    await sendNative(anvil.url, fee, ETHER, { wait: true });
    for (const [tokenId, nativeValue, threshold] of [[TOKEN_ID, (3000n * ETHER).toString(), ETHER.toString()], [ETH_TOKEN_ID, null, (ETHER / 1000n).toString()]] as const) {
      await q(`INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds, sweep_mode)
               VALUES ($1, $2, $3::numeric, 1000, $4::numeric, true, NULL, 'DELEGATED')`, [app.id, tokenId, threshold, nativeValue]);
    }
  });

  after(async () => {
    await env?.stop();
  });

  it(`${TOKEN_ADDRESSES} ERC-20 + ${NATIVE_ADDRESSES} native addresses swept in batches: the authorities on chain are the deposit keys on the token, each address delegated to the forwarder, no top-up`, async () => {
    const tokens: string[] = [];
    const natives: string[] = [];
    for (let i = 0; i < TOKEN_ADDRESSES; i++) tokens.push(await newAddress(`hsm-t-${i}`));
    for (let i = 0; i < NATIVE_ADDRESSES; i++) natives.push(await newAddress(`hsm-n-${i}`));
    const addresses = [...tokens, ...natives];
    const tokenAmounts = tokens.map((_a, i) => 42n * ETHER + BigInt(i));
    const nativeAmounts = natives.map((_a, i) => ETHER / 4n + 123_456_789n + BigInt(i));
    const hotEthBefore = await balance(hot);
    const hotTokenBefore = await erc20Balance(anvil.url, token, hot);
    const feeBefore = await balance(fee);
    for (const [i, a] of tokens.entries()) await mintErc20(anvil.url, token, a, tokenAmounts[i]!);
    for (const [i, a] of natives.entries()) await sendNative(anvil.url, a, nativeAmounts[i]!);

    const done = await pollUntil(() => items(), (rows) => rows.length === addresses.length && rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), 90_000, 200);
    expect(done.ok, JSON.stringify(done.result)).to.equal(true);
    expect(done.result.map((i) => [lower(i.from_address), i.chain_token_id, i.status]).sort()).to.deep.equal(
      [...tokens.map((a) => [lower(a), TOKEN_ID, 'SUCCESS']), ...natives.map((a) => [lower(a), ETH_TOKEN_ID, 'SUCCESS'])].sort());
    // every unit at the hot wallet: the fee wallet paid the gas, so a native item is its whole deposit
    for (const [i, a] of tokens.entries()) {
      expect(await erc20Balance(anvil.url, token, a), `${a} emptied`).to.equal(0n);
      expect(done.result.find((x) => lower(x.from_address) === lower(a))!.amount).to.equal(tokenAmounts[i]!.toString());
    }
    for (const [i, a] of natives.entries()) {
      expect(await balance(a), `${a} emptied`).to.equal(0n);
      expect(done.result.find((x) => lower(x.from_address) === lower(a))!.amount).to.equal(nativeAmounts[i]!.toString());
    }
    expect(await erc20Balance(anvil.url, token, hot) - hotTokenBefore, 'every token unit at the hot wallet').to.equal(tokenAmounts.reduce((s, v) => s + v, 0n));
    expect(await balance(hot) - hotEthBefore, 'every wei at the hot wallet').to.equal(nativeAmounts.reduce((s, v) => s + v, 0n));

    // every key the service used is on the token: the deposit keys, the fee key, the hot key
    const keys = await q<Key>('SELECT backend, namespace, purpose, application_id, key_index::text AS key_index, public_key FROM custody_keys ORDER BY purpose, key_index');
    expect(keys.every((k) => k.backend === 'pkcs11' && k.namespace === 'evm' && k.application_id === app.id), 'all on the token, evm namespace').to.equal(true);
    expect(keys.map((k) => k.purpose).sort()).to.deep.equal([...addresses.map(() => 'deposit'), 'fee', 'hot'].sort());
    const depositKeyAddresses = new Map(keys.filter((k) => k.purpose === 'deposit').map((k) => [Number(k.key_index), evmAddressOfKey(k.public_key)]));
    for (const item of done.result) {
      expect(depositKeyAddresses.get(item.source.key.index), `item ${item.id}: its address is the token's deposit key ${item.source.key.index}`).to.equal(lower(item.from_address));
    }
    const feeKey = keys.find((k) => k.purpose === 'fee')!;
    expect(evmAddressOfKey(feeKey.public_key), 'the fee wallet is the token\'s fee key').to.equal(lower(fee));

    // the transfers: the two deployments and the batches, all of the fee key; no top-up, no single sweep
    const all = await transfers();
    expect([...new Set(all.map((t) => t.kind))].sort(), 'DEPLOY and SWEEP_BATCH only').to.deep.equal(['DEPLOY', 'SWEEP_BATCH']);
    expect(all.filter((t) => t.kind === 'DEPLOY').length, 'each contract deployed once').to.equal(2);
    const batches = all.filter((t) => t.kind === 'SWEEP_BATCH');
    expect(batches.length, 'at least one batch').to.be.at.least(1);
    expect(new Set(done.result.map((i) => i.transfer_id)), 'every item in a batch').to.deep.equal(new Set(batches.map((b) => b.id)));
    const forwarder = forwarderDeployment(hot).address;
    const authorities: string[] = [];
    for (const t of all) {
      expect(t).to.include({ key_purpose: 'fee', key_namespace: 'evm', key_index: 0, status: 'SUCCESS' });
      expect(lower(t.from_address)).to.equal(lower(fee));
      const r = await anvilRpc<{ from: string; to: string; status: string; gasUsed: string; effectiveGasPrice: string }>(anvil.url, 'eth_getTransactionReceipt', [t.tx_hash]);
      expect(r.status, `${t.kind} ${t.id} succeeded`).to.equal('0x1');
      expect(lower(r.from), 'the node recovers the fee wallet from the HSM signature').to.equal(lower(fee));
      expect(BigInt(t.fee), 'the recorded fee is the fee paid').to.equal(BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice));
      if (t.kind !== 'SWEEP_BATCH') continue;
      expect(lower(r.to)).to.equal(lower(batchSweeperDeployment().address));
      expect(done.result.filter((i) => i.transfer_id === t.id).every((i) => i.tx_hash === t.tx_hash), 'each item carries its batch\'s hash').to.equal(true);
      const tx = await anvilRpc<{ type: string; authorizationList?: RpcAuthorization[] }>(anvil.url, 'eth_getTransactionByHash', [t.tx_hash]);
      const list = tx.authorizationList ?? [];
      expect(tx.type, 'a type-4 transaction where it carries authorizations').to.equal(list.length > 0 ? '0x4' : '0x2');
      for (const a of list) {
        expect(BigInt(a.chainId), 'for this chain only').to.equal(EVM_CHAIN_ID);
        expect(lower(a.address), 'delegating to the forwarder').to.equal(lower(forwarder));
        expect(BigInt(a.nonce), 'at the address\'s nonce (it never sent anything)').to.equal(0n);
        authorities.push(authorityOf(a));
      }
    }
    // the authorities recovered from the chain are exactly the deposit addresses, each once, each a key on the token
    expect([...authorities].sort(), 'one authorization per deposit address, signed by its key').to.deep.equal(addresses.map(lower).sort());
    const onToken = new Set(depositKeyAddresses.values());
    expect(authorities.every((a) => onToken.has(a)), 'every authority is a deposit key on the token').to.equal(true);
    for (const a of addresses) {
      expect(await anvilRpc<string>(anvil.url, 'eth_getCode', [a, 'latest']), `${a} delegated to the forwarder`).to.equal(delegationCode(forwarder));
      expect(BigInt(await anvilRpc<string>(anvil.url, 'eth_getTransactionCount', [a, 'latest'])), `${a}: its authorization applied once`).to.equal(1n);
    }
    // the fee wallet paid the deployments' and batches' fees, nothing else (no top-ups)
    expect(feeBefore - await balance(fee), 'the fee wallet paid exactly the recorded fees').to.equal(all.reduce((s, t) => s + BigInt(t.fee), 0n));
  });
});
