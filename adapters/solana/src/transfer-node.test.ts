import { expect } from 'chai';
import { join } from 'node:path';
import { LiteSVM } from 'litesvm';
import { Message, PublicKey as SolanaPublicKey, VersionedTransaction } from '@solana/web3.js';
import type { ChainEndpoint, SignedTransaction, TransferInput } from '@wcs/core';
import { fixtureReader, rejected, startReplayServer, type ReplayServer, type Reply, type SeenRequest } from '@wcs/core/testing';
import { ChainRpcError } from '@wcs/core';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './scanner';
import { SolanaTransferCrafter, associatedTokenAddress, base58Encode } from './transfer';
import { SolanaTransferNode, type SolanaTransferNodeOptions } from './transfer-node';
import { depositKey, hotKey, request, signAndCombine, sweepRequest } from './transfer.test';
import { LitesvmRpc } from './litesvm-rpc.test-helper';

/**
 * The Solana transfer node against recorded RPC responses (src/fixtures, sources in SOURCE.md)
 * replayed by a local HTTP server: no Solana node is reachable from the test environment. What
 * the test changes in or adds to a recorded answer is said where it does it (and in SOURCE.md).
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
type Json = Record<string, any>;
const fixture = (name: string): Json => FIXTURES.json<Json>(name);

const LATEST = fixture('getLatestBlockhash.docs-example.json'); // EkSnNWid…, lastValidBlockHeight 3090
const FEE = fixture('getFeeForMessage.docs-example.json'); // 5000
const EPOCH = fixture('getEpochInfo.docs-example.json'); // absoluteSlot 166598, blockHeight 166500
const STATUSES = fixture('getSignatureStatuses.docs-example.json'); // [confirmed slot 72, null], context slot 82
const STATUSES_FINAL = fixture('getSignatureStatuses.finalized.docs-example.json'); // [finalized slot 48, null]
const RENT = fixture('getMinimumBalanceForRentExemption.docs-example.json'); // 500
const BALANCE = fixture('getBalance.docs-example.json'); // 0
const NULL_ACCOUNT = fixture('getAccountInfo.null.json').result.value; // null (mainnet, slot 146423291)
const USDC_MINT = fixture('getAccountInfo.usdc-mint.json').result.value; // decimals 6, Token program
const VINES_USDC = fixture('getAccountInfo.usdc-token-account.vines1.json').result.value; // 36010000000 USDC of vines1…
const SENT = fixture('sendTransaction.296E1o.json'); // result 296E1ou…
const BLOCKHASH_NOT_FOUND = fixture('sendTransaction.blockhash-not-found.json');
const INSTRUCTION_ERROR = fixture('sendTransaction.instruction-error.json');
const ALREADY_PROCESSED = fixture('sendTransaction.already-processed.error.json'); // the error object only
const NODE_BEHIND = fixture('error.node-behind.error.json'); // the error object only
const INVALID_PARAM = fixture('error.invalid-param.json');
const TX_SOL = fixture('getTransaction.5QMfuq.sol.json'); // fee 10000, succeeded
const TX_FAILED = { jsonrpc: '2.0', result: fixture('getTransaction.5D3ksh.failed.result.json'), id: 1 }; // fee 5000, InstructionError (recorded without the envelope)

const SOL_SIG = '5QMfuqThWSMMpLCRe3tk7qn7iSwWKfJV8EvD1ZPvyqAWa7Z2JftZ4rPq8YCxCwzSykX7dMkDB8RrovQMoL9ZZWKY';
const FAILED_SIG = '5D3kshpCeGwhxBBPRQXmD48XvENJKXSwR79v6ceZBRAS41d2JeqMv3d2Yy9aZ1LADwQdDiop4ErRihnfYudfRJBy';
const OTHER_SIG = '296E1ou3V9rRVktzCqNpzbzcTZMxTnFJCK2pWRoxKVidRfQam1KLRv6ETbKtf2S4CW1MyRCbeVairQQ3QWTPMRmt';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const VINES = 'vines1vzrYbzLMRdu58ou5XTby4qAqVRLmqo36NKPTg';
const BLOCKHASH = 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N';
const FAST = { attempts: 3, backoffMs: 1 };

const from = hotKey(0);
const to = hotKey(1).address;
const crafter = new SolanaTransferCrafter();

interface Call {
  readonly id: number;
  readonly method: string;
  readonly params: any[];
}

/** A recorded answer for this call: its result or error, with the call's id. */
const answer = (recorded: Json, call: Call): Json => ({ ...recorded, id: call.id });
const errorAnswer = (error: Json, call: Call): Json => ({ jsonrpc: '2.0', error, id: call.id });
const result = (value: unknown, call: Call): Json => ({ jsonrpc: '2.0', result: value, id: call.id });
/** getMultipleAccounts answers assembled from recorded getAccountInfo values (test-made list, recorded accounts). */
const accounts = (values: unknown[], call: Call): Json => ({ jsonrpc: '2.0', result: { context: { slot: 261686915 }, value: values }, id: call.id });
/** A getSignatureStatuses answer with the recorded entries chosen per signature (test-made list, recorded entries). */
const statuses = (entries: unknown[], call: Call, contextSlot = 82): Json => ({ jsonrpc: '2.0', result: { context: { slot: contextSlot }, value: entries }, id: call.id });

type Handler = (call: Call, n: number) => Json | Reply;

