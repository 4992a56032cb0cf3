/**
 * An earlier build of the server beside the current one, for A/B scenarios in one run: a detached
 * git worktree of a commit in a temporary folder, sharing this checkout's node_modules (a symlink),
 * with only the server package compiled there (its @wcs/* dependencies, core and the adapters,
 * resolve through node_modules to this checkout's builds). Plus the CLI and `wcs start` for any
 * build, named by its bin/wcs.js.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '@wcs/server/testing';
import { progress } from './report';
import { runNode, startChild, stopChild, waitReady, type Child, type CleanupStack } from './processes';
import type { Credentials } from './signing';

/** The repository this benchmark was built from (bench/dist/lib -> the root). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

const git = (args: string[], cwd = REPO_ROOT) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

export interface BaselineBuild {
  commit: string;
  subject: string;
  dir: string;
  wcsBin: string;
  /** Files under server/src that differ between the baseline commit and this checkout's working tree. */
  changedServerFiles: string[];
  buildSeconds: number;
}

/** The full hash of a commit-ish, or an error naming it. */
export function resolveCommit(ref: string): string {
  try {
    return git(['rev-parse', '--verify', `${ref}^{commit}`]);
  } catch {
    throw new Error(`not a commit in ${REPO_ROOT}: ${ref}`);
  }
}

/** The last commit in HEAD's history that still had `file` (the parent of the commit that deleted it). */
export function lastCommitWith(file: string): string {
  const deleting = git(['rev-list', '-1', 'HEAD', '--', file]);
  if (!deleting) throw new Error(`${file} was never in HEAD's history`);
  const parent = resolveCommit(`${deleting}^`);
  git(['cat-file', '-e', `${parent}:${file}`]);
  return parent;
}

/** Checks `commit` out into a temporary worktree and compiles its server package there (removed by the cleanup stack). */
export async function buildBaseline(commit: string, cleanup: CleanupStack): Promise<BaselineBuild> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-bench-baseline-'));
  cleanup.push('remove baseline worktree', async () => {
    try {
      git(['worktree', 'remove', '--force', dir]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      git(['worktree', 'prune']);
    }
  });
  progress(`baseline: git worktree add --detach ${dir} ${commit.slice(0, 12)}`);
  git(['worktree', 'add', '--detach', dir, commit]);
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const t0 = Date.now();
  progress('baseline: compiling its server package (tsc -p server)');
  await runNode('tsc baseline server', [require.resolve('typescript/bin/tsc'), '-p', path.join(dir, 'server', 'tsconfig.json')], process.env, 900_000);
  const wcsBin = path.join(dir, 'server', 'bin', 'wcs.js');
  if (!fs.existsSync(path.join(dir, 'server', 'dist', 'cli', 'main.js'))) throw new Error(`the baseline build wrote no server/dist/cli/main.js in ${dir}`);
  return {
    commit,
    subject: git(['log', '-1', '--format=%s', commit]),
    dir,
    wcsBin,
    changedServerFiles: git(['diff', '--name-only', commit, '--', 'server/src']).split('\n').filter((f) => f !== ''),
    buildSeconds: (Date.now() - t0) / 1000,
  };
}

/** `wcs app create` of the given build; the credentials it prints once and the application id. */
export async function appCreate(wcsBin: string, env: NodeJS.ProcessEnv, name: string, chains: string[]): Promise<Credentials & { id: number }> {
  const printed = await runNode(`wcs app create ${name}`, [wcsBin, 'app', 'create', '--name', name, '--env', 'test', '--chains', chains.join(','), '--json'], env, 120_000);
  const app = JSON.parse(printed.slice(printed.indexOf('{'))) as { id?: number; apiKey?: string; apiSecret?: string };
  if (!app.apiKey || !app.apiSecret || typeof app.id !== 'number') throw new Error(`wcs app create printed no id, apiKey or apiSecret:\n${printed}`);
  return { apiKey: app.apiKey, apiSecret: app.apiSecret, id: app.id };
}

/** `wcs start --api-only` of the given build on a free port, stopped by the cleanup stack. */
export async function startApi(name: string, wcsBin: string, env: NodeJS.ProcessEnv, nodeArgs: string[], cleanup: CleanupStack): Promise<{ child: Child; port: number }> {
  const port = await freePort();
  const child = startChild(name, [...nodeArgs, wcsBin, 'start', '--api-only'], { ...env, PORT: String(port) });
  cleanup.push(`stop ${name}`, () => stopChild(child, 15_000));
  await waitReady(child, port, '/healthz', 60_000);
  return { child, port };
}
