import { Command, CommanderError } from 'commander';
import { isKeyStoreError, isWcsError, formatLocalDateTime } from '@wcs/core';
import { ConfigError } from '../config/config';
import { CliContext, type Io } from './context';
import { registerServiceCommands } from './service-commands';
import { registerKeystoreCommands } from './keystore-commands';
import { registerAppCommands } from './app-commands';
import { registerCallbackCommands } from './callback-commands';
import { registerDepositCommands } from './deposit-commands';
import { registerChainsCommand, registerHotWalletCommands } from './chain-commands';
import { registerWithdrawCommands } from './withdraw-commands';

/** The `wcs` operator CLI. Returns the process exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, io: Io = {
  out: (s) => process.stdout.write(s + '\n'),
  err: (s) => process.stderr.write(s + '\n'),
}): Promise<number> {
  const ctx = new CliContext(env, io);
  const program = new Command('wcs')
    .description('Wallet custody service: API server, workers and operator commands')
    .exitOverride()
    // options after a subcommand are the subcommand's (`hotwallets --app` lists, `hotwallets register --app` registers)
    .enablePositionalOptions()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError();

  registerServiceCommands(program, ctx);
  registerKeystoreCommands(program, ctx);
  registerAppCommands(program, ctx);
  registerCallbackCommands(program, ctx);
  registerDepositCommands(program, ctx);
  registerHotWalletCommands(program, ctx);
  registerWithdrawCommands(program, ctx);
  registerChainsCommand(program, ctx);

  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    const known = e instanceof ConfigError || isWcsError(e) || isKeyStoreError(e);
    const msg = e instanceof Error ? e.message : String(e);
    // WcsError: the catalogue's number and name; KeyStoreError: its code (e.g. "KEYSTORE_DECRYPT") and "KeyStoreError"
    const code = isWcsError(e) || isKeyStoreError(e) ? e.code : null;
    const name = isWcsError(e) ? e.errorName : (e as Error)?.name ?? 'Error';
    if (ctx.json) {
      io.out(JSON.stringify({ error: { code, name, msg }, time: formatLocalDateTime(new Date()) }, null, 2));
    } else {
      io.err(isKeyStoreError(e) ? `wcs: ${e.code}: ${msg}` : `wcs: ${msg}`);
    }
    if (!known && env.WCS_DEBUG) io.err(String((e as Error)?.stack ?? e));
    return 1;
  }
}
