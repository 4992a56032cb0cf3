import { expect } from 'chai';
import { Transaction, getAddress, hexlify, id, keccak256, zeroPadValue } from 'ethers';
import { ChainRpcError, type SignedAuthorization, type TransactionState, type TransferInput, type TransferIntent } from '@wcs/core';
import { rejected, startReplayServer, type ReplayServer } from '@wcs/core/testing';
import { ANVIL_DEV_KEYS, anvilRpc, sendNative, startAnvil, waitForReceipt, type AnvilDevnet } from './devnet';
import { EvmTransferCrafter, EvmTransferNode, type EvmTransferInput } from './index';
import { CREATE2_DEPLOYER } from './delegation/deployment';
import { Reader, evmRpcClient } from './node-json';
import { DELEGATION_SUPPORT_TTL_MS, EvmDelegationNode } from './transfer-delegation';
import { callIntent, depositKey, feeKey, fresh, signAuthorization } from './transfer-call.test-helper';

const ETHER = 10n ** 18n;
const crafter = new EvmTransferCrafter(31337);

/** The topic the logger below writes: its LOG2 is (this topic, the caller), data = the call data. */
const LOGGED = id('Logged(address,bytes)');
/**
 * A contract that logs each call: CALLDATACOPY(0, 0, size); LOG2(0, size, LOGGED, CALLER); STOP.
 * Delegated to, it runs in the delegating account: the log's address is that account.
 */
const LOGGER_RUNTIME = `0x365f5f37337f${LOGGED.slice(2)}365fa200`;
/** Init code: CODECOPY(0, 9, len); RETURN(0, len), then the runtime. */
const LOGGER_INIT = `0x60${(LOGGER_RUNTIME.length / 2 - 1).toString(16).padStart(2, '0')}8060095f395ff3${LOGGER_RUNTIME.slice(2)}`;

/** A JSON-RPC proxy in front of anvil that keeps every request it forwards (what the node sent, and how often). */
async function proxy(target: string): Promise<ReplayServer> {
  return startReplayServer(async (req) => {
    const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: req.body });
    return { status: res.status, body: await res.text() };
  });
}

/** The JSON-RPC calls a proxy saw, flattened out of their batches. */
function seen(server: ReplayServer): Array<{ method: string; params: unknown[] }> {
  return server.requests.flatMap((r) => {
    const body = JSON.parse(r.body) as { method: string; params: unknown[] } | Array<{ method: string; params: unknown[] }>;
    return Array.isArray(body) ? body : [body];
  });
}

async function deployLogger(url: string): Promise<string> {
  const from = getAddress('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'); // ANVIL_DEV_KEYS[0], unlocked in anvil
  const hash = await anvilRpc<string>(url, 'eth_sendTransaction', [{ from, data: LOGGER_INIT }]);
  const receipt = await waitForReceipt<{ contractAddress: string; status: string }>(url, hash);
  expect(receipt.status).to.equal('0x1');
  return getAddress(receipt.contractAddress);
}

