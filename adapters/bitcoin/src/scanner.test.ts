import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import * as net from 'node:net';
import { inspect } from 'node:util';
import { address as btcAddress, crypto as btcCrypto, networks, Transaction } from 'bitcoinjs-lib';
import type { BlockRef, BlockScanner, ObservedTransfer } from '@wcs/core';
import { startRegtest, satsToBtcText, type RegtestNode } from './regtest';
import { BitcoinBlockScanner, BitcoinRpcClient, BitcoinRpcError, outputAddress, plugin, resolveNetwork } from './index';
import { BTC_MAINNET, BTC_REGTEST_RB, BTC_TESTNET } from './fixtures.test-helper';

const adapter = plugin.create(BTC_REGTEST_RB);
const codec = adapter.address;
const NETWORK = resolveNetwork(BTC_REGTEST_RB);

/** A fresh P2WPKH deposit address of our regtest chain, as the codec makes it. */
function depositAddress(): string {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  const jwk = publicKey.export({ format: 'jwk' });
  const x = Buffer.from(jwk.x!, 'base64url');
  const y = Buffer.from(jwk.y!, 'base64url');
  const bytes = Uint8Array.from(Buffer.concat([Buffer.from([0x02 | (y[31]! & 1)]), x]));
  return codec.addressFromPublicKey({ curve: 'secp256k1', bytes });
}

