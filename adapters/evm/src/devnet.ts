/**
 * `@wcs/adapter-evm/devnet`: a local EVM chain (Foundry's anvil) for tests and demos, and a few
 * helpers to put deposits on it. Never loaded by the adapter itself (index.ts does not import it).
 *
 * anvil comes from the `@foundry-rs/anvil` dependency, whose per-platform packages carry the
 * binary. deployErc20 reads OpenZeppelin's compiled ERC20PresetMinterPauser from
 * `@openzeppelin/contracts` (a development dependency of the workspace, not of this package).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { Contract, ContractFactory, JsonRpcProvider, Wallet, type InterfaceAbi } from 'ethers';

/**
 * The private keys anvil funds by default: BIP-39 mnemonic "test test test test test test test
 * test test test test junk", path m/44'/60'/0'/0/{0..9} (anvil's DEFAULT_MNEMONIC and default
 * --derivation-path; the keys and addresses are listed in anvil's startup output, see
 * https://getfoundry.sh/anvil). Public knowledge: never use them anywhere but a local chain.
 * Addresses: 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266, 0x70997970C51812dc3A010C7d01b50e0d17dc79C8,
 * 0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC, 0x90F79bf6EB2c4f870365E785982E1f101E93b906,
 * 0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65, 0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc,
 * 0x976EA74026E726554dB657fA54763abd0C3a0aa9, 0x14dC79964da2C08b23698B3D3cc7Ca32193d9955,
 * 0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f, 0xa0Ee7A142d267C1f36714E4a8F75612F20a79720.
 */
export const ANVIL_DEV_KEYS: readonly string[] = Object.freeze([
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
  '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
  '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97',
  '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6',
]);

/** anvil's default mnemonic (the one ANVIL_DEV_KEYS come from). */
export const ANVIL_DEFAULT_MNEMONIC = 'test test test test test test test test test test test junk';

/** anvil's chain id when --chain-id is not given. */
export const ANVIL_DEFAULT_CHAIN_ID = 31337;

// ---- Launching anvil ----

/** The npm package carrying the anvil binary per platform and CPU (the optional dependencies of @foundry-rs/anvil). */
const ANVIL_PACKAGES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  linux: { x64: '@foundry-rs/anvil-linux-amd64', arm64: '@foundry-rs/anvil-linux-arm64' },
  darwin: { x64: '@foundry-rs/anvil-darwin-amd64', arm64: '@foundry-rs/anvil-darwin-arm64' },
  win32: { x64: '@foundry-rs/anvil-win32-amd64' },
};

