import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { isKeyStoreError, isWcsError, formatLocalDateTime } from '@wcs/core';
import { ConfigError } from '../config/config';
import { CliContext, UsageError, type Io } from './context';
import { DataDirLockedError } from './data-dir-lock';

/* eslint-disable @typescript-eslint/no-require-imports */
type Register = (program: Command, ctx: CliContext) => void;

/**
 * The command groups in `wcs --help` order: the top-level commands each one registers, and how to
 * load it. A command line that starts with one of these commands loads and registers that group
 * only (each group loads what its commands need, the database layer among them, when it loads);
 * any other command line (no command, help, an option first, an unknown command) registers every
 * group. main.test.ts checks each group registers exactly the commands listed here.
 */
export const COMMAND_GROUPS: ReadonlyArray<{ readonly commands: readonly string[]; readonly load: () => Register }> = [
  { commands: ['start', 'migrate', 'keygen', 'config-check'], load: () => (require('./service-commands') as typeof import('./service-commands')).registerServiceCommands },
  { commands: ['keystore'], load: () => (require('./keystore-commands') as typeof import('./keystore-commands')).registerKeystoreCommands },
  { commands: ['secrets'], load: () => (require('./secrets-commands') as typeof import('./secrets-commands')).registerSecretsCommands },
  { commands: ['app'], load: () => (require('./app-commands') as typeof import('./app-commands')).registerAppCommands },
  { commands: ['callback'], load: () => (require('./callback-commands') as typeof import('./callback-commands')).registerCallbackCommands },
  { commands: ['deposits'], load: () => (require('./deposit-commands') as typeof import('./deposit-commands')).registerDepositCommands },
  { commands: ['hotwallets'], load: () => (require('./chain-commands') as typeof import('./chain-commands')).registerHotWalletCommands },
  { commands: ['withdraw'], load: () => (require('./withdraw-commands') as typeof import('./withdraw-commands')).registerWithdrawCommands },
  { commands: ['collect'], load: () => (require('./collect-commands') as typeof import('./collect-commands')).registerCollectCommands },
  { commands: ['transfers'], load: () => (require('./transfer-commands') as typeof import('./transfer-commands')).registerTransferCommands },
  { commands: ['operator', 'alerts', 'audit'], load: () => (require('./operator-commands') as typeof import('./operator-commands')).registerOperatorCommands },
  { commands: ['subscriptions', 'outflows'], load: () => (require('./subscription-commands') as typeof import('./subscription-commands')).registerSubscriptionCommands },
  { commands: ['recover'], load: () => (require('./recover-commands') as typeof import('./recover-commands')).registerRecoverCommands },
  { commands: ['reconcile'], load: () => (require('./reconcile-commands') as typeof import('./reconcile-commands')).registerReconcileCommands },
  { commands: ['chains'], load: () => (require('./chain-commands') as typeof import('./chain-commands')).registerChainsCommand },
];
/* eslint-enable @typescript-eslint/no-require-imports */

/** The groups a command line needs: the one its first argument names, else all of them. */
export function commandGroupsFor(argv: string[]): ReadonlyArray<(typeof COMMAND_GROUPS)[number]> {
  const first = argv[2];
  const named = first === undefined ? undefined : COMMAND_GROUPS.find((g) => g.commands.includes(first));
  return named ? [named] : COMMAND_GROUPS;
}

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

  for (const group of commandGroupsFor(argv)) group.load()(program, ctx);

  const jsonError = (code: string | number | null, name: string, msg: string) =>
    io.out(JSON.stringify({ error: { code, name, msg }, time: formatLocalDateTime(new Date()) }, null, 2));

  try {
    await program.parseAsync(argv);
    return ctx.exitCode || EXIT.OK;
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