describe('EIP-7702 calls through the EVM node on anvil (default hardfork: Prague and later)', function () {
  this.timeout(60_000);
  let anvil: AnvilDevnet;
  let server: ReplayServer;
  let node: EvmTransferNode;
  let logger: string;
  const fee = feeKey(4, 0);
  const a = depositKey(4, 0);
  const b = depositKey(4, 1);

  /** craft → sign → combine → broadcast → mined: the transaction and its state. */
  async function send(intent: TransferIntent, input?: TransferInput) {
    const used = input ?? (await node.transferInput(intent));
    const sequence = await node.nextSequence(intent.from);
    const unsigned = crafter.craft({ ...intent, sequence }, used);
    const signed = crafter.combine(unsigned, [fee.sign(unsigned.payloads[0]!)]);
    expect(await node.broadcast(signed)).to.deep.equal({ outcome: 'ACCEPTED', txHash: signed.txHash });
    await waitForReceipt(anvil.url, signed.txHash);
    return { input: used as EvmTransferInput, unsigned, signed, state: await node.status(signed.txHash) };
  }

  before(async () => {
    anvil = await startAnvil();
    server = await proxy(anvil.url);
    node = new EvmTransferNode({ url: server.url, timeoutMs: 10_000 }, { expectedChainId: 31337 });
    logger = await deployLogger(anvil.url);
    await sendNative(anvil.url, fee.address, 10n * ETHER, { fromPrivateKey: ANVIL_DEV_KEYS[1] });
  });

  after(async () => {
    await server?.close();
    await anvil?.stop();
  });

  it('a type 4 call carrying two authorizations: estimated with authorizationList, mined with the delegate\'s logs, both accounts DELEGATED, nonces raised', async () => {
    expect(await node.delegation.codes([a.address, b.address])).to.deep.equal([{ kind: 'EMPTY' }, { kind: 'EMPTY' }]);
    const nonces = await node.delegation.nonces([a.address, b.address]);
    expect(nonces).to.deep.equal([0n, 0n]);
    const auths = [signAuthorization(a, logger, 0n), signAuthorization(b, logger, 0n)];
    // the call goes to a itself: its code is the logger's once the authorizations are applied, before the call runs
    const intent = callIntent(fee, a.address, 0n, '0xc0ffee', auths);
    const before = server.requests.length;
    const input = (await node.transferInput(intent)) as EvmTransferInput;
    const estimate = seen({ ...server, requests: server.requests.slice(before) }).find((c) => c.method === 'eth_estimateGas')!;
    expect(estimate.params).to.deep.equal([{
      from: fee.address, to: a.address, value: '0x0', data: '0xc0ffee',
      authorizationList: auths.map((x) => ({ chainId: '0x7a69', address: logger.toLowerCase(), nonce: '0x0', yParity: `0x${x.yParity}`, r: `0x${BigInt(x.r).toString(16)}`, s: `0x${BigInt(x.s).toString(16)}` })),
    }]);
    // intrinsic 21000 + 25000 per authorization (empty accounts), plus the logger's run; the margin on top
    expect(BigInt(input.gasEstimate) > 71_000n).to.equal(true);
    expect(input.gasLimit).to.equal(((BigInt(input.gasEstimate) * 120n + 99n) / 100n).toString());

    const { unsigned, signed, state } = await send(intent, input);
    expect(Transaction.from(hexlify(signed.raw)).type).to.equal(4);
    expect(state).to.deep.include({ state: 'MINED', succeeded: true, confirmations: 1 });
    const mined = state as Extract<TransactionState, { state: 'MINED' }>;
    expect(mined.logs).to.deep.equal([{ address: a.address, topics: [LOGGED.toLowerCase(), zeroPadValue(fee.address, 32).toLowerCase()], data: '0xc0ffee' }]);
    expect(mined.fee! <= unsigned.maxFee).to.equal(true);
    expect(await node.statusMany([signed.txHash])).to.deep.equal([state]);

    expect(await node.delegation.codes([a.address, b.address, fee.address, logger])).to.deep.equal([
      { kind: 'DELEGATED', delegate: logger }, { kind: 'DELEGATED', delegate: logger }, { kind: 'EMPTY' }, { kind: 'CONTRACT' },
    ]);
    expect(await node.delegation.nonces([a.address, b.address])).to.deep.equal([1n, 1n]);
  });

  it('a later type 2 call without authorizations runs the delegate\'s code at b, with value; then a call to a plain contract', async () => {
    const balance = BigInt(await anvilRpc<string>(anvil.url, 'eth_getBalance', [b.address, 'latest']));
    const { signed, state } = await send(callIntent(fee, b.address, 5n, '0x0102', []));
    expect(Transaction.from(hexlify(signed.raw)).type).to.equal(2);
    expect(state).to.deep.include({ state: 'MINED', succeeded: true });
    expect((state as { logs: unknown }).logs).to.deep.equal([{ address: b.address, topics: [LOGGED.toLowerCase(), zeroPadValue(fee.address, 32).toLowerCase()], data: '0x0102' }]);
    expect(BigInt(await anvilRpc<string>(anvil.url, 'eth_getBalance', [b.address, 'latest']))).to.equal(balance + 5n);

    const plain = await send(callIntent(fee, logger, 0n, '0x', []));
    expect(BigInt(plain.input.gasLimit), 'a call takes the margin, even at 21000').to.equal((BigInt(plain.input.gasEstimate) * 120n + 99n) / 100n);
    expect((plain.state as { logs: unknown }).logs).to.deep.equal([{ address: logger, topics: [LOGGED.toLowerCase(), zeroPadValue(fee.address, 32).toLowerCase()], data: '0x' }]);
    // a plain payment's receipt has no logs: an empty list
    const paid = await send({ from: fee.address, fromPublicKey: fee.publicKey, to: fresh(), memo: null, contract: null, amount: 1n });
    expect(paid.input.gasLimit).to.equal('21000');
    expect((paid.state as { logs: unknown }).logs).to.deep.equal([]);
  });

  it('support(): ok on this anvil, kept for minutes (no request the second time); the proxy missing is named, and not kept', async () => {
    const fresh1 = new EvmTransferNode({ url: server.url }, { expectedChainId: 31337 });
    const before = server.requests.length;
    expect(await fresh1.delegation.support()).to.deep.equal({ ok: true });
    const probe = seen({ ...server, requests: server.requests.slice(before) });
    expect(probe.map((c) => c.method)).to.include.members(['eth_getCode', 'eth_estimateGas', 'eth_call']);
    const after = server.requests.length;
    expect(await fresh1.delegation.support()).to.deep.equal({ ok: true });
    expect(server.requests.length, 'the positive answer is kept').to.equal(after);

    // kept DELEGATION_SUPPORT_TTL_MS, then asked again
    let clock = 1_000_000;
    const rpc = evmRpcClient({ url: server.url });
    const timed = new EvmDelegationNode(rpc, new Reader(rpc), async () => undefined, () => clock);
    expect(await timed.support()).to.deep.equal({ ok: true });
    const once = server.requests.length;
    clock += DELEGATION_SUPPORT_TTL_MS - 1;
    expect(await timed.support()).to.deep.equal({ ok: true });
    expect(server.requests.length).to.equal(once);
    clock += 1;
    expect(await timed.support()).to.deep.equal({ ok: true });
    expect(server.requests.length, 'asked again once the time is up').to.be.above(once);

    const proxyCode = await anvilRpc<string>(anvil.url, 'eth_getCode', [CREATE2_DEPLOYER, 'latest']);
    expect(proxyCode.length > 2).to.equal(true);
    await anvilRpc(anvil.url, 'anvil_setCode', [CREATE2_DEPLOYER, '0x']);
    try {
      const other = new EvmTransferNode({ url: server.url });
      const missing = await other.delegation.support();
      expect(missing.ok).to.equal(false);
      expect(!missing.ok && missing.reason).to.match(/deterministic deployment proxy 0x4e59b44847b379578588920cA78FbF26c0B4956C has no code/);
      await anvilRpc(anvil.url, 'anvil_setCode', [CREATE2_DEPLOYER, proxyCode]);
      expect(await other.delegation.support(), 'a negative answer is asked again').to.deep.equal({ ok: true });
    } finally {
      await anvilRpc(anvil.url, 'anvil_setCode', [CREATE2_DEPLOYER, proxyCode]);
    }
  });

  it('a refused estimate is that request\'s error; codes and nonces answer in order and refuse malformed accounts', async () => {
    // the call reverts: to an account delegated to nothing that runs, with value above the fee wallet's balance
    const [ok, refused] = await node.transferInputs([
      callIntent(fee, a.address, 0n, '0x', []),
      callIntent(fee, a.address, 1000n * ETHER, '0x', []),
    ]);
    expect(ok).to.not.be.instanceOf(Error);
    expect(refused).to.be.instanceOf(ChainRpcError);
    expect((await rejected(node.delegation.codes(['0x1234']), TypeError)).message).to.match(/not a valid EVM address/);
    expect(await node.delegation.codes([])).to.deep.equal([]);
    expect(await node.delegation.nonces([fresh(), fee.address])).to.deep.equal([0n, await node.nextSequence(fee.address)]);
  });
});