/** Path of the anvil binary of this platform's @foundry-rs/anvil-<platform>-<arch> package; throws naming the package when it is missing. */
export function anvilBinaryPath(): string {
  const pkg = ANVIL_PACKAGES[process.platform]?.[process.arch];
  if (!pkg) throw new Error(`anvil: no @foundry-rs/anvil binary package for ${process.platform}/${process.arch} (supported: linux x64/arm64, darwin x64/arm64, win32 x64)`);
  let pkgJson: string;
  try {
    pkgJson = require.resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(`anvil: package ${pkg} is not installed (it is an optional dependency of @foundry-rs/anvil: install without --omit=optional / --no-optional)`);
  }
  const bin = join(dirname(pkgJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(bin)) throw new Error(`anvil: ${pkg} is installed but has no binary at ${bin}`);
  return bin;
}

export interface StartAnvilOptions {
  /** TCP port on 127.0.0.1 (default: a free port, picked by the OS). */
  readonly port?: number;
  /** EIP-155 chain id (anvil's default: 31337). */
  readonly chainId?: number;
  /** Seconds between blocks; omitted: a block is mined for each transaction (automine). */
  readonly blockTime?: number;
  /** Number of funded dev accounts (anvil's default: 10). */
  readonly accounts?: number;
  /** BIP-39 mnemonic of the dev accounts (anvil's default: ANVIL_DEFAULT_MNEMONIC, the keys of ANVIL_DEV_KEYS). */
  readonly mnemonic?: string;
  /** Run anvil with --silent (default true; faster); false copies its output, a line per request, to this process's stderr. */
  readonly silent?: boolean;
  /** How long anvil may take to answer eth_chainId, ms (default 20000). */
  readonly startTimeoutMs?: number;
  /** Another anvil binary (default: anvilBinaryPath()). */
  readonly binary?: string;
  /** More anvil arguments, passed as they are. */
  readonly extraArgs?: readonly string[];
}

export interface AnvilDevnet {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly chainId: number;
  readonly port: number;
  readonly process: ChildProcess;
  /** Stops anvil (SIGTERM, then SIGKILL after 3 s); resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}

/** Every anvil started here and still running: killed when this process exits. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

const TAIL = 4000;
const tail = (s: string) => (s.length > TAIL ? s.slice(-TAIL) : s);

/** A port free now on 127.0.0.1 (bound by the OS, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

class PortInUse extends Error {}

/**
 * Starts anvil on 127.0.0.1 and resolves once it answers eth_chainId. The child is killed by
 * stop() and, failing that, when this process exits; it does not keep this process alive.
 *
 * Silent (the default), anvil runs with --silent: it otherwise logs every request, and reading
 * that log costs it about a third of its throughput. Its port is then picked here (a free port,
 * tried again if taken in the meantime); not silent, anvil picks it and prints it.
 */
export async function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilDevnet> {
  const binary = options.binary ?? anvilBinaryPath();
  const silent = options.silent ?? true;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (silent ? await freePort() : 0);
    try {
      return await launch(binary, port, silent, options);
    } catch (e) {
      if (!(e instanceof PortInUse) || options.port !== undefined || attempt >= 3) throw e;
    }
  }
}

async function launch(binary: string, requestedPort: number, silent: boolean, options: StartAnvilOptions): Promise<AnvilDevnet> {
  const args = ['--host', '127.0.0.1', '--port', String(requestedPort)];
  if (silent) args.push('--silent');
  if (options.chainId !== undefined) args.push('--chain-id', String(options.chainId));
  if (options.blockTime !== undefined) args.push('--block-time', String(options.blockTime));
  if (options.accounts !== undefined) args.push('--accounts', String(options.accounts));
  if (options.mnemonic !== undefined) args.push('--mnemonic', options.mnemonic);
  args.push(...(options.extraArgs ?? []));
  const timeoutMs = options.startTimeoutMs ?? 20_000;

  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
  running.add(child);
  installExitHook();
  let stdout = '';
  let stderr = '';
  let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  let spawnError: Error | null = null;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      running.delete(child);
      resolve();
    });
    child.once('error', (e) => {
      spawnError = e;
      running.delete(child);
      resolve();
    });
  });
  // Keep reading what anvil writes (a full pipe would stall it), keep only a tail.
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout = tail(stdout + chunk);
    if (!silent) process.stderr.write(chunk);
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = tail(stderr + chunk);
    if (!silent) process.stderr.write(chunk);
  });

  const stop = async (): Promise<void> => {
    if (exited || spawnError) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => { if (!exited) child.kill('SIGKILL'); }, 3000);
    await exitPromise;
    clearTimeout(timer);
  };

  const fail = async (why: string): Promise<never> => {
    await stop();
    const output = [stderr.trim(), stdout.trim()].filter(Boolean).join('\n');
    if (/address already in use|os error 98|EADDRINUSE/i.test(output)) throw new PortInUse(`anvil: port ${requestedPort} is in use`);
    throw new Error(`anvil (${binary}) did not start: ${why}${output ? `\n--- anvil output ---\n${output}` : ''}`);
  };

  const deadline = Date.now() + timeoutMs;
  let port = requestedPort;
  let chainId: number | null = null;
  let lastProblem = 'no answer yet';
  for (;;) {
    if (spawnError) return fail(`could not run it: ${(spawnError as Error).message}`);
    if (exited) {
      const e = exited as { code: number | null; signal: NodeJS.Signals | null };
      return fail(`it exited (code ${e.code}${e.signal ? `, signal ${e.signal}` : ''})`);
    }
    if (chainId !== null) break;
    if (Date.now() > deadline) return fail(`no answer to eth_chainId within ${timeoutMs} ms (${lastProblem})`);
    if (port === 0) {
      const m = /Listening on [^\s]*?:(\d+)/.exec(stdout);
      if (m) port = Number(m[1]);
    }
    if (port !== 0) {
      try {
        chainId = Number(BigInt(await anvilRpc<string>(`http://127.0.0.1:${port}`, 'eth_chainId', [], 1000)));
        // Loop once more: an anvil that lost the port to another server exits about now.
        await new Promise((r) => setTimeout(r, 20));
        continue;
      } catch (e) {
        lastProblem = (e as Error).message;
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  // Do not keep this process alive for anvil: stop() or the exit hook ends it.
  child.unref();
  (child.stdout as unknown as { unref?: () => void }).unref?.();
  (child.stderr as unknown as { unref?: () => void }).unref?.();
  return { url: `http://127.0.0.1:${port}`, chainId, port, process: child, stop };
}

// ---- Talking to it ----

/** One JSON-RPC call (anvil_* / evm_* cheat methods included); a JSON-RPC error throws. */
export async function anvilRpc<T = unknown>(url: string, method: string, params: readonly unknown[] = [], timeoutMs = 30_000): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`${method}: HTTP ${res.status}`);
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message} (${body.error.code})`);
  return body.result as T;
}

/** The transaction's receipt once it is mined (polls every 25 ms); throws after timeoutMs. */
export async function waitForReceipt<T = Record<string, unknown>>(url: string, txHash: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await anvilRpc<T | null>(url, 'eth_getTransactionReceipt', [txHash]);
    if (r) return r;
    if (Date.now() > deadline) throw new Error(`transaction ${txHash} not mined within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The last anvil_mine asked of each node by this process: the next one waits for it. */
