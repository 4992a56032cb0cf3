import { expect } from 'chai';
import { HDNodeWallet, Interface, Signature, decodeRlp, Transaction, Wallet, getAddress, getBytes, hexlify, keccak256, randomBytes } from 'ethers';
import {
  ChainRpcError, ChainTransferError, craftTransfer, paying, sequenceNode,
  type ChainAdapter, type ChainEndpoint, type SequenceTransferRequest, type SignedTransaction, type TransferInput, type TransferIntent, type UnsignedTransfer,
} from '@wcs/core';
import { TEST_MNEMONIC, rejected, startReplayServer, testChain, type ReplayServer } from '@wcs/core/testing';
import { testKey, type TestKey } from './keys.test-helper';
import { ANVIL_DEV_KEYS, anvilRpc, deployErc20, erc20Balance, mine, mintErc20, sendNative, setAutomine, startAnvil, waitForReceipt, type AnvilDevnet } from './devnet';
import {
  EVM_TRANSFER_INPUT_FORMAT, EvmTransferCrafter, EvmTransferNode, erc20TransferData, plugin, type EvmTransferInput,
} from './index';

const ANVIL_CHAIN = testChain({ id: 900, code: 'ANVIL', name: 'anvil devnet', family: 'evm', environment: 'test', network: 'anvil', nativeSymbol: 'ETH', decimals: 18, confirmations: 1, evmChainId: 31337 });
const ETHER = 10n ** 18n;
const GWEI = 10n ** 9n;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** A fresh EIP-55 address nobody uses. */
const fresh = () => getAddress(hexlify(randomBytes(20)));

type HotKey = TestKey;
const hotKey = (account: number, index: number): HotKey => testKey(ANVIL_CHAIN, account, index);

/** The adapter's crafter (the plugin's wiring), as the EVM crafter it is. */
function evmCrafter(adapter: ChainAdapter): EvmTransferCrafter {
  const crafter = paying(adapter).transfers;
  if (!(crafter instanceof EvmTransferCrafter)) throw new TypeError('the EVM adapter has another crafter');
  return crafter;
}

/** The adapter's node for an endpoint (the plugin's wiring), as the EVM node it is: a sequence node. */
function evmNode(adapter: ChainAdapter, endpoint: ChainEndpoint): EvmTransferNode {
  const node = sequenceNode(adapter, paying(adapter).createTransferNode(endpoint));
  if (!(node instanceof EvmTransferNode)) throw new TypeError('the EVM adapter made another node');
  return node;
}

const crafter = evmCrafter(plugin.create(ANVIL_CHAIN));

/** A transfer before its nonce is allocated (what transferInput reads). */
function intent(key: HotKey, to: string, amount: bigint, contract: string | null = null): TransferIntent {
  return { from: key.address, fromPublicKey: key.publicKey, to, memo: null, contract, amount };
}

/** The transfer at its nonce (what craft takes). */
function request(key: HotKey, to: string, amount: bigint, sequence: bigint, contract: string | null = null): SequenceTransferRequest {
  return { ...intent(key, to, amount, contract), sequence };
}

function sign(key: HotKey, unsigned: UnsignedTransfer): SignedTransaction {
  return crafter.combine(unsigned, unsigned.payloads.map((p) => key.sign(p)));
}

/** A fixed input, as a node would have answered (EIP-1559 unless gasPrice is given). */
function fixedInput(over: Partial<Record<keyof EvmTransferInput, string | null>> = {}, legacy = false): TransferInput {
  return {
    format: EVM_TRANSFER_INPUT_FORMAT, chainId: '31337', blockHeight: '7',
    baseFeePerGas: legacy ? null : '1000000000',
    maxFeePerGas: legacy ? null : '3000000000',
    maxPriorityFeePerGas: legacy ? null : '1000000000',
    gasPrice: legacy ? '2000000000' : null,
    gasEstimate: '21000', gasLimit: '21000', nextSequence: '0',
    ...over,
  };
}

