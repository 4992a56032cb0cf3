import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { isKeyStoreError, isWcsError, formatLocalDateTime } from '@wcs/core';
import { ConfigError } from '../config/config';
import { CliContext, UsageError, type Io } from './context';
import { registerServiceCommands } from './service-commands';
import { registerKeystoreCommands } from './keystore-commands';
import { registerAppCommands } from './app-commands';
import { registerCallbackCommands } from './callback-commands';
import { registerDepositCommands } from './deposit-commands';
import { registerChainsCommand, registerHotWalletCommands } from './chain-commands';
import { registerWithdrawCommands } from './withdraw-commands';
import { registerCollectCommands } from './collect-commands';
import { registerOperatorCommands } from './operator-commands';
import { registerSubscriptionCommands } from './subscription-commands';
import { DataDirLockedError } from './data-dir-lock';

/** Exit codes (README, "Operator CLI"). */
export const EXIT = { OK: 0, RUNTIME: 1, USAGE: 2, DATA_DIR_LOCKED: 3 } as const;

/** The server package's version (`wcs --version`). */
export function serverVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * Whether the command line asks for JSON. Commander parses options per subcommand, so a usage
 * error (unknown command or option, missing or invalid value) is raised before any command's
 * own --json is read: it is looked for in argv first (up to a `--`).
 */
function wantsJson(argv: string[]): boolean {
  const args = argv.slice(2);
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/** The `wcs` operator CLI. Returns the process exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, io: Io = {
  out: (s) => process.stdout.write(s + '\n'),
  err: (s) => process.stderr.write(s + '\n'),
}): Promise<number> {
  const ctx = new CliContext(env, io);
  ctx.json = wantsJson(argv);
  const program = new Command('wcs')
    .description('Wallet custody service: API server, workers and operator commands')
    .version(serverVersion(), '-V, --version', 'print the server package version')
    .exitOverride()
    // options after a subcommand are the subcommand's (`hotwallets --app` lists, `hotwallets register --app` registers)
    .enablePositionalOptions()
    // with --json an error is one JSON document on stdout (below), without commander's text and help on stderr
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => (ctx.json ? undefined : io.err(s.trimEnd())) })
    .showHelpAfterError();

  registerServiceCommands(program, ctx);
  registerKeystoreCommands(program, ctx);
  registerAppCommands(program, ctx);
  registerCallbackCommands(program, ctx);
  registerDepositCommands(program, ctx);
  registerHotWalletCommands(program, ctx);
  registerWithdrawCommands(program, ctx);
  registerCollectCommands(program, ctx);
  registerOperatorCommands(program, ctx);
  registerSubscriptionCommands(program, ctx);
  registerChainsCommand(program, ctx);

  const jsonError = (code: string | number | null, name: string, msg: string) =>
    io.out(JSON.stringify({ error: { code, name, msg }, time: formatLocalDateTime(new Date()) }, null, 2));

  try {
    await program.parseAsync(argv);
    return EXIT.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      // help or version asked for: not an error
      if (e.exitCode === 0) return EXIT.OK;
      if (ctx.json) {
        // e.g. "error: unknown option '--bogus'"; "(outputHelp)" when a command group was given no command
        const msg = e.code === 'commander.help' ? 'a command is required here (see --help)' : e.message.replace(/^error: /, '');
        jsonError(e.code, 'UsageError', msg);
      }
      return EXIT.USAGE;
    }
    if (e instanceof DataDirLockedError) {
      if (ctx.json) jsonError(e.code, e.name, e.message);
      else io.err(`wcs: ${e.message}`);
      return EXIT.DATA_DIR_LOCKED;
    }
    if (e instanceof UsageError) {
      if (ctx.json) jsonError(e.code, e.name, e.message);
      else io.err(`wcs: ${e.message}`);
      return EXIT.USAGE;
    }
    const known = e instanceof ConfigError || isWcsError(e) || isKeyStoreError(e);
    const msg = e instanceof Error ? e.message : String(e);
    // WcsError: the catalogue's number and name; KeyStoreError: its code (e.g. "KEYSTORE_DECRYPT") and "KeyStoreError"
    const code = isWcsError(e) || isKeyStoreError(e) ? e.code : null;
    const name = isWcsError(e) ? e.errorName : (e as Error)?.name ?? 'Error';
    if (ctx.json) jsonError(code, name, msg);
    else io.err(isKeyStoreError(e) ? `wcs: ${e.code}: ${msg}` : `wcs: ${msg}`);
    if (!known && env.WCS_DEBUG) io.err(String((e as Error)?.stack ?? e));
    return EXIT.RUNTIME;
  }
}