const mining = new Map<string, Promise<void>>();

/**
 * Mines `blocks` blocks now (anvil_mine). Calls for one node from this process run one after
 * another, never side by side: a block clock and a test that mines while it runs would otherwise
 * send anvil two anvil_mine at once beside batches of eth_sendRawTransaction, and CI saw anvil
 * 1.7 stop answering (every connect timing out) in just that traffic.
 */
export function mine(url: string, blocks = 1): Promise<void> {
  const previous = mining.get(url) ?? Promise.resolve();
  const next = previous.then(async () => {
    await anvilRpc(url, 'anvil_mine', [`0x${blocks.toString(16)}`]);
  });
  const settled = next.catch(() => undefined);
  mining.set(url, settled);
  void settled.then(() => {
    if (mining.get(url) === settled) mining.delete(url);
  });
  return next;
}

/** Turns mining on each transaction on or off (evm_setAutomine); off: transactions wait in the pool for mine(). */
export async function setAutomine(url: string, on: boolean): Promise<void> {
  await anvilRpc(url, 'evm_setAutomine', [on]);
}


/** Blocks on a clock instead of anvil's automine (startBlockClock). */
export interface BlockClock {
  /** Holds transactions in the pool: once this resolves the clock mines no block until resume(). */
  pause(): Promise<void>;
  /** Blocks again, every everyMs. */
  resume(): void;
  /** Stops the clock (anvil stays without automine); rejects with the first failed mine, if any. */
  stop(): Promise<void>;
}

/**
 * Turns anvil's automine off and mines a block every `everyMs` instead (anvil_mine), so that
 * transactions are mined on their own as with automine, without automine's fault: when several
 * transactions of one sender reach it at once (a JSON-RPC batch, or concurrent requests) it now
 * and then leaves the one at the account's own nonce queued for ever, and every later one behind
 * it (foundry-rs/foundry#10122; seen here with batches of 2 and of 50). Mining on demand takes
 * the pool's ready transactions and does not have that fault.
 */
