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

/** Mines `blocks` blocks now (anvil_mine). */
export async function mine(url: string, blocks = 1): Promise<void> {
  await anvilRpc(url, 'anvil_mine', [`0x${blocks.toString(16)}`]);
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
