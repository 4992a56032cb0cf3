import { Option, type Command } from 'commander';
import * as fs from 'node:fs';
import { loadConfig, type ServiceConfig } from '../config/config';
import { KEYSTORE_PACKAGES, keyStoreOptions, loadKeyStorePlugin } from '../plugins/loader';
import { jsonOpt, type CliContext } from './context';
import { factLines } from './output';
import { registerKeystoreRestoreCommands } from './keystore-restore-commands';

/** wcs keystore init|status|change-passphrase|verify-backup|marks. */
export function registerKeystoreCommands(program: Command, ctx: CliContext): void {
  const keystore = program.command('keystore').description('the key store holding every private key');
  const backendOpt = () =>
    new Option('--backend <name>', 'key-store backend for this command (overrides WCS_KEYSTORE_BACKEND)').choices(Object.keys(KEYSTORE_PACKAGES));
  /** The configuration with the command's --backend, when given, in place of WCS_KEYSTORE_BACKEND. */
  const keystoreConfig = (o: { backend?: string }): ServiceConfig => (o.backend ? loadConfig({ ...ctx.env, WCS_KEYSTORE_BACKEND: o.backend }) : ctx.config());
  keystore
    .command('init')
    .description('create the key material (software: a new encrypted BIP-39 seed) or check the HSM (pkcs11: token, login, mechanisms)')
    .addOption(backendOpt())
    .option('--mnemonic-file <file>', 'software backend: import this BIP-39 mnemonic instead of generating one')
    .addOption(jsonOpt())
    .action(async (o: { backend?: string; mnemonicFile?: string; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = keystoreConfig(o);
      const plugin = loadKeyStorePlugin(cfg);
      const mnemonic = o.mnemonicFile ? fs.readFileSync(o.mnemonicFile, 'utf8').trim() : undefined;
      const facts = await plugin.initialize(keyStoreOptions(cfg), mnemonic ? { mnemonic } : {});
      ctx.emit(facts, () => factLines(facts));
    });
  keystore
    .command('status')
    .description('open the key store and show what it reports: backend, fingerprints or token, whether it unlocks (never secrets)')
    .addOption(backendOpt())
    .addOption(jsonOpt())
    .action(async (o: { backend?: string; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = keystoreConfig(o);
      const store = loadKeyStorePlugin(cfg).create(keyStoreOptions(cfg));
      try {
        await store.init();
        const st = await store.status();
        ctx.emit(st, () => factLines(st));
      } finally {
        await store.destroy();
      }
    });
  registerKeystoreRestoreCommands(keystore, ctx, keystoreConfig, backendOpt);
}