export async function startBlockClock(url: string, everyMs = 100): Promise<BlockClock> {
  if (!Number.isInteger(everyMs) || everyMs < 10) throw new TypeError(`everyMs must be an integer >= 10, got ${everyMs}`);
  await setAutomine(url, false);
  let paused = false;
  let stopped = false;
  let failure: unknown = null;
  let current: Promise<void> = Promise.resolve();
  let wake: (() => void) | null = null;
  const loop = (async () => {
    while (!stopped) {
      if (!paused) {
        current = mine(url, 1).catch((e: unknown) => {
          failure ??= e;
        });
        await current;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, everyMs);
        timer.unref();
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  })();
  return {
    async pause() {
      paused = true;
      await current;
    },
    resume() {
      paused = false;
    },
    async stop() {
      stopped = true;
      (wake as (() => void) | null)?.();
      await loop;
      if (failure !== null) throw failure;
    },
  };
}
export interface SendOptions {
  /** Signing key (default ANVIL_DEV_KEYS[0]). */
  readonly fromPrivateKey?: string;
  /** Gas limit; given, skips estimation (needed for a transaction meant to revert). */
  readonly gasLimit?: bigint;
  /**
   * Resolve only once the transaction is mined (default: when anvil automines; with automine off
   * or interval mining it resolves as soon as the node accepted the transaction). anvil may answer
   * eth_sendRawTransaction a moment before its automined block exists: waiting spares callers that race.
   */
  readonly wait?: boolean;
}

/** Waits for the receipt when asked to, or by default when the node automines. */
async function settle(url: string, hash: string, wait: boolean | undefined): Promise<string> {
  const automine = wait ?? (await anvilRpc<boolean>(url, 'anvil_getAutomine').catch(() => false));
  if (automine) await waitForReceipt(url, hash);
  return hash;
}

/**
 * Runs `fn` with a wallet on `url`, and closes the provider after. The nonce is asked of the
 * pending state, so several sends from one key without mining in between (automine off) work.
 */
async function withWallet<T>(url: string, key: string | undefined, fn: (wallet: Wallet) => Promise<T>): Promise<T> {
  const provider = new JsonRpcProvider(url, undefined, { staticNetwork: true, cacheTimeout: -1 });
  try {
    return await fn(new Wallet(key ?? ANVIL_DEV_KEYS[0]!, provider));
  } finally {
    provider.destroy();
  }
}

/** Sends `value` wei to `to`; resolves with the transaction hash (once mined when anvil automines: see SendOptions.wait). */
export async function sendNative(url: string, to: string, value: bigint, options: SendOptions = {}): Promise<string> {
  const hash = await withWallet(url, options.fromPrivateKey, async (wallet) => {
    const nonce = await wallet.getNonce('pending');
    const tx = await wallet.sendTransaction({ to, value, nonce, ...(options.gasLimit !== undefined ? { gasLimit: options.gasLimit } : {}) });
    return tx.hash;
  });
  return settle(url, hash, options.wait);
}

const ERC20_ABI = [
  'function mint(address to, uint256 amount)',
  'function transfer(address to, uint256 amount) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
];

async function callToken(url: string, token: string, fn: 'mint' | 'transfer', to: string, amount: bigint, options: SendOptions): Promise<string> {
  return withWallet(url, options.fromPrivateKey, async (wallet) => {
    const contract = new Contract(token, ERC20_ABI, wallet);
    const nonce = await wallet.getNonce('pending');
    const overrides = { nonce, ...(options.gasLimit !== undefined ? { gasLimit: options.gasLimit } : {}) };
    const tx = await (contract[fn] as (to: string, amount: bigint, o: object) => Promise<{ hash: string }>)(to, amount, overrides);
    return tx.hash;
  }).then((hash) => settle(url, hash, options.wait));
}

/** Mints `amount` base units of a token deployed by deployErc20 (the deployer holds the minter role); returns the transaction hash (see SendOptions.wait). */
export function mintErc20(url: string, token: string, to: string, amount: bigint, options: SendOptions = {}): Promise<string> {
  return callToken(url, token, 'mint', to, amount, options);
}

/** ERC-20 transfer from the signing key's balance; returns the transaction hash (see SendOptions.wait). */
export function transferErc20(url: string, token: string, to: string, amount: bigint, options: SendOptions = {}): Promise<string> {
  return callToken(url, token, 'transfer', to, amount, options);
}

/** ERC-20 balanceOf. */
export async function erc20Balance(url: string, token: string, owner: string): Promise<bigint> {
  const provider = new JsonRpcProvider(url, undefined, { staticNetwork: true });
  try {
    return (await new Contract(token, ERC20_ABI, provider).getFunction('balanceOf')(owner)) as bigint;
  } finally {
    provider.destroy();
  }
}

export interface DeployErc20Options {
  readonly name: string;
  readonly symbol: string;
  /**
   * Must be 18 (the default) if given: OpenZeppelin's ERC20PresetMinterPauser fixes decimals at
   * 18 (its constructor takes only name and symbol), and no other compiled ERC-20 in
   * @openzeppelin/contracts 4.9 takes a decimals argument. Amounts are base units either way.
   */
  readonly decimals?: number;
  /** Deployer, minter and pauser (default ANVIL_DEV_KEYS[0]). */
  readonly fromPrivateKey?: string;
}

/**
 * Deploys OpenZeppelin's ERC20PresetMinterPauser (mint(to, amount) for the deployer) and resolves
 * with its EIP-55 address once mined (needs automine or a block time: with mining off it waits).
 */
export async function deployErc20(url: string, options: DeployErc20Options): Promise<string> {
  if (options.decimals !== undefined && options.decimals !== 18) {
    throw new Error(`deployErc20: decimals ${options.decimals} is not available: OpenZeppelin's ERC20PresetMinterPauser has 18 decimals, fixed`);
  }
  let artifactPath: string;
  try {
    artifactPath = require.resolve('@openzeppelin/contracts/build/contracts/ERC20PresetMinterPauser.json');
  } catch {
    throw new Error('deployErc20: @openzeppelin/contracts (4.x, with build/contracts/ERC20PresetMinterPauser.json) is not installed');
  }
  const artifact = JSON.parse(readFileSync(artifactPath, 'utf8')) as { abi: InterfaceAbi; bytecode: string };
  return withWallet(url, options.fromPrivateKey, async (wallet) => {
    const factory = new ContractFactory(artifact.abi, artifact.bytecode, wallet);
    const nonce = await wallet.getNonce('pending');
    const contract = await factory.deploy(options.name, options.symbol, { nonce });
    await contract.waitForDeployment();
    return contract.getAddress();
  });
}

// ---- Multicall3 ----

/** The canonical Multicall3 address (mds1/multicall), the same on every chain that has it. */
export const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';

/**
 * Multicall3's deployed (runtime) bytecode, 3,808 bytes, keccak256
 * 0xd5c15df687b16f2ff992fc8d767b4216323184a2bbc6ee2f9c398c318e770891. Source: the mds1/multicall
 * repository (README, "New Deployments"): the pre-signed transaction that deploys Multicall3 at
 * its canonical address on every chain (sender 0x05f32B3cC3888453ff71B01135B34FF8e41263F2, nonce
 * 0; the address of that creation is 0xcA11bde05977b3631167028862bE2a173976CA11). Its data is the
 * init code of Multicall3.sol (solc 0.8.12, 10,000,000 optimizer runs), which copies 0xee0 bytes
 * from offset 0x20 of itself and returns them: these bytes, taken from that transaction.
 */
export const MULTICALL3_RUNTIME_BYTECODE = [
  '0x6080604052600436106100f35760003560e01c80634d2301cc1161008a578063a8b0574e11610059578063a8b0574e1461025a578063bce38bd714610275578063c3077fa914610288578063ee82ac',
  '5e1461029b57600080fd5b80634d2301cc146101ec57806372425d9d1461022157806382ad56cb1461023457806386d516e81461024757600080fd5b80633408e470116100c65780633408e470146101',
  '91578063399542e9146101a45780633e64a696146101c657806342cbb15c146101d957600080fd5b80630f28c97d146100f8578063174dea711461011a578063252dba421461013a57806327e86d6e14',
  '61015b575b600080fd5b34801561010457600080fd5b50425b6040519081526020015b60405180910390f35b61012d610128366004610a85565b6102ba565b6040516101119190610bbe565b61014d61',
  '0148366004610a85565b6104ef565b604051610111929190610bd8565b34801561016757600080fd5b50437fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff01406101',
  '07565b34801561019d57600080fd5b5046610107565b6101b76101b2366004610c60565b610690565b60405161011193929190610cba565b3480156101d257600080fd5b5048610107565b3480156101',
  'e557600080fd5b5043610107565b3480156101f857600080fd5b50610107610207366004610ce2565b73ffffffffffffffffffffffffffffffffffffffff163190565b34801561022d57600080fd5b50',
  '44610107565b61012d610242366004610a85565b6106ab565b34801561025357600080fd5b5045610107565b34801561026657600080fd5b50604051418152602001610111565b61012d610283366004',
  '610c60565b61085a565b6101b7610296366004610a85565b610a1a565b3480156102a757600080fd5b506101076102b6366004610d18565b4090565b60606000828067ffffffffffffffff8111156102',
  'd8576102d8610d31565b60405190808252806020026020018201604052801561031e57816020015b6040805180820190915260008152606060208201528152602001906001900390816102f65790505b',
  '5092503660005b8281101561047757600085828151811061034157610341610d60565b6020026020010151905087878381811061035d5761035d610d60565b905060200281019061036f9190610d8f56',
  '5b6040810135958601959093506103886020850185610ce2565b73ffffffffffffffffffffffffffffffffffffffff16816103ac6060870187610dcd565b6040516103ba929190610e32565b60006040',
  '518083038185875af1925050503d80600081146103f7576040519150601f19603f3d011682016040523d82523d6000602084013e6103fc565b606091505b506020808501919091529015158084529085',
  '01351761046d577f08c379a000000000000000000000000000000000000000000000000000000000600052602060045260176024527f4d756c746963616c6c333a2063616c6c206661696c6564000000',
  '00000000000060445260846000fd5b5050600101610325565b508234146104e6576040517f08c379a000000000000000000000000000000000000000000000000000000000815260206004820152601a',
  '60248201527f4d756c746963616c6c333a2076616c7565206d69736d6174636800000000000060448201526064015b60405180910390fd5b50505092915050565b436060828067ffffffffffffffff81',
  '111561050c5761050c610d31565b60405190808252806020026020018201604052801561053f57816020015b606081526020019060019003908161052a5790505b5091503660005b8281101561068657',
  '600087878381811061056257610562610d60565b90506020028101906105749190610e42565b92506105836020840184610ce2565b73ffffffffffffffffffffffffffffffffffffffff166105a66020',
  '850185610dcd565b6040516105b4929190610e32565b6000604051808303816000865af19150503d80600081146105f1576040519150601f19603f3d011682016040523d82523d6000602084013e6105',
  'f6565b606091505b5086848151811061060957610609610d60565b602090810291909101015290508061067d576040517f08c379a0000000000000000000000000000000000000000000000000000000',
  '00815260206004820152601760248201527f4d756c746963616c6c333a2063616c6c206661696c656400000000000000000060448201526064016104dd565b50600101610546565b5050509250929050',
  '565b43804060606106a086868661085a565b905093509350939050565b6060818067ffffffffffffffff8111156106c7576106c7610d31565b6040519080825280602002602001820160405280156107',
  '0d57816020015b6040805180820190915260008152606060208201528152602001906001900390816106e55790505b5091503660005b828110156104e657600084828151811061073057610730610d60',
  '565b6020026020010151905086868381811061074c5761074c610d60565b905060200281019061075e9190610e76565b925061076d6020840184610ce2565b73ffffffffffffffffffffffffffffffff',
  'ffffffff166107906040850185610dcd565b60405161079e929190610e32565b6000604051808303816000865af19150503d80600081146107db576040519150601f19603f3d011682016040523d8252',
  '3d6000602084013e6107e0565b606091505b506020808401919091529015158083529084013517610851577f08c379a00000000000000000000000000000000000000000000000000000000060005260',
  '2060045260176024527f4d756c746963616c6c333a2063616c6c206661696c656400000000000000000060445260646000fd5b50600101610714565b6060818067ffffffffffffffff81111561087657',
  '610876610d31565b6040519080825280602002602001820160405280156108bc57816020015b6040805180820190915260008152606060208201528152602001906001900390816108945790505b5091',
  '503660005b82811015610a105760008482815181106108df576108df610d60565b602002602001015190508686838181106108fb576108fb610d60565b905060200281019061090d9190610e42565b92',
  '5061091c6020840184610ce2565b73ffffffffffffffffffffffffffffffffffffffff1661093f6020850185610dcd565b60405161094d929190610e32565b6000604051808303816000865af1915050',
  '3d806000811461098a576040519150601f19603f3d011682016040523d82523d6000602084013e61098f565b606091505b506020830152151581528715610a07578051610a07576040517f08c379a000',
  '000000000000000000000000000000000000000000000000000000815260206004820152601760248201527f4d756c746963616c6c333a2063616c6c206661696c656400000000000000000060448201',
  '526064016104dd565b506001016108c3565b5050509392505050565b6000806060610a2b60018686610690565b919790965090945092505050565b60008083601f840112610a4b57600080fd5b508135',
  '67ffffffffffffffff811115610a6357600080fd5b6020830191508360208260051b8501011115610a7e57600080fd5b9250929050565b60008060208385031215610a9857600080fd5b823567ffffff',
  'ffffffffff811115610aaf57600080fd5b610abb85828601610a39565b90969095509350505050565b6000815180845260005b81811015610aed57602081850181015186830182015201610ad1565b81',
  '811115610aff576000602083870101525b50601f017fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0169290920160200192915050565b600082825180855260208086',
  '019550808260051b84010181860160005b84811015610bb1578583037fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe001895281518051151584528401516040858501',
  '819052610b9d81860183610ac7565b9a86019a9450505090830190600101610b4f565b5090979650505050505050565b602081526000610bd16020830184610b32565b9392505050565b600060408201',
  '848352602060408185015281855180845260608601915060608160051b870101935082870160005b82811015610c52577fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
  'a0888703018452610c40868351610ac7565b95509284019290840190600101610c06565b509398975050505050505050565b600080600060408486031215610c7557600080fd5b83358015158114610c',
  '8557600080fd5b9250602084013567ffffffffffffffff811115610ca157600080fd5b610cad86828701610a39565b9497909650939450505050565b838152826020820152606060408201526000610c',
  'd96060830184610b32565b95945050505050565b600060208284031215610cf457600080fd5b813573ffffffffffffffffffffffffffffffffffffffff81168114610bd157600080fd5b600060208284',
  '031215610d2a57600080fd5b5035919050565b7f4e487b7100000000000000000000000000000000000000000000000000000000600052604160045260246000fd5b7f4e487b71000000000000000000',
  '00000000000000000000000000000000000000600052603260045260246000fd5b600082357fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff81833603018112610dc357',
  '600080fd5b9190910192915050565b60008083357fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe1843603018112610e0257600080fd5b83018035915067ffffffffff',
  'ffffff821115610e1d57600080fd5b602001915036819003821315610a7e57600080fd5b8183823760009101908152919050565b600082357fffffffffffffffffffffffffffffffffffffffffffffff',
  'ffffffffffffffffc1833603018112610dc357600080fd5b600082357fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa1833603018112610dc357600080fdfea2646970',
  '667358221220bb2b5c71a328032f97c676ae39a1ec2148d3e5d6f73d95e9b17910152d61f16264736f6c634300080c0033',
].join('');

/**
 * Puts Multicall3 at its canonical address (anvil_setCode with the real runtime bytecode; anvil
 * has no Multicall3 of its own), as the chains that carry it have it. Resolves once the node
 * answers it with eth_getCode. anvil_setCode changes the state of the latest block in place (reads
 * at that block see the code too): mine a block first to keep it out of a block already read.
 */
export async function deployMulticall3(url: string): Promise<string> {
  await anvilRpc(url, 'anvil_setCode', [MULTICALL3, MULTICALL3_RUNTIME_BYTECODE]);
  const code = await anvilRpc<string>(url, 'eth_getCode', [MULTICALL3, 'latest']);
  if (code.toLowerCase() !== MULTICALL3_RUNTIME_BYTECODE) throw new Error('deployMulticall3: anvil does not answer the code just set');
  return MULTICALL3;
}
