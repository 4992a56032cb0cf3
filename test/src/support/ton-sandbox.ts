/**
 * The TON adapter package (examples/adapter-ton, outside the workspaces) as the end-to-end tests
 * use it: its built sandbox server and fixtures (the real TVM of @ton/sandbox behind the
 * toncenter-like HTTP API the adapter reads), loaded by path at run time from the package's own
 * dist/ and node_modules/ (it is not a dependency of this package, and its dist/ does not exist
 * when this package is compiled on a fresh clone), and a NODE_PATH folder through which the service
 * finds it by name, as an operator installs it.
 *
 * Types here are the few members the tests use, written out (no compile-time import of the
 * package). The package must have been installed and built first (`npm test` does it before the
 * suites: scripts/run-tests.js); if it was not, tonPackage() throws saying what to run.
 */
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** examples/adapter-ton (from test/dist/support). */
export const TON_DIR = path.resolve(__dirname, '..', '..', '..', 'examples', 'adapter-ton');

/** An address of @ton/core (the members used here). */
export interface TonAddress {
  toString(o?: { urlSafe?: boolean; bounceable?: boolean; testOnly?: boolean }): string;
  toRawString(): string;
  equals(other: TonAddress): boolean;
}

/** A sandbox treasury (a funded wallet the test sends from). */
export interface Treasury {
  readonly address: TonAddress;
  send(args: { to: TonAddress; value: bigint; bounce?: boolean; body?: unknown }): Promise<{ transactions: unknown[] }>;
}

export interface TonContractState {
  balance: bigint;
  accountState?: { type: string } | undefined;
}

export interface TonSandboxNode {
  readonly url: string;
  readonly requests: string[];
  readonly blockchain: {
    treasury(seed: string): Promise<Treasury>;
    getContract(a: TonAddress): Promise<TonContractState>;
  };
  transactionsOf(a: TonAddress): ReadonlyArray<{
    readonly tx: {
      inMessage?: { info: { type: string; value?: { coins: bigint } }; body: { beginParse(): { loadUint(n: number): number; loadStringTail(): string } } };
      /** What the account paid in fees for this transaction, nanotons. */
      totalFees: { coins: bigint };
      outMessages: { values(): IterableIterator<{ info: { type: string; forwardFee?: bigint } }> };
    };
    readonly hash: string;
    readonly seqno: bigint;
  }>;
  close(): Promise<void>;
}

export interface Jetton {
  readonly master: TonAddress;
  walletOf(owner: TonAddress): Promise<TonAddress>;
  balanceOf(owner: TonAddress): Promise<bigint>;
  mint(to: TonAddress, amount: bigint): Promise<void>;
  transfer(from: Treasury, to: TonAddress, amount: bigint, comment: string | null, forwardTonAmount?: bigint): Promise<void>;
}

export interface TonPackage {
  startNode(): Promise<TonSandboxNode>;
  deployJetton(node: TonSandboxNode, admin: Treasury): Promise<Jetton>;
  parseAddress(text: string): TonAddress;
  /** A text comment message body (op 0, the text). */
  commentCell(text: string): unknown;
  /** A jetton master in the catalogue's form (EQ…). */
  jettonMasterForm(a: TonAddress): string;
  /** The wallet v4R2 address of a 32-byte public key filled with n (an account nobody deployed), user-friendly, test-only flag. */
  freshWallet(n: number, bounceable: boolean): string;
}

function built(file: string): string {
  const p = path.join(TON_DIR, 'dist', file);
  if (!fs.existsSync(p)) {
    throw new Error(`${p} is missing: the TON adapter package must be installed and built first ` +
      '(npm ci --prefix examples/adapter-ton && npm run build --prefix examples/adapter-ton; `npm test` does it before the suites)');
  }
  return p;
}

/** Loads the built package's sandbox server, fixtures and the @ton libraries from its own node_modules. */
export function tonPackage(): TonPackage {
  const req = createRequire(path.join(TON_DIR, 'package.json'));
  /* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any */
  const server = require(built('test-support/sandbox-server.js')) as { TonSandboxNode: { start(): Promise<TonSandboxNode> } };
  const fixtures = require(built('test-support/fixtures.js')) as { deployJetton: TonPackage['deployJetton'] };
  const index = require(built('index.js')) as { commentCell(text: string): unknown; jettonMasterForm(a: TonAddress): string };
  const core = req('@ton/core') as { Address: { parse(text: string): TonAddress } };
  const ton = req('@ton/ton') as { WalletContractV4: { create(o: { workchain: number; publicKey: Buffer }): { address: TonAddress } } };
  /* eslint-enable @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any */
  return {
    startNode: () => server.TonSandboxNode.start(),
    deployJetton: (node, admin) => fixtures.deployJetton(node, admin),
    parseAddress: (text) => core.Address.parse(text),
    commentCell: (text) => index.commentCell(text),
    jettonMasterForm: (a) => index.jettonMasterForm(a),
    freshWallet: (n, bounceable) => ton.WalletContractV4.create({ workchain: 0, publicKey: Buffer.alloc(32, n) }).address.toString({ urlSafe: true, bounceable, testOnly: true }),
  };
}

/**
 * A NODE_PATH folder in which `@wcs/adapter-ton` is a symlink to the package's folder: how the
 * service (which loads adapter packages with require from the server package) finds a package
 * installed outside the root node_modules. The caller removes `dir` afterwards.
 */
export function tonNodePath(): { dir: string; nodePath: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-ton-'));
  const nodePath = path.join(dir, 'node-path');
  fs.mkdirSync(path.join(nodePath, '@wcs'), { recursive: true });
  fs.symlinkSync(TON_DIR, path.join(nodePath, '@wcs', 'adapter-ton'), 'dir');
  return { dir, nodePath };
}
