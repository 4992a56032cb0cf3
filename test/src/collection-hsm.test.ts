/**
 * Collection signed by the PKCS#11 key store (a SoftHSM2 token) on a real EVM node (anvil): a
 * native ETH sweep and an ERC-20 sweep with its gas top-up from the fee wallet. The deposit keys
 * and the fee wallet's key are generated on the token and recorded in custody_keys (purposes
 * deposit and fee), the addresses are those of the keys the token holds, the node recovers those
 * addresses as the senders of the signed transactions, and the amounts are exact.
 */
import { expect } from 'chai';
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { anvilRpc, erc20Balance, mintErc20, sendNative, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import type { TestService } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { waitForFunded, waitForHotWallet } from './support/payouts';
import { expectOk, pollUntil } from './support/expect';
import { ADDRESS_CREATE } from './support/recharge-types';
import { startHsmEvm, type HsmEvm } from './support/hsm-evm';

const ETH_CHAIN = 102;
const ETH_TOKEN_ID = 10200;
const TOKEN_ID = 10299;
const ETHER = 10n ** 18n;

/** The lower-case EVM address of a public key as custody_keys stores it: keccak256(x||y)[12:]. */
function evmAddressOf(publicKey: Buffer): string {
  const point = secp256k1.ProjectivePoint.fromHex(publicKey).toRawBytes(false);
  return '0x' + Buffer.from(keccak_256(point.subarray(1))).subarray(12).toString('hex');
}

interface Item { id: string; from_address: string; chain_token_id: number; status: string; amount: string; source: { key: { namespace: string; index: number } }; transfer_id: string | null; topup_transfer_id: string | null; fee_per_unit: string | null }
interface Transfer { id: string; kind: string; key_purpose: string; key_namespace: string; key_index: number; from_address: string; to_address: string; amount: string; sent_amount: string; fee: string; tx_hash: string; status: string }
interface Receipt { from: string; to: string; status: string; gasUsed: string; effectiveGasPrice: string }

describe('collection signed by the PKCS#11 key store (SoftHSM2) on anvil: a native sweep and an ERC-20 sweep with its gas top-up', function () {
  this.timeout(240_000);
  let anvil: AnvilDevnet;
  let token: string;
  let env: HsmEvm | undefined;
  let svc: TestService;
  let app: CreatedApplication;
  let client: SigningClient;
  let hot: string;
  const q = async <R>(sql: string, bind: unknown[] = []) => (await svc.service.storage.database.sequelize.query(sql, { bind }))[0] as R[];
  const lower = (a: string) => a.toLowerCase();
  const balance = (a: string) => anvilRpc<string>(anvil.url, 'eth_getBalance', [a, 'latest']).then(BigInt);
  const items = () => q<Item>(
    `SELECT id::text AS id, from_address, chain_token_id, status, amount::text AS amount, source, transfer_id::text AS transfer_id, topup_transfer_id::text AS topup_transfer_id,
            fee_per_unit::text AS fee_per_unit FROM collection_items WHERE application_id = $1 ORDER BY id`, [app.id]);
  const transfer = async (id: string) => (await q<Transfer>(
    `SELECT id::text AS id, kind, key_purpose, key_namespace, key_index::int AS key_index, from_address, to_address, amount::text AS amount, sent_amount::text AS sent_amount,
            fee::text AS fee, tx_hash, status FROM transfers WHERE id = $1`, [id]))[0]!;
  const receipt = (hash: string) => anvilRpc<Receipt>(anvil.url, 'eth_getTransactionReceipt', [hash]);

  before(async () => {
    env = await startHsmEvm('collect-hsm');
    ({ anvil, token, svc } = env);
    app = await svc.createApp({ chains: ['ETH'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_CHAIN);
    // fee quotes exist once the hot wallet holds what they quote
    await sendNative(anvil.url, hot, 10n * ETHER);
    await mintErc20(anvil.url, token, hot, 100n * ETHER);
    await waitForFunded(q, app.id, [ETH_TOKEN_ID, TOKEN_ID]);
    const quotes = await pollUntil(() => q<{ n: number }>('SELECT count(*)::int AS n FROM withdraw_fee_quotes WHERE chain_id = $1 AND chain_token_id = ANY($2::int[])', [ETH_CHAIN, [ETH_TOKEN_ID, TOKEN_ID]]), (r) => r[0]!.n === 2, 30_000, 100);
    expect(quotes.ok, 'fee quotes').to.equal(true);
    for (const [tokenId, nativeValue, threshold] of [[TOKEN_ID, (3000n * ETHER).toString(), ETHER.toString()], [ETH_TOKEN_ID, null, (ETHER / 1000n).toString()]] as const) {
      await q(`INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds)
               VALUES ($1, $2, $3::numeric, 1000, $4::numeric, true, NULL)`, [app.id, tokenId, threshold, nativeValue]);
    }
  });

  after(async () => {
    await env?.stop();
  });

  it('the deposit keys and the fee key are generated on the token (custody_keys purposes deposit and fee); both sweeps succeed, signed there, with exact amounts', async () => {
    const nativeAddress = (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: 'hsm-native' })) as { address: string }).address;
    const tokenAddress = (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: 'hsm-token' })) as { address: string }).address;
    const nativeAmount = ETHER / 4n + 123_456_789n;
    const tokenAmount = 42n * ETHER + 7n;
    const hotEthBefore = await balance(hot);
    const hotTokenBefore = await erc20Balance(anvil.url, token, hot);
    await sendNative(anvil.url, nativeAddress, nativeAmount);
    await mintErc20(anvil.url, token, tokenAddress, tokenAmount);
    // the token item needs gas: the fee wallet (its key made on the token) is empty until funded
    const waiting = await pollUntil(() => items(), (rows) => rows.some((i) => i.chain_token_id === TOKEN_ID && i.status === 'PLANNED'), 60_000, 100);
    expect(waiting.ok, JSON.stringify(waiting.result)).to.equal(true);
    const fee = await pollUntil(() => q<{ address: string; key_namespace: string; key_index: number }>('SELECT address, key_namespace, key_index FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]), (r) => r.length === 1, 30_000, 100);
    expect(fee.ok, 'the fee wallet exists').to.equal(true);
    const feeAddress = fee.result[0]!.address;
    await sendNative(anvil.url, feeAddress, ETHER);

    const done = await pollUntil(() => items(), (rows) => rows.length === 2 && rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), 120_000, 200);
    expect(done.ok, JSON.stringify(done.result)).to.equal(true);
    expect(done.result.map((i) => [lower(i.from_address), i.chain_token_id, i.status]).sort()).to.deep.equal(
      [[lower(nativeAddress), ETH_TOKEN_ID, 'SUCCESS'], [lower(tokenAddress), TOKEN_ID, 'SUCCESS']].sort());

    // every key the service used is on the token, recorded with its purpose
    const keys = await q<{ backend: string; namespace: string; purpose: string; application_id: number; key_index: string; public_key: Buffer }>(
      'SELECT backend, namespace, purpose, application_id, key_index::text AS key_index, public_key FROM custody_keys ORDER BY purpose, key_index');
    expect(keys.every((k) => k.backend === 'pkcs11' && k.namespace === 'evm' && k.application_id === app.id), 'all on the token, evm namespace').to.equal(true);
    const keyOf = (purpose: string, index: number) => keys.find((k) => k.purpose === purpose && Number(k.key_index) === index);
    expect(keys.map((k) => k.purpose).sort()).to.deep.equal(['deposit', 'deposit', 'fee', 'hot']);
    const feeKey = keyOf('fee', 0);
    expect(feeKey, 'the fee key (index 0) on the token').to.not.equal(undefined);
    expect(evmAddressOf(feeKey!.public_key)).to.equal(lower(feeAddress));
    expect(fee.result[0]).to.include({ key_namespace: 'evm', key_index: 0 });
    expect(evmAddressOf(keys.find((k) => k.purpose === 'hot')!.public_key)).to.equal(lower(hot));

    for (const item of done.result) {
      const depositKey = keyOf('deposit', item.source.key.index);
      expect(depositKey, `the deposit key ${item.source.key.index} on the token`).to.not.equal(undefined);
      expect(evmAddressOf(depositKey!.public_key), 'the deposit address is the token key\'s').to.equal(lower(item.from_address));
      const sweep = await transfer(item.transfer_id!);
      expect(sweep).to.include({ kind: 'SWEEP', key_purpose: 'deposit', key_namespace: 'evm', key_index: item.source.key.index, status: 'SUCCESS', to_address: hot });
      const r = await receipt(sweep.tx_hash);
      expect(r.status).to.equal('0x1');
      expect(lower(r.from), 'the node recovers the deposit address from the HSM signature').to.equal(lower(item.from_address));
      const paid = BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice);
      expect(BigInt(sweep.fee), 'the recorded fee is the fee paid').to.equal(paid);
      if (item.chain_token_id === ETH_TOKEN_ID) {
        // the whole balance left, the exact fee out of it: the address is empty, the rest arrived
        expect(item.topup_transfer_id).to.equal(null);
        expect(BigInt(sweep.sent_amount) + paid).to.equal(nativeAmount);
        expect(BigInt(item.amount), 'the item records what arrived').to.equal(BigInt(sweep.sent_amount));
        expect(await balance(item.from_address)).to.equal(0n);
        expect(await balance(hot) - hotEthBefore, 'arrived at the hot wallet').to.equal(BigInt(sweep.sent_amount));
      } else {
        expect(lower(r.to)).to.equal(lower(token));
        expect(BigInt(item.amount)).to.equal(tokenAmount);
        expect(await erc20Balance(anvil.url, token, item.from_address)).to.equal(0n);
        expect(await erc20Balance(anvil.url, token, hot) - hotTokenBefore, 'every token unit at the hot wallet').to.equal(tokenAmount);
        // the top-up: signed by the fee key on the token, exactly gas limit × measured price, the sweep's fee paid out of it
        const topup = await transfer(item.topup_transfer_id!);
        expect(topup).to.include({ kind: 'TOP_UP', key_purpose: 'fee', key_namespace: 'evm', key_index: 0, status: 'SUCCESS', from_address: feeAddress, to_address: item.from_address });
        const tr = await receipt(topup.tx_hash);
        expect(tr.status).to.equal('0x1');
        expect(lower(tr.from), 'the node recovers the fee wallet from the HSM signature').to.equal(lower(feeAddress));
        expect(lower(tr.to)).to.equal(lower(item.from_address));
        const tx = await anvilRpc<{ gas: string; value: string }>(anvil.url, 'eth_getTransactionByHash', [sweep.tx_hash]);
        const topupTx = await anvilRpc<{ value: string }>(anvil.url, 'eth_getTransactionByHash', [topup.tx_hash]);
        expect(BigInt(topupTx.value), 'the top-up sent its amount').to.equal(BigInt(topup.amount));
        expect(BigInt(topup.amount), 'top-up = gas limit × measured price').to.equal(BigInt(tx.gas) * BigInt(item.fee_per_unit!));
        expect(await balance(item.from_address), 'gas left = top-up − the sweep\'s fee').to.equal(BigInt(topup.amount) - paid);
        const topupPaid = BigInt(tr.gasUsed) * BigInt(tr.effectiveGasPrice);
        expect(await balance(feeAddress), 'the fee wallet paid the top-up and its fee, nothing else').to.equal(ETHER - BigInt(topup.amount) - topupPaid);
      }
    }
  });
});