describe('EvmTransferCrafter (offline)', () => {
  const key = hotKey(1, 0);
  const other = hotKey(1, 1);
  const to = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
  const token = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

  it('is wired into the adapter: transfers and createTransferNode, sequence spend model', () => {
    const adapter = plugin.create(ANVIL_CHAIN);
    expect(adapter.spendModel).to.equal('sequence');
    expect(adapter.transfers).to.be.instanceOf(EvmTransferCrafter);
    expect((adapter.transfers as EvmTransferCrafter).chainId).to.equal(31337);
    expect(paying(adapter).createTransferNode({ url: 'http://127.0.0.1:1' })).to.be.instanceOf(EvmTransferNode);
    // core's dispatch reaches this crafter with a sequence allocation, and refuses another model's
    const req = request(hotKey(1, 0), '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', 1n, 3n);
    const viaCore = craftTransfer(paying(adapter), { spendModel: 'sequence', request: req }, fixedInput());
    expect(viaCore.ok).to.equal(true);
    expect(viaCore.ok && viaCore.unsigned).to.deep.equal(crafter.craft(req, fixedInput()));
    expect(() => craftTransfer(paying(adapter), { spendModel: 'expiring', request: req }, fixedInput())).to.throw(TypeError, /sequence chain/);
    expect(hotKey(0, 0).address, "the hot path is m/44'/60'/{account}'/1/{index}").to.equal(getAddress(HDNodeWallet.fromPhrase(TEST_MNEMONIC, undefined, "m/44'/60'/0'/1/0").address));
  });

  it('crafts deterministically: the same request and input give the same payload, state and maxFee', () => {
    for (const input of [fixedInput(), fixedInput({}, true)]) {
      const a = crafter.craft(request(key, to, 123n, 5n), input);
      const b = crafter.craft(request(key, to.toLowerCase(), 123n, 5n), JSON.parse(JSON.stringify(input)) as TransferInput);
      expect(a.payloads).to.have.length(1);
      expect(a.payloads[0]).to.have.length(32);
      expect(hexlify(a.payloads[0]!)).to.equal(hexlify(b.payloads[0]!));
      expect(a.state).to.deep.equal(b.state);
      expect(a.maxFee).to.equal(b.maxFee);
      expect(a.txHash).to.equal(null);
      expect(JSON.parse(JSON.stringify(a.state))).to.deep.equal(a.state);
      const c = crafter.craft(request(key, to, 123n, 6n), input);
      expect(hexlify(c.payloads[0]!), 'another nonce').to.not.equal(hexlify(a.payloads[0]!));
    }
  });

  it('builds EIP-1559 with a base fee and legacy EIP-155 without one; maxFee = gasLimit x fee per gas', () => {
    const t2 = crafter.craft(request(key, to, 10n ** 30n, 9n), fixedInput({ gasLimit: '30000' }));
    const tx2 = Transaction.from((t2.state as { unsigned: string }).unsigned);
    expect(tx2.type).to.equal(2);
    expect(tx2.chainId).to.equal(31337n);
    expect(tx2.nonce).to.equal(9);
    expect(tx2.to).to.equal(to);
    expect(tx2.value).to.equal(10n ** 30n);
    expect(tx2.data).to.equal('0x');
    expect([tx2.gasLimit, tx2.maxFeePerGas, tx2.maxPriorityFeePerGas]).to.deep.equal([30000n, 3n * GWEI, GWEI]);
    expect(hexlify(t2.payloads[0]!)).to.equal(tx2.unsignedHash);
    expect(t2.maxFee).to.equal(30000n * 3n * GWEI);

    const t0 = crafter.craft(request(key, to, 1n, 0n, token), fixedInput({ gasLimit: '60000' }, true));
    const tx0 = Transaction.from((t0.state as { unsigned: string }).unsigned);
    expect(tx0.type).to.equal(0);
    expect(tx0.chainId, 'EIP-155: the chain id is signed').to.equal(31337n);
    expect(tx0.gasPrice).to.equal(2n * GWEI);
    expect(tx0.to, 'ERC-20: to the contract').to.equal(token);
    expect(tx0.value).to.equal(0n);
    expect(tx0.data).to.equal(erc20TransferData(to, 1n));
    expect(tx0.data.slice(0, 10), 'transfer(address,uint256)').to.equal('0xa9059cbb');
    expect(t0.maxFee).to.equal(60000n * 2n * GWEI);
  });

  it('signs what ethers Wallet signs: combine gives the same raw transaction and hash', async () => {
    const wallet = new Wallet(key.privateKey);
    for (const [input, contract] of [[fixedInput(), null], [fixedInput({}, true), null], [fixedInput({ gasLimit: '65000' }), token], [fixedInput({ gasLimit: '65000' }, true), token]] as const) {
      const unsigned = crafter.craft(request(key, to, 777n, 3n, contract), input);
      const signed = sign(key, unsigned);
      const expected = await wallet.signTransaction(Transaction.from((unsigned.state as { unsigned: string }).unsigned));
      expect(hexlify(signed.raw)).to.equal(expected);
      expect(signed.txHash).to.equal(keccak256(expected));
      expect(Transaction.from(expected).from).to.equal(key.address);
    }
  });

  it('the RLP it writes is ethers\' Transaction, byte for byte: 200 native and ERC-20 transfers, EIP-1559 and legacy, edge values', () => {
    const values = [1n, 255n, 256n, ETHER, (1n << 255n) + 12345n, (1n << 256n) - 1n];
    const nonces = [0n, 1n, 127n, 128n, 65_535n, 2n ** 40n];
    for (let i = 0; i < 200; i++) {
      const legacy = i % 2 === 1;
      const contract = i % 3 === 0 ? token : null;
      const amount = values[i % values.length]!;
      const nonce = nonces[i % nonces.length]!;
      const dest = i % 5 === 0 ? '0x0000000000000000000000000000000000000001' : fresh();
      const input = fixedInput(legacy ? { gasPrice: String(1n + BigInt(i) * 997n), gasLimit: String(21_000 + i) } : { maxFeePerGas: String(GWEI * BigInt(i + 1)), maxPriorityFeePerGas: String(i % 4 === 0 ? 0 : i), gasLimit: String(21_000 + i * 3) }, legacy);
      const made = crafter.craft(request(key, dest, amount, nonce, contract), input);
      const fees = legacy ? { type: 0, gasPrice: BigInt(input.gasPrice as string) } : { type: 2, maxFeePerGas: BigInt(input.maxFeePerGas as string), maxPriorityFeePerGas: BigInt(input.maxPriorityFeePerGas as string), accessList: [] };
      const reference = Transaction.from({
        chainId: 31337n, nonce: Number(nonce), gasLimit: BigInt(input.gasLimit as string), ...fees,
        ...(contract === null ? { to: dest, value: amount, data: '0x' } : { to: contract, value: 0n, data: new Interface(['function transfer(address,uint256)']).encodeFunctionData('transfer', [dest, amount]) }),
      });
      const state = made.state as { unsigned: string };
      expect(crafter.maxFeeOf(request(key, dest, 1n, nonce, contract), input), `transfer ${i}: maxFeeOf, whatever the amount`).to.equal(made.maxFee);
      expect(state.unsigned, `transfer ${i}: unsigned`).to.equal(reference.unsignedSerialized);
      expect(hexlify(made.payloads[0]!), `transfer ${i}: signing hash`).to.equal(reference.unsignedHash);
      const signed = sign(key, made);
      const sig = key.sign(made.payloads[0]!);
      reference.signature = Signature.from({ r: hexlify(sig.bytes.subarray(0, 32)), s: hexlify(sig.bytes.subarray(32)), yParity: sig.recovery as 0 | 1 });
      expect(hexlify(signed.raw), `transfer ${i}: signed`).to.equal(reference.serialized);
      expect(signed.txHash).to.equal(reference.hash);
      expect(Transaction.from(hexlify(signed.raw)).from).to.equal(key.address);
    }
  });

  it('requires the nonce (sequence) and refuses requests and inputs that do not fit', () => {
    const input = fixedInput();
    // what the type rules out, a plain JS caller can still pass: a missing, non-bigint or out-of-range nonce, a utxo request
    expect(() => crafter.craft(intent(key, to, 1n) as SequenceTransferRequest, input)).to.throw(TypeError, /sequence .*is required/);
    for (const sequence of [1, '1', null, -1n, 2n ** 53n] as unknown[]) {
      expect(() => crafter.craft({ ...request(key, to, 1n, 1n), sequence: sequence as bigint }, input), String(sequence)).to.throw(TypeError, /sequence/);
    }
    expect(() => crafter.craft({ ...request(key, to, 1n, 1n), sequence: 1 as unknown as bigint }, input)).to.throw(TypeError, /must be a bigint in \[0, 2\^53\), got number 1/);
    expect(() => crafter.craft({ ...request(key, to, 1n, 1n), inputs: [], changeAddress: to } as SequenceTransferRequest, input)).to.throw(TypeError, /utxo chains/);
    expect(() => crafter.craft(request(key, to, 0n, 1n), input)).to.throw(TypeError, /amount/);
    expect(() => crafter.craft({ ...request(key, to, 1n, 1n), memo: '5' }, input)).to.throw(TypeError, /memo/);
    expect(() => crafter.craft({ ...request(key, to, 1n, 1n), fromPublicKey: other.publicKey }, input)).to.throw(TypeError, /fromPublicKey/);
    expect(() => crafter.craft(request(key, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', 1n, 1n), input)).to.throw(TypeError, /checksum/);
    expect(() => crafter.craft(request(key, to, 1n, 1n, 'USDT'), input)).to.throw(TypeError, /contract/);
    expect(() => crafter.craft(request(key, to, 1n, 1n), fixedInput({ chainId: '1' }))).to.throw(TypeError, /chain id 1/);
    expect(() => crafter.craft(request(key, to, 1n, 1n), { ...input, gasLimit: 21000 })).to.throw(TypeError, /gasLimit/);
    expect(() => crafter.craft(request(key, to, 1n, 1n), fixedInput({ maxPriorityFeePerGas: '4000000000' }))).to.throw(TypeError, /above maxFeePerGas/);
    expect(() => crafter.craft(request(key, to, 1n, 1n), fixedInput({ gasPrice: '1' }))).to.throw(TypeError, /gasPrice null/);
    expect(() => crafter.craft(request(key, to, 1n, 1n), { ...input, format: 'x' })).to.throw(TypeError, /format/);
  });

  it('combine refuses a signature by another key, a wrong recovery id, a high-S signature and a tampered state', () => {
    const unsigned = crafter.craft(request(key, to, 5n, 0n), fixedInput());
    const payload = unsigned.payloads[0]!;
    const byOther = other.sign(payload);
    expect(() => crafter.combine(unsigned, [byOther])).to.throw(ChainTransferError, /recovers .* not the sender/).with.property('errorName', 'WRONG_SIGNER');
    const good = key.sign(payload);
    expect(() => crafter.combine(unsigned, [{ ...good, recovery: 1 - good.recovery! }])).to.throw(ChainTransferError).with.property('errorName', 'WRONG_SIGNER');
    const high = new Uint8Array(good.bytes);
    high.set(getBytes(`0x${(N - BigInt(hexlify(good.bytes.subarray(32)))).toString(16).padStart(64, '0')}`), 32);
    expect(() => crafter.combine(unsigned, [{ ...good, bytes: high, recovery: 1 - good.recovery! }])).to.throw(TypeError, /high-S/);
    expect(() => crafter.combine(unsigned, [])).to.throw(TypeError, /1 signature/);
    expect(() => crafter.combine(unsigned, [good, good])).to.throw(TypeError, /1 signature/);
    expect(() => crafter.combine(unsigned, [{ ...good, recovery: null }])).to.throw(TypeError, /recovery/);
    const otherTx = crafter.craft(request(key, to, 6n, 0n), fixedInput());
    expect(() => crafter.combine({ ...unsigned, state: otherTx.state }, [good])).to.throw(TypeError, /payload/);
    expect(() => crafter.combine({ ...unsigned, state: { ...(unsigned.state as object), from: other.address } }, [good])).to.throw(ChainTransferError);
    // and the good one goes through, recovering the hot address
    const signed = crafter.combine(unsigned, [good]);
    expect(Transaction.from(hexlify(signed.raw)).from).to.equal(key.address);
    expect(Signature.from(Transaction.from(hexlify(signed.raw)).signature!).s <= `0x${(N >> 1n).toString(16)}`).to.equal(true);
  });

  it('exactFee: tip = max fee = next block base fee bound + tip (never above the input max), capped; legacy gasPrice capped; the fee charged is maxFee', () => {
    const input = fixedInput(); // base 1 gwei, max 3 gwei, tip 1 gwei
    const e = crafter.exactFee(input, null);
    expect([e.maxFeePerGas, e.maxPriorityFeePerGas]).to.deep.equal(['2125000000', '2125000000']);
    expect(crafter.craft(request(key, to, 1n, 0n), e).maxFee).to.equal(21_000n * 2_125_000_000n);
    const c = crafter.exactFee(input, 1_500_000_000n);
    expect([c.maxFeePerGas, c.maxPriorityFeePerGas]).to.deep.equal(['1500000000', '1500000000']);
    const high = crafter.exactFee(fixedInput({ maxFeePerGas: '1500000000' }), null);
    expect(high.maxFeePerGas, 'never above the input max').to.equal('1500000000');
    const legacy = crafter.exactFee(fixedInput({}, true), 1_000_000_000n);
    expect(legacy.gasPrice).to.equal('1000000000');
    expect(crafter.exactFee(fixedInput({}, true), null).gasPrice).to.equal('2000000000');
    expect(() => crafter.exactFee(input, 0n)).to.throw(TypeError, /positive/);
    // a token transfer: the gas limit is the estimate, not the payout margin above it
    const token = crafter.exactFee(fixedInput({ gasEstimate: '51000', gasLimit: '61200' }), null);
    expect(token.gasLimit).to.equal('51000');
    expect(crafter.exactFee(fixedInput({ gasEstimate: '51000', gasLimit: '61200' }, true), null).gasLimit).to.equal('51000');
  });

  it('bumpFee raises both 1559 fees (or gasPrice) by the percent, at least 10 %, capped; null when the cap leaves less than 10 %', () => {
    const input = fixedInput(); // max 3 gwei, tip 1 gwei
    const b = crafter.bumpFee(input, 25, 100n * GWEI)!;
    expect([b.maxFeePerGas, b.maxPriorityFeePerGas]).to.deep.equal(['3750000000', '1250000000']);
    expect({ ...b, maxFeePerGas: null, maxPriorityFeePerGas: null }).to.deep.equal({ ...input, maxFeePerGas: null, maxPriorityFeePerGas: null });
    const min = crafter.bumpFee(input, 1, 100n * GWEI)!;
    expect([min.maxFeePerGas, min.maxPriorityFeePerGas], 'at least 10 %').to.deep.equal(['3300000000', '1100000000']);
    const capped = crafter.bumpFee(input, 50, 3_400_000_000n)!;
    expect([capped.maxFeePerGas, capped.maxPriorityFeePerGas]).to.deep.equal(['3400000000', '1500000000']);
    expect(crafter.bumpFee(input, 50, 3_299_999_999n), 'cap below +10 %').to.equal(null);
    expect(crafter.bumpFee(input, 10, 3_300_000_000n)!.maxFeePerGas).to.equal('3300000000');
    // the tip cannot rise 10 % under the cap
    expect(crafter.bumpFee(fixedInput({ maxPriorityFeePerGas: '3000000000' }), 10, 3_300_000_000n)!.maxPriorityFeePerGas).to.equal('3300000000');
    expect(crafter.bumpFee(fixedInput({ maxFeePerGas: '3000000000', maxPriorityFeePerGas: '3000000000' }), 20, 3_200_000_000n)).to.equal(null);
    // a zero tip rises to 1 wei; legacy raises gasPrice
    expect(crafter.bumpFee(fixedInput({ maxPriorityFeePerGas: '0' }), 10, 10n * GWEI)!.maxPriorityFeePerGas).to.equal('1');
    const legacy = crafter.bumpFee(fixedInput({}, true), 12.5, 10n * GWEI)!;
    expect(legacy.gasPrice).to.equal('2250000000');
    expect(legacy.maxFeePerGas).to.equal(null);
    expect(crafter.bumpFee(fixedInput({}, true), 10, 2_199_999_999n)).to.equal(null);
    // the bumped input crafts the same transaction but for the fees
    const a = Transaction.from((crafter.craft(request(key, to, 5n, 4n), input).state as { unsigned: string }).unsigned);
    const c = Transaction.from((crafter.craft(request(key, to, 5n, 4n), b).state as { unsigned: string }).unsigned);
    expect([c.nonce, c.to, c.value, c.gasLimit]).to.deep.equal([a.nonce, a.to, a.value, a.gasLimit]);
    expect(() => crafter.bumpFee(input, Number.NaN, GWEI)).to.throw(TypeError);
    expect(() => crafter.bumpFee(input, 10, 0n)).to.throw(TypeError);
  });
});

describe('EvmTransferNode and the crafter against anvil (cancun: EIP-1559)', function () {
  this.timeout(120_000);
  let anvil: AnvilDevnet;
  let url: string;
  let node: EvmTransferNode;
  let token: string;
  let nextIndex = 0;
  const rpc = <T>(method: string, params: unknown[] = []) => anvilRpc<T>(url, method, params);
  const balanceOf = async (a: string) => BigInt(await rpc<string>('eth_getBalance', [a, 'latest']));

  /** A fresh hot key (its own nonces), funded from an anvil dev account. */
  async function fundedHotKey(ether = 10n): Promise<HotKey> {
    const k = hotKey(7, nextIndex++);
    await sendNative(url, k.address, ether * ETHER);
    return k;
  }

  /** craft → sign → combine → broadcast, at the next nonce unless one is given. */
  async function pay(k: HotKey, to: string, amount: bigint, options: { contract?: string | null; input?: TransferInput; nonce?: bigint } = {}) {
    const req0 = intent(k, to, amount, options.contract ?? null);
    const input = options.input ?? (await node.transferInput(req0));
    const sequence = options.nonce ?? (await node.nextSequence(k.address));
    const unsigned = crafter.craft({ ...req0, sequence }, input);
    const signed = sign(k, unsigned);
    const outcome = await node.broadcast(signed);
    return { input, unsigned, signed, outcome, sequence };
  }

  before(async () => {
    anvil = await startAnvil({ extraArgs: ['--hardfork', 'cancun'] });
    url = anvil.url;
    node = evmNode(plugin.create(ANVIL_CHAIN), { url, timeoutMs: 10_000 });
    token = await deployErc20(url, { name: 'Test Dollar', symbol: 'TUSD' });
  });

  after(async () => {
    await anvil?.stop();
  });

  it('tipHeight is the node\'s newest block, and follows it', async () => {
    const before = await node.tipHeight();
    expect(before).to.equal(BigInt(await rpc<string>('eth_blockNumber')));
    await mine(anvil.url, 2);
    expect(await node.tipHeight()).to.equal(before + 2n);
  });

  it('transferInput reads the base fee, tip, estimate and pending nonce; 21000 for native to an account, +20 % for ERC-20', async () => {
    const k = await fundedHotKey();
    const native = (await node.transferInput(intent(k, fresh(), ETHER))) as EvmTransferInput;
    const latest = await rpc<{ baseFeePerGas: string; number: string }>('eth_getBlockByNumber', ['latest', false]);
    expect(native.format).to.equal(EVM_TRANSFER_INPUT_FORMAT);
    expect(native.chainId).to.equal('31337');
    expect(native.baseFeePerGas).to.equal(BigInt(latest.baseFeePerGas).toString());
    const tip = BigInt(await rpc<string>('eth_maxPriorityFeePerGas'));
    expect(native.maxPriorityFeePerGas).to.equal(tip.toString());
    expect(native.maxFeePerGas).to.equal((2n * BigInt(latest.baseFeePerGas) + tip).toString());
    expect(native.gasPrice).to.equal(null);
    expect([native.gasEstimate, native.gasLimit]).to.deep.equal(['21000', '21000']);
    expect(native.nextSequence).to.equal('0');
    expect(Object.values(native).every((v) => v === null || typeof v === 'string'), 'JSON: decimal strings').to.equal(true);

    await mintErc20(url, token, k.address, 1000n);
    const erc20 = (await node.transferInput(intent(k, fresh(), 10n, token))) as EvmTransferInput;
    const estimate = BigInt(erc20.gasEstimate);
    expect(estimate > 21000n).to.equal(true);
    expect(BigInt(erc20.gasLimit)).to.equal((estimate * 120n + 99n) / 100n);
    expect(await node.nextSequence(k.address)).to.equal(0n);
  });

  it('pays out native coin: the exact value arrives, status() reports MINED with fee = the balance drop minus the value, <= maxFee', async () => {
    const k = await fundedHotKey();
    const to = fresh();
    const amount = 1_234_567_890_123_456_789n;
    const before = await balanceOf(k.address);
    expect(await node.balance(k.address, null)).to.equal(before);
    const { unsigned, signed, outcome } = await pay(k, to, amount);
    expect(outcome).to.deep.equal({ outcome: 'ACCEPTED', txHash: signed.txHash });
    const receipt = await waitForReceipt<{ blockNumber: string; blockHash: string; type: string }>(url, signed.txHash);
    expect(receipt.type).to.equal('0x2');
    expect(await balanceOf(to)).to.equal(amount);
    const st = await node.status(signed.txHash);
    const spent = before - (await balanceOf(k.address));
    expect(st).to.deep.include({ state: 'MINED', blockHeight: BigInt(receipt.blockNumber), blockHash: receipt.blockHash, succeeded: true, confirmations: 1 });
    if (st.state !== 'MINED') throw new Error('unreachable');
    expect(st.fee).to.equal(spent - amount);
    expect(st.fee! > 0n && st.fee! <= unsigned.maxFee).to.equal(true);
    await mine(url, 2);
    expect(await node.status(signed.txHash)).to.deep.include({ confirmations: 3 });
    expect(await node.nextSequence(k.address)).to.equal(1n);
  });

  it('pays out an ERC-20 token: the exact token amount moves, the fee is paid in the native coin', async () => {
    const k = await fundedHotKey();
    const to = fresh();
    await mintErc20(url, token, k.address, 10n ** 24n);
    const nativeBefore = await balanceOf(k.address);
    const amount = 987_654_321_987_654_321_987n;
    const { unsigned, signed, outcome } = await pay(k, to, amount, { contract: token });
    expect(outcome.outcome).to.equal('ACCEPTED');
    await waitForReceipt(url, signed.txHash);
    expect(await erc20Balance(url, token, to)).to.equal(amount);
    expect(await node.balance(to, token)).to.equal(amount);
    expect(await node.balance(k.address, token)).to.equal(10n ** 24n - amount);
    const st = await node.status(signed.txHash);
    if (st.state !== 'MINED') throw new Error(`not mined: ${st.state}`);
    expect(st.succeeded).to.equal(true);
    expect(st.fee).to.equal(nativeBefore - (await balanceOf(k.address)));
    expect(st.fee! <= unsigned.maxFee).to.equal(true);
  });

  it('a second broadcast of the same raw transaction is ALREADY_KNOWN, mined ("nonce too low") or pending ("already imported")', async () => {
    const k = await fundedHotKey();
    const first = await pay(k, fresh(), 1000n);
    expect(first.outcome.outcome).to.equal('ACCEPTED');
    await waitForReceipt(url, first.signed.txHash);
    expect(await node.broadcast(first.signed)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: first.signed.txHash });

    await setAutomine(url, false);
    try {
      const second = await pay(k, fresh(), 1000n);
      expect(second.outcome.outcome).to.equal('ACCEPTED');
      expect(await node.status(second.signed.txHash)).to.deep.equal({ state: 'PENDING' });
      expect(await node.broadcast(second.signed)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: second.signed.txHash });
      await mine(url, 1);
      expect(await node.status(second.signed.txHash)).to.deep.include({ state: 'MINED', succeeded: true });
    } finally {
      await setAutomine(url, true);
    }
  });

  it('another transaction at a used nonce is REJECTED with the node reason (mined: nonce too low; pending: underpriced replacement)', async () => {
    const k = await fundedHotKey();
    const to = fresh();
    const first = await pay(k, to, 1000n);
    await waitForReceipt(url, first.signed.txHash);
    const dup = await pay(k, to, 2000n, { nonce: first.sequence });
    expect(dup.outcome.outcome).to.equal('REJECTED');
    expect((dup.outcome as { reason: string }).reason).to.match(/nonce too low/);
    expect(await node.status(dup.signed.txHash)).to.deep.equal({ state: 'UNKNOWN' });

    await setAutomine(url, false);
    try {
      const pending = await pay(k, to, 1000n);
      const same = await pay(k, to, 3000n, { nonce: pending.sequence, input: pending.input });
      expect(same.outcome.outcome).to.equal('REJECTED');
      expect((same.outcome as { reason: string }).reason).to.match(/underpriced/);
      await mine(url, 1);
    } finally {
      await setAutomine(url, true);
    }
    expect(await balanceOf(to)).to.equal(2000n);
  });

  it('a stuck transaction is replaced at the same nonce through bumpFee: the replacement is mined, the original never', async () => {
    const k = await fundedHotKey();
    const to = fresh();
    await setAutomine(url, false);
    let stuck: Awaited<ReturnType<typeof pay>>;
    let replacement: Awaited<ReturnType<typeof pay>>;
    try {
      stuck = await pay(k, to, 5555n);
      expect(stuck.outcome.outcome).to.equal('ACCEPTED');
      const cap = 1000n * GWEI;
      expect(crafter.bumpFee(stuck.input, 10, BigInt((stuck.input as EvmTransferInput).maxFeePerGas!)), 'no room under the cap').to.equal(null);
      const bumped = crafter.bumpFee(stuck.input, 10, cap)!;
      expect(BigInt(bumped.maxFeePerGas as string) * 10n >= BigInt((stuck.input as EvmTransferInput).maxFeePerGas!) * 11n).to.equal(true);
      replacement = await pay(k, to, 5555n, { nonce: stuck.sequence, input: bumped });
      expect(replacement.outcome).to.deep.equal({ outcome: 'ACCEPTED', txHash: replacement.signed.txHash });
      expect(replacement.signed.txHash).to.not.equal(stuck.signed.txHash);
      expect(await node.status(stuck.signed.txHash), 'the pool dropped the original').to.deep.equal({ state: 'UNKNOWN' });
      await mine(url, 3);
    } finally {
      await setAutomine(url, true);
    }
    expect(await node.status(replacement!.signed.txHash)).to.deep.include({ state: 'MINED', succeeded: true });
    expect(await node.status(stuck!.signed.txHash)).to.deep.equal({ state: 'UNKNOWN' });
    // re-broadcasting the original now is refused: its nonce is taken
    const again = await node.broadcast(stuck!.signed);
    expect(again.outcome).to.equal('REJECTED');
    expect(await balanceOf(to), 'paid once').to.equal(5555n);
    expect(await node.nextSequence(k.address)).to.equal(stuck!.sequence + 1n);
  });

  it('status(): UNKNOWN for a hash never seen; a reverted ERC-20 transfer (amount above the balance) is MINED with succeeded false', async () => {
    expect(await node.status(keccak256(randomBytes(32)))).to.deep.equal({ state: 'UNKNOWN' });
    const k = await fundedHotKey();
    const to = fresh();
    await mintErc20(url, token, k.address, 100n);
    // The node refuses to estimate a transfer that would revert: no input to craft from.
    const e = await rejected(node.transferInput(intent(k, to, 101n, token)), ChainRpcError);
    expect(e.errorName).to.equal('RPC_ERROR');
    expect(e.message).to.match(/eth_estimateGas refused the transfer/);
    // Crafted anyway from the input of a transfer that fits: it is mined and reverts.
    const input = await node.transferInput(intent(k, to, 100n, token));
    const before = await balanceOf(k.address);
    const { signed, outcome } = await pay(k, to, 101n, { contract: token, input });
    expect(outcome.outcome).to.equal('ACCEPTED');
    await waitForReceipt(url, signed.txHash);
    const st = await node.status(signed.txHash);
    expect(st).to.deep.include({ state: 'MINED', succeeded: false });
    if (st.state !== 'MINED') throw new Error('unreachable');
    expect(st.fee).to.equal(before - (await balanceOf(k.address)));
    expect(await node.balance(k.address, token)).to.equal(100n);
    expect(await node.balance(to, token)).to.equal(0n);
  });

  it('20 transfers at consecutive nonces, broadcast concurrently, are all mined: none skipped', async () => {
    const k = await fundedHotKey();
    const to = fresh();
    const req0 = intent(k, to, 1000n);
    const input = await node.transferInput(req0);
    const start = await node.nextSequence(k.address);
    const signed = Array.from({ length: 20 }, (_, i) => sign(k, crafter.craft({ ...req0, amount: 1000n + BigInt(i), sequence: start + BigInt(i) }, input)));
    // shuffled: later nonces may reach the node first and wait for the gap to fill
    const order = signed.map((_, i) => i).sort((a, b) => ((a * 7) % 20) - ((b * 7) % 20));
    // mined on demand: anvil's automine now and then strands one of several concurrent arrivals (see startBlockClock)
    await setAutomine(url, false);
    try {
      const outcomes = await Promise.all(order.map((i) => node.broadcast(signed[i]!)));
      for (const o of outcomes) expect(o.outcome).to.equal('ACCEPTED');
      await mine(url, 1);
    } finally {
      await setAutomine(url, true);
    }
    for (const s of signed) await waitForReceipt(url, s.txHash);
    const states = await Promise.all(signed.map((s) => node.status(s.txHash)));
    for (const st of states) expect(st).to.deep.include({ state: 'MINED', succeeded: true });
    expect(await node.nextSequence(k.address)).to.equal(start + 20n);
    expect(await balanceOf(to)).to.equal(Array.from({ length: 20 }, (_, i) => 1000n + BigInt(i)).reduce((a, b) => a + b));
  });

  it('the set-based forms answer per item what the single calls answer: a refused estimate, a rejected and a known broadcast hide nothing', async () => {
    const k = await fundedHotKey();
    await mintErc20(url, token, k.address, 50n);
    const reqs = [intent(k, fresh(), 1000n), intent(k, fresh(), 51n, token), intent(k, fresh(), 50n, token), intent(k, fresh(), 2000n)];
    const inputs = await node.transferInputs(reqs);
    expect(inputs).to.have.length(4);
    expect(inputs[1]).to.be.instanceOf(ChainRpcError);
    expect((inputs[1] as ChainRpcError).message).to.match(/eth_estimateGas refused the transfer/);
    for (const i of [0, 2, 3]) {
      expect(inputs[i], `item ${i}`).to.not.be.instanceOf(Error);
      const single = (await node.transferInput(reqs[i]!)) as EvmTransferInput;
      expect({ ...(inputs[i] as EvmTransferInput), blockHeight: '' }, `item ${i} as transferInput`).to.deep.equal({ ...single, blockHeight: '' });
    }
    expect(await node.transferInputs([])).to.deep.equal([]);

    const start = await node.nextSequence(k.address);
    const good = [0, 2, 3].map((i, n) => sign(k, crafter.craft({ ...reqs[i]!, sequence: start + BigInt(n) }, inputs[i] as EvmTransferInput)));
    const broke = sign(k, crafter.craft({ ...reqs[0]!, amount: 100n * ETHER, sequence: start + 3n }, inputs[0] as EvmTransferInput));
    // later nonces first: the pool holds them until the gap fills (mined on demand: see startBlockClock)
    await setAutomine(url, false);
    try {
      const outcomes = await node.broadcastMany([good[2]!, broke, good[1]!, good[0]!]);
      expect(outcomes[0]).to.deep.equal({ outcome: 'ACCEPTED', txHash: good[2]!.txHash });
      expect(outcomes[1]).to.deep.include({ outcome: 'REJECTED' });
      expect((outcomes[1] as { reason: string }).reason).to.match(/insufficient funds/i);
      expect(outcomes.slice(2)).to.deep.equal([{ outcome: 'ACCEPTED', txHash: good[1]!.txHash }, { outcome: 'ACCEPTED', txHash: good[0]!.txHash }]);
      expect(await node.broadcastMany([good[0]!]), 'the same bytes again').to.deep.equal([{ outcome: 'ALREADY_KNOWN', txHash: good[0]!.txHash }]);
      await mine(url, 1);
    } finally {
      await setAutomine(url, true);
    }

    const never = keccak256(randomBytes(32));
    for (const s of good) await waitForReceipt(url, s.txHash);
    const states = await node.statusMany([...good.map((s) => s.txHash), never]);
    expect(states[3]).to.deep.equal({ state: 'UNKNOWN' });
    for (let i = 0; i < 3; i++) expect(states[i], `tx ${i}`).to.deep.equal(await node.status(good[i]!.txHash));
    expect(states[0]).to.deep.include({ state: 'MINED', succeeded: true });
    await rejected(node.statusMany(['0x1234']), TypeError);
  });

  it('refusals for good are REJECTED (insufficient funds, intrinsic gas too low, fee below the base fee)', async () => {
    const k = await fundedHotKey(1n);
    const to = fresh();
    const input = (await node.transferInput(intent(k, to, 1n))) as EvmTransferInput;
    const broke = await pay(k, to, 2n * ETHER, { input });
    expect(broke.outcome.outcome).to.equal('REJECTED');
    expect((broke.outcome as { reason: string }).reason).to.match(/insufficient funds/i);
    const cheap = await pay(k, to, 1n, { input: { ...input, maxFeePerGas: '1', maxPriorityFeePerGas: '1' } });
    expect(cheap.outcome).to.deep.include({ outcome: 'REJECTED' });
    expect((cheap.outcome as { reason: string }).reason).to.match(/base fee/);
    // intrinsic gas: the crafter refuses a gas limit below 21000 itself; signed elsewhere, the node refuses it
    expect(() => crafter.craft({ ...request(k, to, 1n, 0n) }, { ...input, gasLimit: '20000' })).to.throw(TypeError, /21000/);
    const raw = await new Wallet(k.privateKey).signTransaction({ type: 2, chainId: 31337n, nonce: 0, to, value: 1n, gasLimit: 20000n, maxFeePerGas: BigInt(input.maxFeePerGas!), maxPriorityFeePerGas: 1n });
    const low = await node.broadcast({ txHash: keccak256(raw), raw: getBytes(raw) });
    expect(low.outcome).to.equal('REJECTED');
    expect((low as { reason: string }).reason).to.match(/intrinsic gas too low/);
  });

  it('checks the node chain id (RPC_WRONG_CHAIN) and throws network faults as coded errors', async () => {
    const k = hotKey(7, 999);
    const wrong = evmNode(plugin.create({ ...ANVIL_CHAIN, evmChainId: 1 }), { url });
    expect((await rejected(wrong.nextSequence(k.address), ChainRpcError)).errorName).to.equal('RPC_WRONG_CHAIN');
    const unsigned = crafter.craft(request(k, fresh(), 1n, 0n), fixedInput());
    expect((await rejected(wrong.broadcast(sign(k, unsigned)), ChainRpcError)).errorName).to.equal('RPC_WRONG_CHAIN');
    const down = new EvmTransferNode({ url: 'http://127.0.0.1:1', timeoutMs: 2000 }, { attempts: 1 });
    expect((await rejected(down.broadcast(sign(k, unsigned)), ChainRpcError)).errorName).to.equal('RPC_UNAVAILABLE');
    expect((await rejected(down.status(keccak256('0x01')), ChainRpcError)).errorName).to.equal('RPC_UNAVAILABLE');
    await rejected(node.broadcast({ txHash: keccak256('0x01'), raw: sign(k, unsigned).raw }), TypeError);
    await rejected(node.status('0x1234'), TypeError);
    await rejected(node.balance('0x1234', null), TypeError);
  });
});

describe('EvmTransferNode and the crafter against anvil (berlin: legacy EIP-155, no base fee)', function () {
  this.timeout(60_000);
  let anvil: AnvilDevnet;
  let url: string;
  let node: EvmTransferNode;
  const balanceOf = async (a: string) => BigInt(await anvilRpc<string>(url, 'eth_getBalance', [a, 'latest']));

  before(async () => {
    anvil = await startAnvil({ extraArgs: ['--hardfork', 'berlin'] });
    url = anvil.url;
    node = evmNode(plugin.create(ANVIL_CHAIN), { url, timeoutMs: 10_000 });
  });

  after(async () => {
    await anvil?.stop();
  });

  it('reads a legacy input (gasPrice, no base fee) and pays out with a type 0 EIP-155 transaction; fee = gasUsed x gasPrice', async () => {
    const k = hotKey(8, 0);
    await sendNative(url, k.address, 5n * ETHER, { fromPrivateKey: ANVIL_DEV_KEYS[1] });
    const to = fresh();
    const req0 = intent(k, to, 3n * ETHER);
    const input = (await node.transferInput(req0)) as EvmTransferInput;
    expect(input.baseFeePerGas).to.equal(null);
    expect([input.maxFeePerGas, input.maxPriorityFeePerGas]).to.deep.equal([null, null]);
    expect(input.gasPrice).to.equal(BigInt(await anvilRpc<string>(url, 'eth_gasPrice')).toString());
    const unsigned = crafter.craft({ ...req0, sequence: await node.nextSequence(k.address) }, input);
    const signed = sign(k, unsigned);
    const tx = Transaction.from(hexlify(signed.raw));
    expect([tx.type, tx.chainId]).to.deep.equal([0, 31337n]);
    const v = BigInt((decodeRlp(hexlify(signed.raw)) as string[])[6]!);
    expect(v === 35n + 2n * 31337n || v === 36n + 2n * 31337n, `EIP-155 v (${v})`).to.equal(true);
    const before = await balanceOf(k.address);
    expect(await node.broadcast(signed)).to.deep.equal({ outcome: 'ACCEPTED', txHash: signed.txHash });
    await waitForReceipt(url, signed.txHash);
    expect(await balanceOf(to)).to.equal(3n * ETHER);
    const st = await node.status(signed.txHash);
    if (st.state !== 'MINED') throw new Error(`not mined: ${st.state}`);
    expect(st.succeeded).to.equal(true);
    expect(st.fee).to.equal(21000n * BigInt(input.gasPrice!));
    expect(st.fee).to.equal(before - (await balanceOf(k.address)) - 3n * ETHER);
    expect(st.fee).to.equal(unsigned.maxFee);
  });

  it('replaces a stuck legacy transaction by a gasPrice bump', async () => {
    const k = hotKey(8, 1);
    await sendNative(url, k.address, 5n * ETHER, { fromPrivateKey: ANVIL_DEV_KEYS[1] });
    const to = fresh();
    const req = request(k, to, ETHER, 0n);
    const input = await node.transferInput(req);
    await setAutomine(url, false);
    let replacement: SignedTransaction;
    let stuck: SignedTransaction;
    try {
      stuck = sign(k, crafter.craft(req, input));
      expect((await node.broadcast(stuck)).outcome).to.equal('ACCEPTED');
      const bumped = crafter.bumpFee(input, 10, 100n * GWEI)!;
      expect(BigInt(bumped.gasPrice as string)).to.equal((BigInt((input as EvmTransferInput).gasPrice!) * 110n + 99n) / 100n);
      replacement = sign(k, crafter.craft(req, bumped));
      expect((await node.broadcast(replacement)).outcome).to.equal('ACCEPTED');
      await mine(url, 1);
    } finally {
      await setAutomine(url, true);
    }
    expect(await node.status(replacement!.txHash)).to.deep.include({ state: 'MINED', succeeded: true });
    expect(await node.status(stuck!.txHash)).to.deep.equal({ state: 'UNKNOWN' });
    expect(await balanceOf(to)).to.equal(ETHER);
  });
});

describe('EvmTransferNode against a scripted node (answers anvil does not give)', () => {
  const key = hotKey(9, 0);
  const signed = sign(key, crafter.craft(request(key, fresh(), 1n, 0n), fixedInput()));
  let server: ReplayServer;
  /** method -> result, or { error } for a JSON-RPC error answer. */
  let answers: Record<string, unknown>;

  before(async () => {
    server = await startReplayServer((req) => {
      const calls = JSON.parse(req.body) as Array<{ id: number; method: string }> | { id: number; method: string };
      const one = (c: { id: number; method: string }) => {
        const a = c.method === 'eth_chainId' ? '0x7a69' : answers[c.method];
        if (a === undefined) return { jsonrpc: '2.0', id: c.id, error: { code: -32601, message: `the method ${c.method} does not exist/is not available` } };
        if (a && typeof a === 'object' && 'error' in a) return { jsonrpc: '2.0', id: c.id, error: (a as { error: unknown }).error };
        return { jsonrpc: '2.0', id: c.id, result: a };
      };
      return { body: Array.isArray(calls) ? calls.map(one) : one(calls) };
    });
  });

  after(async () => {
    await server?.close();
  });

  const node = () => new EvmTransferNode({ url: server.url }, { expectedChainId: 31337, attempts: 1 });
  const sent = () => server.requests.map((r) => JSON.parse(r.body) as { method: string } | Array<{ method: string }>).flatMap((b) => (Array.isArray(b) ? b : [b]).map((c) => c.method));

  it('classifies broadcast refusals: already known, ambiguous ones by lookup, for now (RPC_TRY_LATER), for good (REJECTED)', async () => {
    const refuse = (message: string, code = -32000, known: unknown = null) => {
      answers = { eth_sendRawTransaction: { error: { code, message } }, eth_getTransactionByHash: known };
      server.requests.length = 0;
    };
    refuse('already known');
    expect(await node().broadcast(signed)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: signed.txHash });
    expect(sent(), 'unambiguous: no lookup').to.not.include('eth_getTransactionByHash');
    refuse('nonce too low: next nonce 5, tx nonce 0', -32000, { hash: signed.txHash, blockNumber: '0x1' });
    expect(await node().broadcast(signed)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: signed.txHash });
    expect(sent()).to.include('eth_getTransactionByHash');
    refuse('nonce too low: next nonce 5, tx nonce 0');
    expect(await node().broadcast(signed)).to.deep.equal({ outcome: 'REJECTED', reason: 'nonce too low: next nonce 5, tx nonce 0 (JSON-RPC error -32000)' });
    refuse('unknown transaction type');
    expect((await node().broadcast(signed)).outcome, '"unknown transaction" is not "known transaction"').to.equal('REJECTED');
    for (const [message, code] of [['txpool is full', -32000], ['nonce too high', -32000], ['internal error', -32603]] as const) {
      refuse(message, code);
      const e = await rejected(node().broadcast(signed), ChainRpcError);
      expect(e.errorName, message).to.equal('RPC_TRY_LATER');
      expect(e.rpcCode).to.equal(code);
    }
    answers = { eth_sendRawTransaction: keccak256('0x02') };
    expect((await rejected(node().broadcast(signed), ChainRpcError)).errorName, 'the node answered another hash').to.equal('RPC_BAD_RESPONSE');
  });

  it('balances: native and ERC-20 balances in one batch, in order; a bad token answer is that pair\'s Error', async () => {
    answers = { eth_getBalance: '0x2a', eth_call: '0x' + '0'.repeat(63) + '5' };
    server.requests.length = 0;
    const a = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    const token = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
    expect(await node().balances([{ address: a, contract: null }, { address: a, contract: token }])).to.deep.equal([42n, 5n]);
    const methods = server.requests.map((r) => JSON.parse(r.body) as unknown).filter((x): x is Array<{ method: string }> => Array.isArray(x)).flatMap((x) => x.map((c) => c.method));
    expect(methods.filter((m) => m === 'eth_getBalance' || m === 'eth_call')).to.deep.equal(['eth_getBalance', 'eth_call']);
    answers = { eth_getBalance: '0x2a', eth_call: '0x' };
    const [native, bad] = await node().balances([{ address: a, contract: null }, { address: a, contract: token }]);
    expect(native).to.equal(42n);
    expect(bad).to.be.instanceOf(Error);
    expect((bad as Error).message).to.match(/not an ERC-20 contract/);
  });

  it('nextSequences: every pending nonce in one batch, in order', async () => {
    answers = { eth_getTransactionCount: '0x7' };
    server.requests.length = 0;
    const a = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    const b = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
    expect(await node().nextSequences([a, b])).to.deep.equal([7n, 7n]);
    const batches = server.requests.map((r) => JSON.parse(r.body) as unknown).filter((x): x is Array<{ method: string; params: unknown[] }> => Array.isArray(x));
    const counts = batches.flatMap((x) => x).filter((c) => c.method === 'eth_getTransactionCount');
    expect(counts.map((c) => c.params)).to.deep.equal([[a, 'pending'], [b, 'pending']]);
    expect(await node().nextSequences([])).to.deep.equal([]);
  });

  it('uses the default tip when the node lacks eth_maxPriorityFeePerGas; status adds a rollup l1Fee and falls back to the gasPrice', async () => {
    answers = {
      eth_getBlockByNumber: { number: '0x10', hash: keccak256('0x01'), parentHash: keccak256('0x00'), gasLimit: '0x1c9c380', baseFeePerGas: '0x7' },
      eth_gasPrice: '0x9', eth_estimateGas: '0x5208', eth_getTransactionCount: '0x3',
    };
    const input = (await node().transferInput(intent(key, fresh(), 1n))) as EvmTransferInput;
    expect([input.maxPriorityFeePerGas, input.maxFeePerGas, input.nextSequence, input.blockHeight]).to.deep.equal([GWEI.toString(), (GWEI + 14n).toString(), '3', '16']);
    const custom = new EvmTransferNode({ url: server.url }, { defaultPriorityFeePerGas: 5n, baseFeeMultiplier: 3, gasMarginPercent: 50 });
    answers.eth_estimateGas = '0x10000';
    const erc = (await custom.transferInput(intent(key, fresh(), 1n, '0xdAC17F958D2ee523a2206206994597C13D831ec7'))) as EvmTransferInput;
    expect([erc.maxPriorityFeePerGas, erc.maxFeePerGas, erc.gasLimit]).to.deep.equal(['5', '26', String(0x10000 * 1.5)]);

    const blockHash = keccak256('0x05');
    answers = {
      eth_getTransactionByHash: { hash: signed.txHash, blockNumber: '0x64', gasPrice: '0xa' },
      eth_getTransactionReceipt: { blockNumber: '0x64', blockHash, status: '0x1', gasUsed: '0x5208', l1Fee: '0x3e8' },
      eth_blockNumber: '0x65',
    };
    expect(await node().status(signed.txHash)).to.deep.equal({ state: 'MINED', blockHeight: 100n, blockHash, confirmations: 2, succeeded: true, fee: 21000n * 10n + 1000n });
    answers.eth_getTransactionByHash = { hash: signed.txHash, blockNumber: null };
    answers.eth_getTransactionReceipt = null;
    expect(await node().status(signed.txHash)).to.deep.equal({ state: 'PENDING' });
  });

  it('balance(): a token address without code is a bad answer, not a zero balance', async () => {
    answers = { eth_call: '0x' };
    expect((await rejected(node().balance(key.address, '0xdAC17F958D2ee523a2206206994597C13D831ec7'), ChainRpcError)).errorName).to.equal('RPC_BAD_RESPONSE');
  });
});