describe('EIP-7702 on anvil --hardfork cancun (no EIP-7702)', function () {
  this.timeout(60_000);
  let anvil: AnvilDevnet;

  before(async () => {
    anvil = await startAnvil({ extraArgs: ['--hardfork', 'cancun'] });
  });

  after(async () => {
    await anvil?.stop();
  });

  it('support() is false and says why; a call with authorizations is refused at the estimate', async () => {
    const node = new EvmTransferNode({ url: anvil.url }, { expectedChainId: 31337 });
    const answer = await node.delegation.support();
    expect(answer.ok).to.equal(false);
    expect(!answer.ok && answer.reason).to.match(/refuses an EIP-7702 authorization in eth_estimateGas: .*7702/i);
    expect(!answer.ok && answer.reason).to.not.match(/proxy/);
    const fee = feeKey(4, 1);
    const auth: SignedAuthorization = signAuthorization(depositKey(4, 2), fresh(), 0n);
    const [input] = await node.transferInputs([callIntent(fee, fee.address, 0n, '0x', [auth])]);
    expect(input).to.be.instanceOf(ChainRpcError);
    expect((input as Error).message).to.match(/eth_estimateGas refused/);
    expect(await node.delegation.codes([fee.address])).to.deep.equal([{ kind: 'EMPTY' }]);
  });
});

