/**
 * Child-process entry of startRegtest() (./regtest.ts): one bcoin 1.0.2 regtest full node with its
 * wallet plugin, in memory, no P2P listening, no worker processes, transaction and address indexes
 * on, BIP-125 transactions accepted (replace-by-fee). Not loaded
 * by the package's index; never imported, only forked.
 *
 * argv[2]: JSON { apiKey, prefix, logLevel }. IPC to the parent:
 *   -> { type: 'ready', port, walletPort }   once both HTTP servers listen
 *   -> { type: 'fatal', message }            when the node cannot start
 *   <- { type: 'sync', id }  -> { type: 'synced', id, height } | { type: 'synced', id, error }
 *      (resolves once the wallet has processed the node's current tip)
 */
import * as net from 'node:net';

// bcrypto picks its backend when first required; native bindings are not built in this repo.
process.env['NODE_BACKEND'] = 'js';

interface ChildArgs {
  readonly apiKey: string;
  readonly prefix: string;
  readonly logLevel: string;
}

type Msg = { type: 'sync'; id: number };

/** bcoin 1.0.2 keeps hashes as hex strings (internal byte order); later versions as Buffers. */
const hashText = (h: string | Buffer): string => (typeof h === 'string' ? h : h.toString('hex'));

const send = (m: unknown) => {
  if (process.send) process.send(m);
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

async function start(args: ChildArgs) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bcoin = require('bcoin');
  let lastError: unknown;
  // The ports are free when probed; another process could take one before bcoin binds it: retry.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    let walletPort = await freePort();
    while (walletPort === port) walletPort = await freePort();
    const node = new bcoin.FullNode({
      network: 'regtest',
      prefix: args.prefix,
      memory: true,
      workers: false,
      listen: false,
      indexTX: true,
      // Withdrawal tests: the hot wallet's coins (GET /coin/address) and BIP-125 transactions.
      indexAddress: true,
      replaceByFee: true,
      httpHost: '127.0.0.1',
      httpPort: port,
      apiKey: args.apiKey,
      walletHttpHost: '127.0.0.1',
      walletHttpPort: walletPort,
      walletWitness: true,
      logLevel: args.logLevel,
      logConsole: args.logLevel !== 'none',
    });
    const wallet = node.use(bcoin.wallet.plugin);
    try {
      await node.open();
      // "Connected" with no peers (listen off, regtest has no DNS seeds, memory host list): bcoin's
      // pool asserts it is connected when the chain resets (invalidateblock), and that throw would
      // stop the reset from reaching the mempool and the wallet.
      await node.connect();
      return { node, wallet, port, walletPort };
    } catch (e) {
      lastError = e;
      await node.close().catch(() => undefined);
      if ((e as { code?: string }).code !== 'EADDRINUSE') break;
    }
  }
  throw lastError;
}

async function main() {
  const args = JSON.parse(process.argv[2] ?? '{}') as ChildArgs;
  const { node, wallet, port, walletPort } = await start(args);
  node.on('error', (e: Error) => process.stderr.write(`bcoin node error: ${e.stack ?? e.message}\n`));

  const synced = async (): Promise<number> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const chainTip = node.chain.tip;
      let walletTip: { height: number; hash: Buffer } | null = null;
      try {
        walletTip = await wallet.wdb.getTip();
      } catch (e) {
        // while the wallet rolls back after invalidateblock its tip record is briefly missing ("WDB: Tip not found!")
        if (Date.now() > deadline) throw e;
      }
      if (walletTip && walletTip.height === chainTip.height && hashText(walletTip.hash) === hashText(chainTip.hash)) return chainTip.height;
      if (Date.now() > deadline) throw new Error(`wallet stuck at height ${walletTip?.height ?? '(no tip)'}, chain at ${chainTip.height}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  process.on('message', (m: Msg) => {
    if (m?.type === 'sync') {
      synced().then(
        (height) => send({ type: 'synced', id: m.id, height }),
        (e: Error) => send({ type: 'synced', id: m.id, error: e.message }),
      );
    }
  });
  send({ type: 'ready', port, walletPort });
}

// The parent went away (or closed the channel): nothing is kept, leave at once.
process.on('disconnect', () => process.exit(0));

main().catch((e: Error) => {
  send({ type: 'fatal', message: e?.stack ?? String(e) });
  process.stderr.write(`regtest node failed to start: ${e?.stack ?? String(e)}\n`);
  process.exit(1);
});