describe('SolanaTransferNode (recorded RPC responses)', () => {
  let server: ReplayServer | undefined;
  let calls: Call[] = [];
  afterEach(async () => {
    await server?.close();
    server = undefined;
    calls = [];
  });

  /** A node whose fake RPC answers each call with `answers[method]` (batches item by item; a Reply for a whole request). */
  async function nodeFor(answers: Record<string, Handler>, endpoint: Partial<ChainEndpoint> = {}, options: SolanaTransferNodeOptions = {}) {
    server = await startReplayServer((req: SeenRequest) => {
      const body = JSON.parse(req.body) as Call | Call[];
      const list = Array.isArray(body) ? body : [body];
      const out: Json[] = [];
      for (const call of list) {
        calls.push(call);
        const a = answers[call.method];
        if (a === undefined) return { status: 500, body: `no answer for ${call.method}` };
        const v = a(call, calls.filter((c) => c.method === call.method).length);
        if (v === 'hang' || 'body' in (v as Json)) return v as Reply;
        out.push(v as Json);
      }
      // "raw:<digits>" strings are written as bare JSON numbers (integers a JS number cannot hold)
      return { body: JSON.stringify(Array.isArray(body) ? out : out[0]).replace(/"raw:(\d+)"/g, '$1') };
    });
    return new SolanaTransferNode({ url: server.url, ...endpoint }, { ...FAST, ...options });
  }

  const ofMethod = (m: string) => calls.filter((c) => c.method === m);

  describe('transferInput', () => {
    it('SOL: the confirmed blockhash and its last valid height, the base fee from getFeeForMessage', async () => {
      const node = await nodeFor({ getLatestBlockhash: (c) => answer(LATEST, c), getFeeForMessage: (c) => answer(FEE, c) });
      const input = await node.transferInput(request(from, to, 1_000_000n));
      expect(input).to.deep.equal({ recentBlockhash: BLOCKHASH, lastValidBlockHeight: '3090', lamportsPerSignature: '5000' });
      expect(calls.map((c) => c.method)).to.deep.equal(['getLatestBlockhash', 'getFeeForMessage']);
      expect(calls[0]!.params).to.deep.equal([{ commitment: 'confirmed' }]);
      // the fee probe: a one-signature message of the hot wallet on that very blockhash
      const probe = Message.from(Buffer.from(calls[1]!.params[0], 'base64'));
      expect(probe.recentBlockhash).to.equal(BLOCKHASH);
      expect(probe.header.numRequiredSignatures).to.equal(1);
      expect(probe.accountKeys[0]!.toBase58()).to.equal(from.address);
      expect(server!.requests).to.have.length(2);
    });

    it('SPL token to an owner without its associated account: mint decimals and program, the rent of the account to create', async () => {
      const node = await nodeFor({
        getLatestBlockhash: (c) => answer(LATEST, c),
        getMultipleAccounts: (c) => accounts([USDC_MINT, NULL_ACCOUNT, NULL_ACCOUNT], c),
        getFeeForMessage: (c) => answer(FEE, c),
        getMinimumBalanceForRentExemption: (c) => answer(RENT, c),
      });
      const input = await node.transferInput(request(from, to, 1_000n, USDC));
      expect(input).to.deep.equal({
        recentBlockhash: BLOCKHASH, lastValidBlockHeight: '3090', lamportsPerSignature: '5000',
        mintDecimals: 6, tokenProgram: TOKEN_PROGRAM_ID, destinationTokenAccountExists: false, tokenAccountRent: '500',
      });
      expect(ofMethod('getMultipleAccounts')[0]!.params).to.deep.equal([
        [USDC, associatedTokenAddress(to, USDC, TOKEN_PROGRAM_ID), associatedTokenAddress(to, USDC, TOKEN_2022_PROGRAM_ID)],
        { encoding: 'jsonParsed', commitment: 'confirmed' },
      ]);
      expect(ofMethod('getMinimumBalanceForRentExemption')[0]!.params).to.deep.equal([165, { commitment: 'confirmed' }]);
      expect(server!.requests).to.have.length(2); // two batches
    });

    it('SPL token to an owner whose associated account exists: no rent asked', async () => {
      const node = await nodeFor({
        getLatestBlockhash: (c) => answer(LATEST, c),
        getMultipleAccounts: (c) => accounts([USDC_MINT, VINES_USDC, NULL_ACCOUNT], c),
        getFeeForMessage: (c) => answer(FEE, c),
      });
      const input = await node.transferInput(request(from, VINES, 1_000n, USDC));
      expect(input).to.deep.equal({
        recentBlockhash: BLOCKHASH, lastValidBlockHeight: '3090', lamportsPerSignature: '5000',
        mintDecimals: 6, tokenProgram: TOKEN_PROGRAM_ID, destinationTokenAccountExists: true,
      });
      expect(ofMethod('getMinimumBalanceForRentExemption')).to.have.length(0);
    });

    it('adds the priority fee of the options (limits per kind)', async () => {
      const node = await nodeFor({
        getLatestBlockhash: (c) => answer(LATEST, c),
        getMultipleAccounts: (c) => accounts([USDC_MINT, VINES_USDC, NULL_ACCOUNT], c),
        getFeeForMessage: (c) => answer(FEE, c),
      }, {}, { computeUnitPrice: 2500n, computeUnitLimits: { token: 50_000 } });
      const [sol, token] = await node.transferInputs([request(from, to, 1n), request(from, VINES, 1n, USDC)]);
      expect(sol).to.deep.include({ computeUnitPrice: '2500', computeUnitLimit: 1000 });
      expect(token).to.deep.include({ computeUnitPrice: '2500', computeUnitLimit: 50_000 });
      expect(crafter.craft(request(from, to, 1n), sol as TransferInput).maxFee).to.equal(5000n + 3n); // 1000 × 0.0025 rounded up
    });

    it('transferInputs: shared reads once, the accounts of all requests in one read, a missing mint is its request\'s Error only', async () => {
      const unknownMint = hotKey(9).address;
      const node = await nodeFor({
        getLatestBlockhash: (c) => answer(LATEST, c),
        getMultipleAccounts: (c) => accounts((c.params[0] as string[]).map((k) => (k === USDC ? USDC_MINT : NULL_ACCOUNT)), c),
        getFeeForMessage: (c) => answer(FEE, c),
        getMinimumBalanceForRentExemption: (c) => answer(RENT, c),
      });
      const out = await node.transferInputs([request(from, to, 5n), request(from, to, 6n, USDC), request(from, to, 7n, unknownMint), request(from, VINES, 8n, USDC)]);
      expect(out[0]).to.deep.equal({ recentBlockhash: BLOCKHASH, lastValidBlockHeight: '3090', lamportsPerSignature: '5000' });
      expect(out[1]).to.deep.include({ destinationTokenAccountExists: false, tokenAccountRent: '500', mintDecimals: 6 });
      expect(out[2]).to.be.instanceOf(ChainRpcError).and.to.include({ errorName: 'RPC_ERROR' });
      expect((out[2] as Error).message).to.match(/does not exist/);
      expect(out[3]).to.deep.include({ destinationTokenAccountExists: false });
      expect(server!.requests).to.have.length(2);
      expect(ofMethod('getLatestBlockhash')).to.have.length(1);
      expect(ofMethod('getFeeForMessage')).to.have.length(1);
      expect(ofMethod('getMultipleAccounts')).to.have.length(1);
      expect(ofMethod('getMinimumBalanceForRentExemption')).to.have.length(1); // one size (165)
    });

    it('a failed account read is the token requests\' Error; the SOL request is still answered', async () => {
      const node = await nodeFor({
        getLatestBlockhash: (c) => answer(LATEST, c),
        getMultipleAccounts: (c) => answer(INVALID_PARAM, c),
        getFeeForMessage: (c) => answer(FEE, c),
      });
      const [sol, token] = await node.transferInputs([request(from, to, 5n), request(from, to, 6n, USDC)]);
      expect(sol).to.deep.equal({ recentBlockhash: BLOCKHASH, lastValidBlockHeight: '3090', lamportsPerSignature: '5000' });
      expect(token).to.be.instanceOf(ChainRpcError).and.to.include({ errorName: 'RPC_ERROR', rpcCode: -32602 });
    });

    describe('sweeps (a fee payer; closing from\'s token account)', () => {
      const deposit = depositKey(3);
      const hot = from;
      /** test-made: the recorded vines1 USDC account served as the deposit key's (its owner replaced) */
      const DEPOSIT_USDC = { ...VINES_USDC, data: { ...VINES_USDC.data, parsed: { ...VINES_USDC.data.parsed, info: { ...VINES_USDC.data.parsed.info, owner: deposit.address } } } };

      it('native with a fee payer: the same reads and input as a payout; nothing reads from\'s SOL', async () => {
        const node = await nodeFor({ getLatestBlockhash: (c) => answer(LATEST, c), getFeeForMessage: (c) => answer(FEE, c) });
        const input = await node.transferInput(sweepRequest(deposit, hot, hot.address, 1_000_000n));
        expect(input).to.deep.equal({ recentBlockhash: BLOCKHASH, lastValidBlockHeight: '3090', lamportsPerSignature: '5000' });
        expect(calls.map((c) => c.method)).to.deep.equal(['getLatestBlockhash', 'getFeeForMessage']);
        expect(crafter.craft(sweepRequest(deposit, hot, hot.address, 1_000_000n), input).maxFee).to.equal(10_000n);
      });

      it('SPL with closeTokenAccount: from\'s associated accounts are read too; the one under the mint\'s program is sourceTokenBalance', async () => {
        const node = await nodeFor({
          getLatestBlockhash: (c) => answer(LATEST, c),
          getMultipleAccounts: (c) => accounts([USDC_MINT, NULL_ACCOUNT, NULL_ACCOUNT, DEPOSIT_USDC, NULL_ACCOUNT], c),
          getFeeForMessage: (c) => answer(FEE, c),
          getMinimumBalanceForRentExemption: (c) => answer(RENT, c),
        });
        const req = sweepRequest(deposit, hot, hot.address, 36010000000n, USDC, true);
        const input = await node.transferInput(req);
        expect(input).to.deep.equal({
          recentBlockhash: BLOCKHASH, lastValidBlockHeight: '3090', lamportsPerSignature: '5000',
          mintDecimals: 6, tokenProgram: TOKEN_PROGRAM_ID, destinationTokenAccountExists: false, sourceTokenBalance: '36010000000', tokenAccountRent: '500',
        });
        expect(ofMethod('getMultipleAccounts')[0]!.params[0]).to.deep.equal([
          USDC, associatedTokenAddress(hot.address, USDC, TOKEN_PROGRAM_ID), associatedTokenAddress(hot.address, USDC, TOKEN_2022_PROGRAM_ID),
          associatedTokenAddress(deposit.address, USDC, TOKEN_PROGRAM_ID), associatedTokenAddress(deposit.address, USDC, TOKEN_2022_PROGRAM_ID),
        ]);
        expect(server!.requests).to.have.length(2);
        expect(crafter.craft(req, input).maxFee).to.equal(10_000n + 500n);
        // the crafter closes only an account it empties
        expect(() => crafter.craft({ ...req, amount: 36009999999n }, input)).to.throw(/whole balance/);
      });

      it('SPL with closeTokenAccount: a missing source account is balance 0 (the crafter refuses), a foreign one the request\'s Error', async () => {
        let node = await nodeFor({
          getLatestBlockhash: (c) => answer(LATEST, c),
          getMultipleAccounts: (c) => accounts([USDC_MINT, VINES_USDC, NULL_ACCOUNT, NULL_ACCOUNT, NULL_ACCOUNT], c),
          getFeeForMessage: (c) => answer(FEE, c),
        });
        const input = await node.transferInput(sweepRequest(deposit, hot, VINES, 5n, USDC, true));
        expect(input).to.deep.include({ destinationTokenAccountExists: true, sourceTokenBalance: '0' });
        expect(() => crafter.craft(sweepRequest(deposit, hot, VINES, 5n, USDC, true), input)).to.throw(/whole balance/);
        await server!.close();
        // the recorded vines1 account (another owner) served at the deposit key's associated address
        node = await nodeFor({
          getLatestBlockhash: (c) => answer(LATEST, c),
          getMultipleAccounts: (c) => accounts([USDC_MINT, VINES_USDC, NULL_ACCOUNT, VINES_USDC, NULL_ACCOUNT], c),
          getFeeForMessage: (c) => answer(FEE, c),
        });
        const [sweep, payout] = await node.transferInputs([sweepRequest(deposit, hot, VINES, 5n, USDC, true), request(hot, VINES, 5n, USDC)]);
        expect(sweep).to.be.instanceOf(ChainRpcError).and.to.include({ errorName: 'RPC_ERROR' });
        expect((sweep as Error).message).to.contain(`for ${deposit.address}`);
        expect(payout).to.deep.include({ destinationTokenAccountExists: true });
        expect(payout).not.to.have.property('sourceTokenBalance');
      });

      it('TypeError before anything is sent: a fee payer that is not its key, closing on a native transfer', async () => {
        const node = await nodeFor({});
        await rejected(node.transferInput({ ...sweepRequest(deposit, hot, hot.address, 1n), feePayer: { address: to, publicKey: { curve: 'ed25519', bytes: hot.publicKey } } }), TypeError);
        await rejected(node.transferInput(sweepRequest(deposit, hot, hot.address, 1n, null, true)), TypeError);
        await rejected(node.transferInput({ ...sweepRequest(deposit, hot, hot.address, 1n, USDC), closeTokenAccount: 'yes' as unknown as boolean }), TypeError);
        expect(calls).to.have.length(0);
      });
    });

    it('throws when the shared reads fail, and TypeError for a malformed request before anything is sent', async () => {
      let node = await nodeFor({ getLatestBlockhash: (c) => errorAnswer(NODE_BEHIND, c) });
      const e = await rejected(node.transferInput(request(from, to, 1n)), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_UNAVAILABLE', attempts: 3, rpcCode: -32005 });
      await server!.close();
      calls = [];
      node = await nodeFor({});
      await rejected(node.transferInput({ ...request(from, to, 1n), amount: 0n }), TypeError);
      await rejected(node.transferInput({ ...request(from, to, 1n), to: to.toLowerCase() }), TypeError);
      await rejected(node.transferInput({ ...request(from, to, 1n), from: to }), TypeError);
      await rejected(node.transferInput(request(from, to, 1n, 'not-a-mint')), TypeError);
      expect(calls).to.have.length(0);
    });
  });

  describe('balance', () => {
    it('native: getBalance less the rent-exempt minimum of the hot account, exact above 2^53', async () => {
      let node = await nodeFor({ getBalance: (c) => answer(BALANCE, c), getMinimumBalanceForRentExemption: (c) => answer(RENT, c) });
      expect(await node.balance(from.address, null)).to.equal(0n);
      expect(calls.map((c) => [c.method, c.params])).to.deep.equal([
        ['getBalance', [from.address, { commitment: 'confirmed' }]],
        ['getMinimumBalanceForRentExemption', [0, { commitment: 'confirmed' }]],
      ]);
      await server!.close();
      // test-made: the recorded answer with a u64 balance that a JS number cannot hold (served as text)
      node = await nodeFor({
        getBalance: (c) => ({ ...answer(BALANCE, c), result: { ...BALANCE.result, value: 'raw:18446744073709551615' } }),
        getMinimumBalanceForRentExemption: (c) => answer(RENT, c),
      });
      expect(await node.balance(from.address, null)).to.equal(18446744073709551615n - 500n);
    });

    it('sweepableBalance, native: all of getBalance (confirmed), the rent-exempt minimum included, exact above 2^53; nothing else asked', async () => {
      let node = await nodeFor({ getBalance: (c) => answer(BALANCE, c) });
      expect(await node.sweepableBalance(from.address, null)).to.equal(0n);
      expect(calls.map((c) => [c.method, c.params])).to.deep.equal([['getBalance', [from.address, { commitment: 'confirmed' }]]]);
      await server!.close();
      calls = [];
      // test-made: the recorded answer with a u64 balance that a JS number cannot hold (served as text)
      node = await nodeFor({ getBalance: (c) => ({ ...answer(BALANCE, c), result: { ...BALANCE.result, value: 'raw:18446744073709551615' } }), getMinimumBalanceForRentExemption: (c) => answer(RENT, c) });
      expect(await node.sweepableBalance(from.address, null)).to.equal(18446744073709551615n);
      expect(await node.balance(from.address, null), 'balance withholds the minimum (500)').to.equal(18446744073709551615n - 500n);
      await server!.close();
      node = await nodeFor({ getBalance: (c) => answer(INVALID_PARAM, c) });
      expect(await rejected(node.sweepableBalance(from.address, null), ChainRpcError)).to.include({ errorName: 'RPC_ERROR' });
      await rejected(node.sweepableBalance('not-an-address', null), TypeError);
    });

    it('sweepableBalance, SPL: the whole token amount of the owner\'s associated account, as balance reads it', async () => {
      const node = await nodeFor({ getMultipleAccounts: (c) => accounts([USDC_MINT, VINES_USDC, NULL_ACCOUNT], c) });
      expect(await node.sweepableBalance(VINES, USDC)).to.equal(36010000000n);
      expect(calls.map((c) => c.method)).to.deep.equal(['getMultipleAccounts']);
      expect(calls[0]!.params[0]).to.deep.equal([USDC, associatedTokenAddress(VINES, USDC, TOKEN_PROGRAM_ID), associatedTokenAddress(VINES, USDC, TOKEN_2022_PROGRAM_ID)]);
    });

    it('SPL: the owner\'s associated token account under the mint\'s program; 0 without one', async () => {
      let node = await nodeFor({ getMultipleAccounts: (c) => accounts([USDC_MINT, VINES_USDC, NULL_ACCOUNT], c) });
      expect(await node.balance(VINES, USDC)).to.equal(36010000000n);
      expect(calls[0]!.params[0]).to.deep.equal([USDC, associatedTokenAddress(VINES, USDC, TOKEN_PROGRAM_ID), associatedTokenAddress(VINES, USDC, TOKEN_2022_PROGRAM_ID)]);
      await server!.close();
      node = await nodeFor({ getMultipleAccounts: (c) => accounts([USDC_MINT, NULL_ACCOUNT, NULL_ACCOUNT], c) });
      expect(await node.balance(VINES, USDC)).to.equal(0n);
      await server!.close();
      // the recorded token account served for another owner: not its account
      node = await nodeFor({ getMultipleAccounts: (c) => accounts([USDC_MINT, VINES_USDC, NULL_ACCOUNT], c) });
      expect(await rejected(node.balance(to, USDC), ChainRpcError)).to.include({ errorName: 'RPC_ERROR' });
    });
  });

  describe('broadcast', () => {
    /** The test's own transaction, crafted on the recorded blockhash and signed with the crafter tests' key. */
    const signed = (amount = 1_000_000n): SignedTransaction => signAndCombine(crafter, crafter.craft(request(from, to, amount), {
      recentBlockhash: BLOCKHASH, lastValidBlockHeight: '3090', lamportsPerSignature: '5000',
    }), from);
    /** The recorded sendTransaction answer as a node gives it for this transaction (its signature echoed: test-made). */
    const accepted = (tx: SignedTransaction) => (c: Call) => ({ ...answer(SENT, c), result: tx.txHash });

    it('ACCEPTED when the node answers the transaction\'s signature; base64 with preflight at confirmed', async () => {
      const tx = signed();
      const node = await nodeFor({ sendTransaction: accepted(tx) });
      expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ACCEPTED', txHash: tx.txHash });
      expect(calls).to.have.length(1);
      expect(calls[0]!.params).to.deep.equal([Buffer.from(tx.raw).toString('base64'), { encoding: 'base64', skipPreflight: false, preflightCommitment: 'confirmed' }]);
    });

    it('RPC_ERROR when the node answers another signature (the recorded answer as it is)', async () => {
      const node = await nodeFor({ sendTransaction: (c) => answer(SENT, c) });
      const e = await rejected(node.broadcast(signed()), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_ERROR' });
      expect(e.message).to.contain(OTHER_SIG);
    });

    it('ALREADY_KNOWN for "already been processed"', async () => {
      const tx = signed();
      const node = await nodeFor({ sendTransaction: (c) => errorAnswer(ALREADY_PROCESSED, c) });
      expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: tx.txHash });
      expect(calls).to.have.length(1);
    });

    it('Blockhash not found: RPC_TRY_LATER when the signature is unknown (the blockhash may be newer than the node\'s view), ALREADY_KNOWN when it is known', async () => {
      const tx = signed();
      let node = await nodeFor({ sendTransaction: (c) => answer(BLOCKHASH_NOT_FOUND, c), getSignatureStatuses: (c) => statuses([STATUSES.result.value[1]], c) });
      const e = await rejected(node.broadcast(tx), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_TRY_LATER', rpcCode: -32002 });
      expect(e.message).to.contain('Blockhash not found');
      expect(ofMethod('getSignatureStatuses')[0]!.params).to.deep.equal([[tx.txHash], { searchTransactionHistory: true }]);
      await server!.close();
      node = await nodeFor({ sendTransaction: (c) => answer(BLOCKHASH_NOT_FOUND, c), getSignatureStatuses: (c) => statuses([STATUSES.result.value[0]], c) });
      expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: tx.txHash });
    });

    it('REJECTED with the node\'s reason for a simulation failure, unless the signature is known', async () => {
      const tx = signed();
      let node = await nodeFor({ sendTransaction: (c) => answer(INSTRUCTION_ERROR, c), getSignatureStatuses: (c) => statuses([null], c) });
      const out = await node.broadcast(tx);
      expect(out).to.deep.equal({
        outcome: 'REJECTED',
        reason: 'Transaction simulation failed: Error processing Instruction 2: custom program error: 0x1786 ({"InstructionError":[2,{"Custom":6022}]})',
      });
      await server!.close();
      node = await nodeFor({ sendTransaction: (c) => answer(INSTRUCTION_ERROR, c), getSignatureStatuses: (c) => statuses([STATUSES_FINAL.result.value[0]], c) });
      expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: tx.txHash });
    });

    it('REJECTED for a signature that does not verify (test-made -32003), without a status read', async () => {
      const node = await nodeFor({ sendTransaction: (c) => errorAnswer({ code: -32003, message: 'Transaction signature verification failure' }, c) });
      expect(await node.broadcast(signed())).to.deep.equal({ outcome: 'REJECTED', reason: 'Transaction signature verification failure' });
      expect(calls).to.have.length(1);
    });

    it('RPC_TRY_LATER for a node behind (not retried), for AccountInUse, and for HTTP 429; RPC_UNAVAILABLE for HTTP 503', async () => {
      let node = await nodeFor({ sendTransaction: (c) => errorAnswer(NODE_BEHIND, c) });
      const behind = await rejected(node.broadcast(signed()), ChainRpcError);
      expect(behind).to.include({ errorName: 'RPC_TRY_LATER', rpcCode: -32005 });
      expect(behind.message).to.contain('Node is behind by 153 slots');
      expect(calls).to.have.length(1);
      await server!.close();
      // test-made: the recorded instruction-error answer with data.err AccountInUse
      node = await nodeFor({ sendTransaction: (c) => ({ ...answer(INSTRUCTION_ERROR, c), error: { ...INSTRUCTION_ERROR.error, message: 'Transaction simulation failed: Account in use', data: { ...INSTRUCTION_ERROR.error.data, err: 'AccountInUse' } } }) });
      expect(await rejected(node.broadcast(signed()), ChainRpcError)).to.include({ errorName: 'RPC_TRY_LATER' });
      await server!.close();
      node = await nodeFor({ sendTransaction: () => ({ status: 429, body: 'Too Many Requests' }) as unknown as Json });
      const limited = await rejected(node.broadcast(signed()), ChainRpcError);
      expect(limited).to.include({ errorName: 'RPC_TRY_LATER', responseStatus: 429, attempts: 3 });
      await server!.close();
      node = await nodeFor({ sendTransaction: () => ({ status: 503, body: 'Service Unavailable' }) as unknown as Json });
      expect(await rejected(node.broadcast(signed()), ChainRpcError)).to.include({ errorName: 'RPC_UNAVAILABLE', responseStatus: 503, attempts: 3 });
    });

    it('broadcastMany: one batch, one answer per transaction in order, the ambiguous ones decided by one status read', async () => {
      const [a, b, c, d] = [signed(1n), signed(2n), signed(3n), signed(4n)];
      const node = await nodeFor({
        sendTransaction: (call, n) => [accepted(a)(call), errorAnswer(ALREADY_PROCESSED, call), answer(INSTRUCTION_ERROR, call), answer(BLOCKHASH_NOT_FOUND, call)][n - 1]!,
        getSignatureStatuses: (call) => statuses([null, null], call),
      });
      const out = await node.broadcastMany([a, b, c, d]);
      expect(out[0]).to.deep.equal({ outcome: 'ACCEPTED', txHash: a.txHash });
      expect(out[1]).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: b.txHash });
      expect(out[2]).to.deep.include({ outcome: 'REJECTED' });
      expect(out[3]).to.be.instanceOf(ChainRpcError).and.to.include({ errorName: 'RPC_TRY_LATER' });
      expect(server!.requests).to.have.length(2);
      expect(ofMethod('getSignatureStatuses')[0]!.params[0]).to.deep.equal([c.txHash, d.txHash]);
    });

    it('refuses bytes whose first signature is not txHash, before sending', async () => {
      const node = await nodeFor({});
      const tx = signed();
      await rejected(node.broadcast({ ...tx, txHash: OTHER_SIG }), TypeError);
      await rejected(node.broadcast({ txHash: tx.txHash, raw: new Uint8Array(10) }), TypeError);
      expect(calls).to.have.length(0);
    });
  });

  describe('status', () => {
    const INPUT = { recentBlockhash: BLOCKHASH, lastValidBlockHeight: '3090', lamportsPerSignature: '5000' };

    it('confirmed: MINED at the slot with 1 confirmation and the exact fee of getTransaction', async () => {
      const node = await nodeFor({ getSignatureStatuses: (c) => statuses([STATUSES.result.value[0]], c), getTransaction: (c) => answer(TX_SOL, c) });
      expect(await node.status(SOL_SIG)).to.deep.equal({ state: 'MINED', blockHeight: 72n, blockHash: '72', confirmations: 1, succeeded: true, fee: 10000n });
      expect(ofMethod('getTransaction')[0]!.params).to.deep.equal([SOL_SIG, { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]);
    });

    it('finalized: MINED with the chain\'s confirmations (at least 32)', async () => {
      let node = await nodeFor({ getSignatureStatuses: (c) => statuses([STATUSES_FINAL.result.value[0]], c), getTransaction: (c) => answer(TX_SOL, c), getEpochInfo: (c) => answer(EPOCH, c) });
      expect(await node.status(SOL_SIG, INPUT)).to.deep.equal({ state: 'MINED', blockHeight: 48n, blockHash: '48', confirmations: 32, succeeded: true, fee: 10000n });
      await server!.close();
      node = await nodeFor({ getSignatureStatuses: (c) => statuses([STATUSES_FINAL.result.value[0]], c), getTransaction: (c) => answer(TX_SOL, c) }, {}, { confirmations: 40 });
      expect(await node.status(SOL_SIG)).to.deep.include({ confirmations: 40 });
    });

    it('a failed transaction: MINED, succeeded false, its fee', async () => {
      // test-made: the recorded finalized entry with the failed transaction's recorded err
      const entry = { ...STATUSES_FINAL.result.value[0], err: TX_FAILED.result.meta.err, status: { Err: TX_FAILED.result.meta.err } };
      const node = await nodeFor({ getSignatureStatuses: (c) => statuses([entry], c), getTransaction: (c) => answer(TX_FAILED, c) });
      expect(await node.status(FAILED_SIG)).to.deep.equal({ state: 'MINED', blockHeight: 48n, blockHash: '48', confirmations: 32, succeeded: false, fee: 5000n });
    });

    it('processed: PENDING (test-made entry), without a transaction read', async () => {
      const entry = { ...STATUSES.result.value[0], confirmations: 0, confirmationStatus: 'processed' };
      const node = await nodeFor({ getSignatureStatuses: (c) => statuses([entry], c) });
      expect(await node.status(SOL_SIG)).to.deep.equal({ state: 'PENDING' });
      expect(ofMethod('getTransaction')).to.have.length(0);
    });

    it('no status: UNKNOWN without an input, or while the finalized height is not above lastValidBlockHeight', async () => {
      let node = await nodeFor({ getSignatureStatuses: (c) => statuses([null], c) });
      expect(await node.status(SOL_SIG)).to.deep.equal({ state: 'UNKNOWN' });
      expect(ofMethod('getEpochInfo')).to.have.length(0);
      await server!.close();
      node = await nodeFor({ getSignatureStatuses: (c) => statuses([null], c, 170000), getEpochInfo: (c) => answer(EPOCH, c) });
      expect(await node.status(SOL_SIG, { ...INPUT, lastValidBlockHeight: '166500' })).to.deep.equal({ state: 'UNKNOWN' });
      expect(ofMethod('getEpochInfo')[0]!.params).to.deep.equal([{ commitment: 'finalized' }]);
      expect(server!.requests).to.have.length(1); // statuses and epoch in one batch
    });

    it('no status: EXPIRED when the finalized height is above lastValidBlockHeight and the status was read at or after that finalized slot', async () => {
      // test-made: the status answer's context slot (recorded 82) raised to 170000, past the finalized slot 166598
      let node = await nodeFor({ getSignatureStatuses: (c) => statuses([null], c, 170000), getEpochInfo: (c) => answer(EPOCH, c) });
      expect(await node.status(SOL_SIG, INPUT)).to.deep.equal({ state: 'EXPIRED' }); // 166500 > 3090
      expect(await node.status(SOL_SIG, { ...INPUT, lastValidBlockHeight: '166499' })).to.deep.equal({ state: 'EXPIRED' });
      await server!.close();
      // the recorded answers as they are: the status was read at slot 82, before the finalized slot 166598 → not certain
      node = await nodeFor({ getSignatureStatuses: (c) => answer(STATUSES, c), getEpochInfo: (c) => answer(EPOCH, c) });
      const [, second] = await node.statusMany([OTHER_SIG, SOL_SIG], [undefined, INPUT]);
      expect(second).to.deep.equal({ state: 'UNKNOWN' });
    });

    it('RPC_ERROR when getTransaction returns another transaction', async () => {
      const node = await nodeFor({ getSignatureStatuses: (c) => statuses([STATUSES.result.value[0]], c), getTransaction: (c) => answer(TX_SOL, c) });
      const e = await rejected(node.status(FAILED_SIG), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_ERROR' });
      expect(e.message).to.contain(SOL_SIG);
    });

    it('statusMany: one status read and one transaction read for all; a failing item hides none of the others', async () => {
      const node = await nodeFor({
        getSignatureStatuses: (c) => statuses([STATUSES.result.value[0], null, STATUSES_FINAL.result.value[0], null], c, 170000),
        getEpochInfo: (c) => answer(EPOCH, c),
        getTransaction: (c) => (c.params[0] === SOL_SIG ? answer(TX_SOL, c) : errorAnswer(INVALID_PARAM.error, c)),
      });
      const out = await node.statusMany([SOL_SIG, OTHER_SIG, FAILED_SIG, OTHER_SIG], [INPUT, INPUT, INPUT, { lastValidBlockHeight: 12 } as unknown as TransferInput]);
      expect(out[0]).to.deep.equal({ state: 'MINED', blockHeight: 72n, blockHash: '72', confirmations: 1, succeeded: true, fee: 10000n });
      expect(out[1]).to.deep.equal({ state: 'EXPIRED' });
      expect(out[2]).to.be.instanceOf(ChainRpcError).and.to.include({ errorName: 'RPC_ERROR', rpcCode: -32602 });
      expect(out[3]).to.be.instanceOf(TypeError);
      expect(server!.requests).to.have.length(2);
      expect(ofMethod('getSignatureStatuses')).to.have.length(1);
      expect(ofMethod('getTransaction')).to.have.length(2);
    });

    it('statusMany asks at most 256 signatures per getSignatureStatuses call', async () => {
      const many = Array.from({ length: 300 }, (_, i) => base58Encode(Uint8Array.from({ length: 64 }, (_, k) => (i * 7 + k) % 256 || 1)));
      const node = await nodeFor({ getSignatureStatuses: (c) => statuses(c.params[0].map(() => null), c) });
      const out = await node.statusMany(many);
      expect(out.every((s) => !(s instanceof Error) && s.state === 'UNKNOWN')).to.equal(true);
      expect(ofMethod('getSignatureStatuses').map((c) => c.params[0].length)).to.deep.equal([256, 44]);
      expect(server!.requests).to.have.length(1);
    });

    it('refuses a malformed signature before asking', async () => {
      const node = await nodeFor({});
      await rejected(node.status('0x1234'), TypeError);
      expect(calls).to.have.length(0);
    });
  });

  describe('network faults', () => {
    it('a closed port, HTTP 503 and a node that never answers are RPC_UNAVAILABLE; messages name the host only', async () => {
      const closed = await startReplayServer(() => ({ body: {} }));
      const url = closed.url;
      await closed.close();
      let node = new SolanaTransferNode({ url: `${url}v2/SECRETKEY123?api-key=TOPSECRET` }, FAST);
      let e = await rejected(node.balance(from.address, null), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_UNAVAILABLE', attempts: 3 });
      expect(e.message).to.contain(new URL(url).host).and.not.to.match(/SECRETKEY123|TOPSECRET/);

      node = await nodeFor({ getLatestBlockhash: () => ({ status: 503, body: 'busy' }) as unknown as Json });
      e = await rejected(node.transferInput(request(from, to, 1n)), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_UNAVAILABLE', responseStatus: 503, attempts: 3 });
      await server!.close();

      node = await nodeFor({ getSignatureStatuses: () => 'hang' as unknown as Json }, { timeoutMs: 100 });
      e = await rejected(node.status(SOL_SIG), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_UNAVAILABLE' });
      expect(e.message).to.match(/no answer within 100 ms/);
    });

    it('a transient node error on a read is retried, then RPC_UNAVAILABLE; HTTP 429 likewise', async () => {
      let node = await nodeFor({ getSignatureStatuses: (c) => errorAnswer(NODE_BEHIND, c) });
      expect(await rejected(node.status(SOL_SIG), ChainRpcError)).to.include({ errorName: 'RPC_UNAVAILABLE', rpcCode: -32005, attempts: 3 });
      expect(server!.requests).to.have.length(3);
      await server!.close();
      node = await nodeFor({ getSignatureStatuses: (c, n) => (n < 2 ? ({ status: 429, body: 'slow down' }) as unknown as Json : statuses([null], c)) });
      expect(await node.status(SOL_SIG)).to.deep.equal({ state: 'UNKNOWN' });
    });
  });

  describe('end to end in the Solana runtime (litesvm)', () => {
    const LAMPORTS = 10_000_000_000n;
    type Address = Parameters<LiteSVM['getBalance']>[0];
    const addr = (s: string): Address => s as Address;

    function send(svm: LiteSVM, raw: Uint8Array) {
      const tx = VersionedTransaction.deserialize(raw);
      const signer = tx.message.staticAccountKeys[0]!.toBase58();
      return svm.sendTransaction({ messageBytes: tx.message.serialize(), signatures: { [signer]: tx.signatures[0]! } } as unknown as Parameters<LiteSVM['sendTransaction']>[0]);
    }
    function setAccount(svm: LiteSVM, address: string, owner: string, data: Uint8Array): void {
      svm.setAccount({
        address: addr(address), data, executable: false, lamports: svm.minimumBalanceForRentExemption(BigInt(data.length)), programAddress: addr(owner), space: BigInt(data.length),
      } as unknown as Parameters<LiteSVM['setAccount']>[0]);
    }
    const tokenAmount = (svm: LiteSVM, account: string): bigint | null => {
      const a = svm.getAccount(addr(account));
      return a.exists ? Buffer.from(a.data).readBigUInt64LE(64) : null;
    };

    it('input from the node → craft → sign → executed: SOL, and USDC to an owner without its token account', async () => {
      const svm = new LiteSVM();
      svm.airdrop(addr(from.address), LAMPORTS as never);
      // the USDC mint (decimals 6, as recorded) and the hot wallet's USDC account, written into the runtime
      const mint = Buffer.alloc(82);
      mint.writeBigUInt64LE(10n ** 15n, 36);
      mint[44] = 6;
      mint[45] = 1;
      setAccount(svm, USDC, TOKEN_PROGRAM_ID, mint);
      const source = associatedTokenAddress(from.address, USDC);
      const account = Buffer.alloc(165);
      Buffer.from(new SolanaPublicKey(USDC).toBytes()).copy(account, 0);
      Buffer.from(new SolanaPublicKey(from.address).toBytes()).copy(account, 32);
      account.writeBigUInt64LE(5_000_000n, 64);
      account[108] = 1;
      setAccount(svm, source, TOKEN_PROGRAM_ID, account);

      // test-made: the recorded blockhash answer carries the runtime's blockhash, the recorded rent answer the runtime's rent
      const node = await nodeFor({
        getLatestBlockhash: (c) => ({ ...answer(LATEST, c), result: { ...LATEST.result, value: { ...LATEST.result.value, blockhash: svm.latestBlockhash() } } }),
        getMultipleAccounts: (c) => accounts([USDC_MINT, NULL_ACCOUNT, NULL_ACCOUNT], c),
        getFeeForMessage: (c) => answer(FEE, c),
        getMinimumBalanceForRentExemption: (c) => result(Number(svm.minimumBalanceForRentExemption(BigInt(c.params[0]))), c),
      });
      const [solInput, tokenInput] = await node.transferInputs([request(from, to, 1_234_567n), request(from, to, 1_500_001n, USDC)]);
      for (const [req, input] of [[request(from, to, 1_234_567n), solInput], [request(from, to, 1_500_001n, USDC), tokenInput]] as const) {
        const unsigned = crafter.craft(req, input as TransferInput);
        const tx = signAndCombine(crafter, unsigned, from);
        const before = svm.getBalance(addr(from.address))!;
        const r = send(svm, tx.raw);
        expect(r.constructor.name, r.toString()).to.equal('TransactionMetadata');
        expect(base58Encode((r as { signature(): Uint8Array }).signature())).to.equal(tx.txHash);
        expect(before - svm.getBalance(addr(from.address))!).to.equal(req.contract === null ? req.amount + unsigned.maxFee : unsigned.maxFee);
      }
      expect(svm.getBalance(addr(to))).to.equal(1_234_567n);
      expect(tokenAmount(svm, associatedTokenAddress(to, USDC))).to.equal(1_500_001n);
      expect(tokenAmount(svm, source)).to.equal(5_000_000n - 1_500_001n);
      expect(tokenInput).to.deep.include({ tokenAccountRent: svm.minimumBalanceForRentExemption(165n).toString(), destinationTokenAccountExists: false });
    });
  });

  /**
   * Sweeps from transferInput to status through a JSON-RPC endpoint whose every answer comes from
   * litesvm (the real runtime in process): litesvm-rpc.test-helper.ts (rent, the blockhash, the
   * executed transactions, their statuses and fees; what it makes up is said there), and here
   * getMultipleAccounts (jsonParsed, decoded from the runtime's bytes, in the recorded answers' shape).
   */
  describe('sweeps end to end: a JSON-RPC endpoint over litesvm', () => {
    const LAMPORTS = 10_000_000_000n;
    type Address = Parameters<LiteSVM['getBalance']>[0];
    const addr = (s: string): Address => s as Address;
    const deposit = depositKey(3);
    const hot = from;

    function setAccount(svm: LiteSVM, address: string, owner: string, data: Uint8Array): void {
      svm.setAccount({
        address: addr(address), data, executable: false, lamports: svm.minimumBalanceForRentExemption(BigInt(data.length)), programAddress: addr(owner), space: BigInt(data.length),
      } as unknown as Parameters<LiteSVM['setAccount']>[0]);
    }
    const lamportsOf = (svm: LiteSVM, a: string): bigint => svm.getBalance(addr(a)) ?? 0n;
    const tokenAmount = (svm: LiteSVM, account: string): bigint | null => {
      const a = svm.getAccount(addr(account));
      return a.exists ? Buffer.from(a.data).readBigUInt64LE(64) : null;
    };

    /** An account as getMultipleAccounts (jsonParsed) gives it: token mints and accounts parsed, anything else base64. */
    function parsedAccount(svm: LiteSVM, address: string): Json | null {
      const a = svm.getAccount(addr(address));
      if (!a.exists) return null;
      const owner = String(a.programAddress);
      const data = Buffer.from(a.data);
      const common = { executable: false, lamports: Number(a.lamports), owner, rentEpoch: 0, space: data.length };
      if (owner !== TOKEN_PROGRAM_ID && owner !== TOKEN_2022_PROGRAM_ID) return { ...common, data: [data.toString('base64'), 'base64'] };
      const program = owner === TOKEN_PROGRAM_ID ? 'spl-token' : 'spl-token-2022';
      if (data.length === 82 || (data.length > 165 && data[165] === 1)) {
        return { ...common, data: { program, space: data.length, parsed: { type: 'mint', info: { decimals: data[44], isInitialized: data[45] === 1, supply: data.readBigUInt64LE(36).toString(), mintAuthority: null, freezeAuthority: null } } } };
      }
      const mint = new SolanaPublicKey(data.subarray(0, 32)).toBase58();
      const mintAccount = svm.getAccount(addr(mint));
      const decimals = mintAccount.exists ? mintAccount.data[44]! : 0;
      const amount = data.readBigUInt64LE(64).toString();
      return {
        ...common,
        data: {
          program, space: data.length,
          parsed: { type: 'account', info: { isNative: false, mint, owner: new SolanaPublicKey(data.subarray(32, 64)).toBase58(), state: data[108] === 2 ? 'frozen' : 'initialized', tokenAmount: { amount, decimals, uiAmountString: amount } } },
        },
      };
    }

    async function runtimeNode(svm: LiteSVM, options: SolanaTransferNodeOptions = {}) {
      const rpc = new LitesvmRpc(svm);
      const one = (c: Call): Json => (c.method === 'getMultipleAccounts' ? accounts((c.params[0] as string[]).map((k) => parsedAccount(svm, k)), c) : rpc.answer(c));
      const answers: Record<string, Handler> = {};
      for (const m of ['getLatestBlockhash', 'getFeeForMessage', 'getMinimumBalanceForRentExemption', 'getMultipleAccounts', 'getBalance', 'getEpochInfo', 'sendTransaction', 'getSignatureStatuses', 'getTransaction']) answers[m] = one;
      return nodeFor(answers, {}, options);
    }

    it('native: the whole balance of a deposit account to the hot wallet, which pays the fee; MINED with that fee', async () => {
      const svm = new LiteSVM();
      svm.airdrop(addr(hot.address), LAMPORTS as never);
      const held = 2_500_000_123n;
      svm.airdrop(addr(deposit.address), held as never);
      const node = await runtimeNode(svm);
      // what the planner reads: every lamport (balance would withhold the rent-exempt minimum)
      expect(await node.sweepableBalance(deposit.address, null)).to.equal(held);
      const req = sweepRequest(deposit, hot, hot.address, await node.sweepableBalance(deposit.address, null));
      const input = await node.transferInput(req);
      const unsigned = crafter.craft(req, input);
      expect(unsigned.signers).to.deep.equal([hot.address, deposit.address]);
      const tx = signAndCombine(crafter, unsigned, deposit, hot);
      expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ACCEPTED', txHash: tx.txHash });
      expect(await node.status(tx.txHash, input)).to.deep.include({ state: 'MINED', succeeded: true, fee: unsigned.maxFee });
      expect(unsigned.maxFee).to.equal(10_000n);
      expect(lamportsOf(svm, deposit.address)).to.equal(0n);
      expect(lamportsOf(svm, hot.address)).to.equal(LAMPORTS + held - unsigned.maxFee);
      // sent again: litesvm refuses the processed signature, the status read finds it
      expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: tx.txHash });
      expect(lamportsOf(svm, hot.address)).to.equal(LAMPORTS + held - unsigned.maxFee);
    });

    for (const tokenProgram of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]) {
      const label = tokenProgram === TOKEN_PROGRAM_ID ? 'Token' : 'Token-2022';
      it(`SPL (${label}) with closeTokenAccount, from holding 0 SOL, a priority fee: every unit to the hot wallet's new account, the source closed, its rent to the fee payer`, async () => {
        const svm = new LiteSVM();
        svm.airdrop(addr(hot.address), LAMPORTS as never);
        const mint = hotKey(7).address;
        const mintData = Buffer.alloc(82);
        mintData.writeBigUInt64LE(10n ** 15n, 36);
        mintData[44] = 9;
        mintData[45] = 1;
        setAccount(svm, mint, tokenProgram, mintData);
        const held = 18_446_744_073_709_551_615n; // u64 max: exact through JSON as a decimal string
        const account = Buffer.alloc(tokenProgram === TOKEN_PROGRAM_ID ? 165 : 170);
        Buffer.from(new SolanaPublicKey(mint).toBytes()).copy(account, 0);
        Buffer.from(deposit.publicKey).copy(account, 32);
        account.writeBigUInt64LE(held, 64);
        account[108] = 1;
        if (tokenProgram === TOKEN_2022_PROGRAM_ID) Buffer.from([2, 7, 0, 0, 0]).copy(account, 165); // AccountType::Account, ImmutableOwner
        const source = associatedTokenAddress(deposit.address, mint, tokenProgram);
        setAccount(svm, source, tokenProgram, account);
        const sourceRent = lamportsOf(svm, source);
        expect(svm.getAccount(addr(deposit.address)).exists).to.equal(false); // no SOL at all

        const node = await runtimeNode(svm, { computeUnitPrice: 1_000_000n });
        const req = sweepRequest(deposit, hot, hot.address, held, mint, true);
        const input = await node.transferInput(req);
        const rent = svm.minimumBalanceForRentExemption(tokenProgram === TOKEN_PROGRAM_ID ? 165n : 170n);
        expect(input).to.deep.include({
          lamportsPerSignature: '5000', mintDecimals: 9, tokenProgram, destinationTokenAccountExists: false,
          tokenAccountRent: rent.toString(), sourceTokenBalance: held.toString(), computeUnitPrice: '1000000', computeUnitLimit: 80_000,
        });
        const unsigned = crafter.craft(req, JSON.parse(JSON.stringify(input)));
        expect(unsigned.maxFee).to.equal(10_000n + 80_000n + rent);
        const tx = signAndCombine(crafter, unsigned, deposit, hot);
        expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ACCEPTED', txHash: tx.txHash });
        // the fee charged: the signatures and the priority fee (the created account's rent is not a fee)
        expect(await node.status(tx.txHash, input)).to.deep.include({ state: 'MINED', succeeded: true, fee: unsigned.maxFee - rent });
        expect(tokenAmount(svm, associatedTokenAddress(hot.address, mint, tokenProgram))).to.equal(held);
        expect(svm.getAccount(addr(source)).exists).to.equal(false);
        expect(lamportsOf(svm, deposit.address)).to.equal(0n);
        expect(lamportsOf(svm, hot.address)).to.equal(LAMPORTS - unsigned.maxFee + sourceRent);
        // the hot wallet's account exists now: a second sweep's input says so (and asks no rent)
        expect(await node.transferInput(sweepRequest(deposit, hot, hot.address, 1n, mint, true))).to.deep.include({ destinationTokenAccountExists: true, sourceTokenBalance: '0' });
      });
    }

    it('a sweep whose amount is not the whole token balance any more is refused by the crafter, before anything is sent', async () => {
      const svm = new LiteSVM();
      svm.airdrop(addr(hot.address), LAMPORTS as never);
      const mint = hotKey(7).address;
      const mintData = Buffer.alloc(82);
      mintData[44] = 6;
      mintData[45] = 1;
      setAccount(svm, mint, TOKEN_PROGRAM_ID, mintData);
      const account = Buffer.alloc(165);
      Buffer.from(new SolanaPublicKey(mint).toBytes()).copy(account, 0);
      Buffer.from(deposit.publicKey).copy(account, 32);
      account.writeBigUInt64LE(1001n, 64); // a second deposit of 1 arrived after the sweep was planned for 1000
      account[108] = 1;
      setAccount(svm, associatedTokenAddress(deposit.address, mint), TOKEN_PROGRAM_ID, account);
      const node = await runtimeNode(svm);
      const req = sweepRequest(deposit, hot, hot.address, 1000n, mint, true);
      const input = await node.transferInput(req);
      expect(input).to.deep.include({ sourceTokenBalance: '1001' });
      expect(() => crafter.craft(req, input)).to.throw(/whole balance/);
      expect(ofMethod('sendTransaction')).to.have.length(0);
    });
  });
});