describe('EvmTransferNode logs and codes against a scripted node (answers anvil does not give)', () => {
  let server: ReplayServer;
  let answers: Record<string, unknown>;

  before(async () => {
    server = await startReplayServer((req) => {
      const calls = JSON.parse(req.body) as Array<{ id: number; method: string }> | { id: number; method: string };
      const one = (c: { id: number; method: string }) => ({ jsonrpc: '2.0', id: c.id, result: c.method === 'eth_chainId' ? '0x7a69' : answers[c.method] });
      return { body: Array.isArray(calls) ? calls.map(one) : one(calls) };
    });
  });

  after(async () => {
    await server?.close();
  });

  const node = () => new EvmTransferNode({ url: server.url }, { expectedChainId: 31337, attempts: 1 });
  const hash = keccak256('0x01');
  const receipt = (logs: unknown) => ({ blockNumber: '0x64', blockHash: keccak256('0x02'), status: '0x1', gasUsed: '0x5208', effectiveGasPrice: '0x1', logs });

  it('receipt logs: the emitter EIP-55, topics and data lower-case; malformed logs are a bad answer', async () => {
    const emitter = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
    answers = { eth_blockNumber: '0x64', eth_getTransactionByHash: null, eth_getTransactionReceipt: receipt([{ address: emitter, topics: [LOGGED.toUpperCase().replace('0X', '0x')], data: '0xABCD', logIndex: '0x0' }]) };
    expect(await node().status(hash)).to.deep.include({ logs: [{ address: getAddress(emitter), topics: [LOGGED.toLowerCase()], data: '0xabcd' }] });
    expect(await node().statusMany([hash])).to.deep.equal([await node().status(hash)]);
    for (const bad of [{}, [{ address: emitter, topics: ['0x12'], data: '0x' }], [{ address: emitter, topics: [], data: '0x1' }], [{ topics: [], data: '0x' }], [{ address: emitter, topics: [LOGGED, LOGGED, LOGGED, LOGGED, LOGGED], data: '0x' }]]) {
      answers.eth_getTransactionReceipt = receipt(bad);
      const e = await node().status(hash).then(() => null, (x: unknown) => x);
      expect(e, JSON.stringify(bad)).to.be.instanceOf(ChainRpcError).with.property('errorName', 'RPC_BAD_RESPONSE');
    }
    // a receipt without the field: no logs in the state
    answers.eth_getTransactionReceipt = receipt(undefined);
    expect(await node().status(hash)).to.not.have.property('logs');
  });

  it('codes: a designator is DELEGATED (EIP-55), other code (a designator of another length too) CONTRACT, an answer that is not hex a per-item error', async () => {
    const delegate = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359';
    const codes = [`0xef0100${delegate.slice(2)}`, '0x6080', '0x', `0xef0100${delegate.slice(2, 40)}`, 'nope', '0x123'];
    let i = 0;
    answers = {};
    Object.defineProperty(answers, 'eth_getCode', { get: () => codes[i++ % codes.length], enumerable: true });
    const got = await node().delegation.codes(codes.map(() => fresh()));
    expect(got.slice(0, 4)).to.deep.equal([{ kind: 'DELEGATED', delegate: getAddress(delegate) }, { kind: 'CONTRACT' }, { kind: 'EMPTY' }, { kind: 'CONTRACT' }]);
    for (const e of got.slice(4)) expect(e).to.be.instanceOf(ChainRpcError).with.property('errorName', 'RPC_BAD_RESPONSE');
  });

  it('support(): a node that ignores authorizationList (eth_call runs without the delegation) is not supported', async () => {
    answers = { eth_getCode: '0x60', eth_estimateGas: '0x5300', eth_call: '0x' };
    const answer = await node().delegation.support();
    expect(answer.ok).to.equal(false);
    expect(!answer.ok && answer.reason).to.match(/ignores EIP-7702 authorizations/);
  });
});