function expectLinked(blocks: readonly BlockRef[], from: bigint): void {
  blocks.forEach((b, i) => {
    expect(b.height, 'contiguous heights').to.equal(from + BigInt(i));
    if (i > 0) expect(b.parentHash, `parent link at ${b.height}`).to.equal(blocks[i - 1]!.hash);
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** A local HTTP server for RPC edge cases; handler gets the parsed body. */
async function mockServer(handler: (body: unknown, req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString('utf8')));
    req.on('end', () => {
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        // left null
      }
      void Promise.resolve(handler(body, req, res)).catch((e: Error) => {
        res.statusCode = 599;
        res.end(e.message);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Everything an error could show when logged: message, stack, cause chain, own properties. */
const everything = (e: unknown) => `${String(e)}\n${(e as Error).stack}\n${inspect(e, { depth: 8 })}`;

async function rejection(p: Promise<unknown>): Promise<BitcoinRpcError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(BitcoinRpcError);
    return e as BitcoinRpcError;
  }
  throw new Error('expected a rejection');
}

describe('outputAddress', () => {
  const net = { ...networks.regtest, bech32: NETWORK.hrp, pubKeyHash: NETWORK.p2pkhVersion, scriptHash: NETWORK.p2shVersion };
  const h20 = Buffer.alloc(20, 0xab);
  const h32 = Buffer.alloc(32, 0xcd);
  const script = (...parts: Array<number[] | Buffer>) => Uint8Array.from(Buffer.concat(parts.map((p) => Buffer.from(p))));

  it('decodes the standard templates as bitcoinjs-lib address.fromOutputScript does, in the codec\'s canonical form', () => {
    const scripts = [
      script([0x00, 0x14], h20), // P2WPKH
      script([0x00, 0x20], h32), // P2WSH
      script([0x76, 0xa9, 0x14], h20, [0x88, 0xac]), // P2PKH
      script([0xa9, 0x14], h20, [0x87]), // P2SH
    ];
    for (const s of scripts) {
      const ours = outputAddress(s, NETWORK);
      expect(ours).to.equal(btcAddress.fromOutputScript(s, net));
      const v = codec.validate(ours!);
      expect(v.valid && v.normalized, ours!).to.equal(ours);
    }
    for (const chain of [BTC_MAINNET, BTC_TESTNET]) {
      const n = resolveNetwork(chain);
      const bjs = chain === BTC_MAINNET ? networks.bitcoin : networks.testnet;
      for (const s of scripts) expect(outputAddress(s, n)).to.equal(btcAddress.fromOutputScript(s, bjs));
    }
  });

  it('decodes P2TR (bech32m) without an ECC library, and returns null for what no address of ours can be', () => {
    const tr = outputAddress(script([0x51, 0x20], h32), NETWORK)!;
    expect(tr).to.equal(btcAddress.toBech32(h32, 1, 'rb'));
    expect(codec.validate(tr).valid).to.equal(true);
    const none = [
      script([0x6a, 0x04, 1, 2, 3, 4]), // OP_RETURN
      script([0x52, 0x10], Buffer.alloc(16)), // witness v2
      script([0x51, 0x14], h20), // v1 with a 20-byte program
      script([0x00, 0x15], Buffer.alloc(21)), // v0 with 21 bytes
      script([0x00, 0x14], Buffer.alloc(19)), // truncated
      script([0x21], Buffer.alloc(33, 2), [0xac]), // P2PK
      script([]),
    ];
    for (const s of none) expect(outputAddress(s, NETWORK), Buffer.from(s).toString('hex')).to.equal(null);
  });
});

describe('regtest helpers', () => {
  it('are the package subpath @wcs/adapter-bitcoin/regtest', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sub = require('@wcs/adapter-bitcoin/regtest') as typeof import('./regtest');
    expect(sub.startRegtest).to.be.a('function');
    expect(sub.BCOIN_REGTEST_HRP).to.equal('rb');
  });

  it('writes satoshis as exact BTC decimals', () => {
    expect(satsToBtcText(1n)).to.equal('0.00000001');
    expect(satsToBtcText(123456789n)).to.equal('1.23456789');
    expect(satsToBtcText(2_100_000_000_000_000n)).to.equal('21000000.00000000');
    expect(() => satsToBtcText(0n)).to.throw(RangeError);
  });
});

describe('BitcoinBlockScanner on a bcoin regtest node', function () {
  this.timeout(60_000);
  let node: RegtestNode;
  let scanner: BlockScanner;

  before(async function () {
    this.timeout(90_000);
    node = await startRegtest();
    const s = adapter.createScanner!({ url: node.url, timeoutMs: 10_000 });
    expect(s.kind).to.equal('blocks');
    scanner = s as BlockScanner;
  });

  after(async () => {
    await node?.stop();
  });

  /** The block's transfers of one transaction. */
  const ofTx = (transfers: readonly ObservedTransfer[], txid: string) => transfers.filter((t) => t.txHash === txid);

  async function decodedTx(txid: string): Promise<Transaction> {
    return Transaction.fromHex(await node.rpc<string>('getrawtransaction', [txid, false]));
  }

  it('reports a P2WPKH deposit with exact satoshis, its output index and its block', async () => {
    const to = depositAddress();
    const sats = 2_000_000_001n; // 20.00000001 BTC: above 2^31, not a float-friendly value
    const txid = await node.send(to, sats);
    expect(await scanner.lookupTransaction(txid)).to.deep.equal({ state: 'PENDING' });
    const [hash] = await node.mine(1);
    const tip = await scanner.tipHeight();

    const { blocks, transfers } = await scanner.scanRange(tip, tip, new Set([to]));
    expect(blocks).to.have.length(1);
    expect(blocks[0]!.hash).to.equal(hash);
    const mine = ofTx(transfers, txid);
    expect(mine).to.have.length(1);
    const t = mine[0]!;
    const tx = await decodedTx(txid);
    expect(outputAddress(tx.outs[t.position]!.script, NETWORK)).to.equal(to);
    expect(tx.outs[t.position]!.value).to.equal(sats);
    expect(t).to.deep.equal({
      txHash: txid, position: t.position, fromAddress: null, toAddress: to, memo: null, contract: null,
      amount: sats, blockHeight: tip, blockHash: hash, succeeded: true,
    });
    expect(await scanner.lookupTransaction(txid)).to.deep.equal({ state: 'MINED', blockHeight: tip, blockHash: hash, succeeded: true });
  });

  it('reports each output of one transaction paying two watched addresses (sendmany), and nothing else of it', async () => {
    const a = depositAddress();
    const b = depositAddress();
    const unwatched = depositAddress();
    const txid = await node.sendMany([
      { address: a, sats: 12_345n },
      { address: unwatched, sats: 50_000n },
      { address: b, sats: 100_000_001n },
    ]);
    const [hash] = await node.mine(1);
    const tip = await scanner.tipHeight();
    const { transfers } = await scanner.scanRange(tip, tip, new Set([a, b]));
    const mine = ofTx(transfers, txid);
    expect(mine.map((t) => [t.toAddress, t.amount])).to.have.deep.members([[a, 12_345n], [b, 100_000_001n]]);
    const tx = await decodedTx(txid);
    expect(tx.outs).to.have.length(4); // three payments and the change
    for (const t of mine) {
      expect(outputAddress(tx.outs[t.position]!.script, NETWORK)).to.equal(t.toAddress);
      expect(t.blockHash).to.equal(hash);
    }
    expect(new Set(mine.map((t) => t.position)).size).to.equal(2);
    expect(transfers.some((t) => t.toAddress === unwatched)).to.equal(false);
  });

  it('reports several deposits in one block, each (txHash, position) once, P2PKH to our regtest encoding included', async () => {
    const a = depositAddress();
    const b = depositAddress();
    // A legacy P2PKH deposit: bcoin's wallet wants its own regtest version byte (0x3c), our regtest
    // chain encodes the same output with Bitcoin Core's 0x6f.
    const h160 = btcCrypto.hash160(Buffer.alloc(33, 3));
    const legacyOurs = btcAddress.toBase58Check(h160, NETWORK.p2pkhVersion);
    expect(codec.validate(legacyOurs).valid).to.equal(true);
    const txs = [
      await node.send(a, 1_000n * 1_000n),
      await node.send(a, 7_777n),
      await node.send(b, 30_000n),
      await node.send(btcAddress.toBase58Check(h160, 0x3c), 55_555n),
    ];
    const [hash] = await node.mine(1);
    const tip = await scanner.tipHeight();
    const { transfers } = await scanner.scanRange(tip, tip, new Set([a, b, legacyOurs]));
    expect(transfers).to.have.length(4);
    expect(transfers.map((t) => t.txHash)).to.have.members(txs);
    expect(new Set(transfers.map((t) => `${t.txHash}:${t.position}`)).size).to.equal(4);
    expect(transfers.map((t) => [t.toAddress, t.amount])).to.have.deep.members([[a, 1_000_000n], [a, 7_777n], [b, 30_000n], [legacyOurs, 55_555n]]);
    for (const t of transfers) expect([t.blockHeight, t.blockHash]).to.deep.equal([tip, hash]);
    // Block order: the transfers follow the transactions' order in the block.
    const block = await node.rpc<{ tx: string[] }>('getblock', [hash, true]);
    const order = transfers.map((t) => block.tx.indexOf(t.txHash));
    expect(order).to.deep.equal([...order].sort((x, y) => x - y));
  });

  it('follows the tip: tipHeight advances with mined blocks, blockAt gives hashes and parent links, null above the tip', async () => {
    const before = await scanner.tipHeight();
    const hashes = await node.mine(3);
    const tip = await scanner.tipHeight();
    expect(tip).to.equal(before + 3n);
    const top = await scanner.blockAt(tip);
    const below = await scanner.blockAt(tip - 1n);
    expect(top).to.deep.equal({ height: tip, hash: hashes[2], parentHash: hashes[1] });
    expect(below!.hash).to.equal(hashes[1]);
    expect(await scanner.blockAt(tip + 1n)).to.equal(null);
    expect(await scanner.blockAt(tip + 1000n)).to.equal(null);
    const genesis = await scanner.blockAt(0n);
    expect(genesis!.parentHash).to.equal('0'.repeat(64));
    expect(genesis!.hash).to.equal(await node.rpc('getblockhash', [0]));
  });

  it('ignores unwatched outputs and coinbase outputs, and reports nothing for an empty watched set', async () => {
    const watched = depositAddress();
    const other = depositAddress();
    const txid = await node.send(other, 40_000n);
    // A coinbase paying the watched address: not a deposit (immature for 100 blocks).
    const [hash] = await node.mine(1, watched);
    const tip = await scanner.tipHeight();
    const scan = await scanner.scanRange(tip, tip, new Set([watched]));
    expect(scan.blocks.map((b) => b.hash)).to.deep.equal([hash]);
    expect(scan.transfers).to.deep.equal([]);
    const empty = await scanner.scanRange(tip, tip, new Set());
    expect(empty.blocks).to.have.length(1);
    expect(empty.transfers).to.deep.equal([]);
    expect(ofTx((await scanner.scanRange(tip, tip, new Set([other]))).transfers, txid)).to.have.length(1);
    // Coinbase outputs on request.
    const withCoinbase = new BitcoinBlockScanner(NETWORK, { url: node.url }, { includeCoinbase: true });
    const cb = (await withCoinbase.scanRange(tip, tip, new Set([watched]))).transfers;
    expect(cb).to.have.length(1);
    expect(cb[0]!.position).to.equal(0);
    expect(cb[0]!.amount > 0n).to.equal(true);
  });

  it('scans long ranges in order with intact parent links, stops at the tip, and returns nothing for to < from', async () => {
    const tip = await scanner.tipHeight();
    const started = process.hrtime.bigint();
    const { blocks } = await scanner.scanRange(tip - 99n, tip, new Set([depositAddress()]));
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(blocks).to.have.length(100);
    expectLinked(blocks, tip - 99n);
    expect(blocks[99]!.hash).to.equal((await scanner.blockAt(tip))!.hash);
    expect(blocks[0]!.parentHash).to.equal((await scanner.blockAt(tip - 100n))!.hash);
    expect(ms, 'scanRange of 100 regtest blocks').to.be.below(5000);

    const whole = await scanner.scanRange(0n, tip, new Set());
    expect(whole.blocks).to.have.length(Number(tip) + 1);
    expectLinked(whole.blocks, 0n);

    const past = await scanner.scanRange(tip - 1n, tip + 5n, new Set());
    expect(past.blocks.map((b) => b.height)).to.deep.equal([tip - 1n, tip]);
    expect((await scanner.scanRange(tip + 1n, tip + 3n, new Set())).blocks).to.deep.equal([]);
    expect(await scanner.scanRange(5n, 4n, new Set())).to.deep.equal({ blocks: [], transfers: [] });
    let thrown: unknown;
    try {
      await scanner.scanRange(-1n, 3n, new Set());
    } catch (e) {
      thrown = e;
    }
    expect(thrown).to.be.instanceOf(RangeError);
  });

  it('follows a reorg: invalidateblock, the transaction back in the mempool, a competing chain re-mining it', async () => {
    const to = depositAddress();
    const txid = await node.send(to, 424_242n);
    const raw = await node.rpc<string>('getrawtransaction', [txid, false]);
    const [old1, old2] = await node.mine(2);
    const tip = await scanner.tipHeight();
    const h = tip - 1n; // the deposit's height
    const first = await scanner.scanRange(h - 1n, tip, new Set([to]));
    expectLinked(first.blocks, h - 1n);
    expect(ofTx(first.transfers, txid).map((t) => [t.blockHeight, t.blockHash])).to.deep.equal([[h, old1]]);
    const parent = first.blocks[0]!;

    await node.rpc('invalidateblock', [old1]);
    await node.syncWallet();
    expect(await scanner.tipHeight()).to.equal(h - 1n);
    expect(await scanner.blockAt(h)).to.equal(null);
    // bcoin implements invalidateblock as a chain reset that empties the mempool (bitcoind would put
    // the block's transactions back): the node forgets the transaction until someone relays it.
    expect(await scanner.lookupTransaction(txid)).to.deep.equal({ state: 'UNKNOWN' });
    await node.rpc('sendrawtransaction', [raw]);
    for (let i = 0; i < 200 && !(await node.rpc<string[]>('getrawmempool')).includes(txid); i++) await new Promise((r) => setTimeout(r, 5));
    expect(await scanner.lookupTransaction(txid)).to.deep.equal({ state: 'PENDING' });

    // A competing chain, longer than the old one, mined elsewhere: the deposit lands in its first block.
    const fresh = await node.mine(3, depositAddress());
    expect(fresh[0]).to.not.equal(old1);
    expect(fresh).to.not.include(old2);
    const newTip = await scanner.tipHeight();
    expect(newTip).to.equal(tip + 1n);
    const at = await scanner.blockAt(h);
    expect(at).to.deep.equal({ height: h, hash: fresh[0], parentHash: parent.hash });
    const second = await scanner.scanRange(h - 1n, newTip, new Set([to]));
    expectLinked(second.blocks, h - 1n);
    expect(second.blocks[0]).to.deep.equal(parent);
    expect(second.blocks.map((b) => b.hash).slice(1)).to.deep.equal(fresh);
    const again = ofTx(second.transfers, txid);
    expect(again.map((t) => [t.blockHeight, t.blockHash, t.position, t.amount])).to.deep.equal([[h, fresh[0], ofTx(first.transfers, txid)[0]!.position, 424_242n]]);
    expect(await scanner.lookupTransaction(txid)).to.deep.equal({ state: 'MINED', blockHeight: h, blockHash: fresh[0], succeeded: true });
  });

  it('answers UNKNOWN for a transaction the node never saw, and refuses malformed txids', async () => {
    expect(await scanner.lookupTransaction('ab'.repeat(32))).to.deep.equal({ state: 'UNKNOWN' });
    let thrown: unknown;
    try {
      await scanner.lookupTransaction('XYZ');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).to.be.instanceOf(TypeError);
  });

  it('says RPC_ERROR for refused credentials and node errors, without the credentials', async () => {
    const port = new URL(node.url).port;
    const wrong = adapter.createScanner!({ url: `http://x:not-the-key-s3cr3t@127.0.0.1:${port}` }) as BlockScanner;
    const e = await rejection(wrong.tipHeight());
    expect(e.code).to.equal('RPC_ERROR');
    expect(e.httpStatus).to.equal(401);
    expect(everything(e)).to.not.include('s3cr3t');
    expect(everything(e)).to.not.include(node.apiKey);
    const client = new BitcoinRpcClient({ url: node.url });
    const bad = await rejection(client.call('nosuchmethod', []));
    expect(bad.code).to.equal('RPC_ERROR');
    expect(bad.rpcCode).to.be.a('number');
    expect(everything(bad)).to.not.include(node.apiKey);
  });

  /** A proxy to the node that sees every request's calls and may rewrite the answers. */
  async function passThrough(onCalls: (calls: Array<{ method: string; params: unknown[]; id: unknown }>) => void, rewrite?: (answers: Array<{ id: unknown; result: unknown; error: unknown }>, calls: Array<{ method: string; params: unknown[]; id: unknown }>) => void) {
    const target = new URL(node.url);
    const auth = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`;
    return mockServer(async (body, _req, res) => {
      const calls = (Array.isArray(body) ? body : [body]) as Array<{ method: string; params: unknown[]; id: unknown }>;
      onCalls(calls);
      const r = await fetch(`http://${target.host}/`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      let text = await r.text();
      if (rewrite && Array.isArray(body)) {
        const answers = JSON.parse(text) as Array<{ id: unknown; result: unknown; error: unknown }>;
        rewrite(answers, calls);
        text = JSON.stringify(answers);
      }
      res.statusCode = r.status;
      res.end(text);
    });
  }

  it('ends a range at a block that left the node between getblockhash and getblock', async () => {
    const tip = await scanner.tipHeight();
    const goneHash = (await scanner.blockAt(tip - 2n))!.hash;
    const proxy = await passThrough(() => undefined, (answers, calls) => {
      for (const a of answers) {
        const call = calls.find((c) => c.id === a.id)!;
        if (call.method === 'getblock' && call.params[0] === goneHash) Object.assign(a, { result: null, error: { code: -1, message: 'Block not found' } });
      }
    });
    try {
      const s = new BitcoinBlockScanner(NETWORK, { url: proxy.url });
      const { blocks } = await s.scanRange(tip - 4n, tip, new Set());
      expect(blocks.map((b) => b.height)).to.deep.equal([tip - 4n, tip - 3n]);
    } finally {
      await proxy.close();
    }
  });

  it('sizes getblock batches from the blocks it has seen: few requests for small blocks, bounded answers for big ones', async () => {
    const sizes: number[] = [];
    const proxy = await passThrough((calls) => {
      if (calls[0]!.method === 'getblock') sizes.push(calls.length);
    });
    try {
      const tip = await scanner.tipHeight();
      const big = new BitcoinBlockScanner(NETWORK, { url: proxy.url });
      expect((await big.scanRange(tip - 199n, tip, new Set())).blocks).to.have.length(200);
      expect(sizes[0]).to.equal(4); // the first wave, before any block was seen
      expect(sizes.length, `getblock requests: ${sizes.join(',')}`).to.be.at.most(8);
      sizes.length = 0;
      // As if blocks were big: a 1 500-character budget allows two or three regtest blocks per answer.
      const small = new BitcoinBlockScanner(NETWORK, { url: proxy.url }, { blockBatch: 1, blockBatchChars: 1_500 });
      const blocks = (await small.scanRange(tip - 29n, tip, new Set())).blocks;
      expectLinked(blocks, tip - 29n);
      expect(blocks).to.have.length(30);
      expect(Math.max(...sizes), `getblock batch sizes: ${sizes.join(',')}`).to.be.at.most(5);
    } finally {
      await proxy.close();
    }
  });

  it('falls back to single calls when the server refuses batches, and sends endpoint headers', async () => {
    const seen = { arrays: 0, singles: 0, header: 0 };
    const target = new BitcoinRpcClient({ url: node.url });
    const proxy = await mockServer(async (body, req, res) => {
      if (req.headers['x-api-key'] === 'provider-key') seen.header++;
      res.setHeader('content-type', 'application/json');
      if (Array.isArray(body)) {
        seen.arrays++;
        res.statusCode = 400;
        res.end(JSON.stringify({ result: null, error: { code: -32600, message: 'batches not supported' }, id: null }));
        return;
      }
      seen.singles++;
      const { method, params, id } = body as { method: string; params: unknown[]; id: number };
      try {
        res.end(JSON.stringify({ result: await target.call(method, params), error: null, id }));
      } catch (e) {
        res.statusCode = 500;
        res.end(JSON.stringify({ result: null, error: { code: (e as BitcoinRpcError).rpcCode, message: (e as Error).message }, id }));
      }
    });
    try {
      const viaProxy = adapter.createScanner!({ url: proxy.url, headers: { 'X-Api-Key': 'provider-key' } }) as BlockScanner;
      const tip = await scanner.tipHeight();
      const direct = await scanner.scanRange(tip - 20n, tip, new Set());
      const proxied = await viaProxy.scanRange(tip - 20n, tip, new Set());
      expect(proxied).to.deep.equal(direct);
      expect(seen.arrays).to.equal(1); // tried once, then singles for good
      expect(seen.singles).to.be.at.least(42);
      expect(seen.header).to.equal(seen.arrays + seen.singles);
      expect(await viaProxy.blockAt(tip + 1n)).to.equal(null); // -8 through HTTP 500 + JSON-RPC body
    } finally {
      await proxy.close();
    }
  });
});

describe('BitcoinRpcClient failures', function () {
  this.timeout(10_000);

  it('says RPC_UNAVAILABLE quickly for a dead port, after bounded retries, without the credentials', async () => {
    const port = await freePort();
    const scanner = adapter.createScanner!({ url: `http://alice:pa%40ss-s3cr3t@127.0.0.1:${port}/wallet/k3y?token=t0k3n` }) as BlockScanner;
    const started = Date.now();
    const e = await rejection(scanner.tipHeight());
    expect(Date.now() - started).to.be.below(2000);
    expect(e.code).to.equal('RPC_UNAVAILABLE');
    expect(e.method).to.equal('getblockcount');
    expect(e.message).to.include(`http://127.0.0.1:${port}`);
    expect(e.message).to.include('ECONNREFUSED');
    expect(e.message).to.include('3 attempts');
    for (const secret of ['alice', 's3cr3t', 'pa@ss', 'pa%40ss', 'k3y', 't0k3n']) expect(everything(e), secret).to.not.include(secret);
  });

  it('retries HTTP 503 and then succeeds; sends Basic auth from the URL userinfo (percent-decoded)', async () => {
    let calls = 0;
    let auth = '';
    const srv = await mockServer((body, req, res) => {
      calls++;
      auth = req.headers.authorization ?? '';
      if (calls < 3) {
        res.statusCode = 503;
        res.end('busy');
        return;
      }
      res.end(JSON.stringify({ result: 7, error: null, id: (body as { id: number }).id }));
    });
    try {
      const url = srv.url.replace('http://', 'http://us%3Aer:p%40ss@');
      const scanner = new BitcoinBlockScanner(NETWORK, { url }, { retryDelayMs: 10 });
      expect(await scanner.tipHeight()).to.equal(7n);
      expect(calls).to.equal(3);
      expect(auth).to.equal(`Basic ${Buffer.from('us:er:p@ss').toString('base64')}`);
    } finally {
      await srv.close();
    }
  });

  it('gives up on HTTP 5xx with RPC_UNAVAILABLE, reads Bitcoin Core HTTP 500 JSON-RPC errors as RPC_ERROR', async () => {
    const srv = await mockServer((body, _req, res) => {
      const { method, id } = body as { method: string; id: number };
      res.statusCode = 500;
      if (method === 'getblockcount') res.end('<html>proxy error</html>');
      else res.end(JSON.stringify({ result: null, error: { code: -5, message: 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.' }, id }));
    });
    try {
      const scanner = new BitcoinBlockScanner(NETWORK, { url: srv.url }, { retryDelayMs: 5 });
      const e = await rejection(scanner.tipHeight());
      expect([e.code, e.httpStatus]).to.deep.equal(['RPC_UNAVAILABLE', 500]);
      expect(await scanner.lookupTransaction('cd'.repeat(32))).to.deep.equal({ state: 'UNKNOWN' });
    } finally {
      await srv.close();
    }
  });

  it('times out per endpoint.timeoutMs with RPC_UNAVAILABLE', async () => {
    const srv = await mockServer(() => new Promise<void>(() => undefined));
    try {
      const scanner = new BitcoinBlockScanner(NETWORK, { url: srv.url, timeoutMs: 150 }, { retries: 1, retryDelayMs: 5 });
      const started = Date.now();
      const e = await rejection(scanner.tipHeight());
      expect(e.code).to.equal('RPC_UNAVAILABLE');
      expect(e.message).to.include('no answer within 150 ms');
      expect(Date.now() - started).to.be.below(1500);
    } finally {
      await srv.close();
    }
  });

  it('blanks credentials a node echoes in its error messages', async () => {
    const srv = await mockServer((body, _req, res) => {
      res.end(JSON.stringify({ result: null, error: { code: -1, message: `bad request to http://bob:hunter22@10.0.0.1/ with key hunter22 and header k3y-from-header` }, id: (body as { id: number }).id }));
    });
    try {
      const url = srv.url.replace('http://', 'http://bob:hunter22@');
      const e = await rejection(new BitcoinBlockScanner(NETWORK, { url, headers: { 'x-key': 'k3y-from-header' } }).tipHeight());
      expect(e.code).to.equal('RPC_ERROR');
      for (const secret of ['hunter22', 'k3y-from-header', 'bob:']) expect(everything(e), secret).to.not.include(secret);
    } finally {
      await srv.close();
    }
  });

  it('refuses an endpoint URL it cannot use without echoing it', () => {
    for (const url of ['not a url s3cr3t', 'ftp://u:s3cr3t@host/']) {
      let thrown: unknown;
      try {
        adapter.createScanner!({ url });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).to.be.instanceOf(BitcoinRpcError);
      expect(everything(thrown)).to.not.include('s3cr3t');
    }
  });
});
