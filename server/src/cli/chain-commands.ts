import { Option, type Command } from 'commander';
import { QueryTypes } from 'sequelize';
import { ENVIRONMENTS, scanning, type AdapterRegistry, type ChainDefinition, type ChainEndpoint } from '@wcs/core';
import { hotWalletReport, missingHotWallets, payoutUnavailable, registerHotAccount } from '../withdrawals/hot-wallets';
import { workerEndpoints } from '../deposits/devnets';
import { cliActor } from '../operators/audit';
import { TOKENS } from '../container';
import { keyStoreOptions, loadKeyStorePlugin } from '../plugins/loader';
import { jsonOpt, parseId, type CliContext } from './context';
import { scanStatus, type ScanStatus } from '../deposits/scan-worker';

/** wcs hotwallets [register]. */
export function registerHotWalletCommands(program: Command, ctx: CliContext): void {
  const hotwallets = program.command('hotwallets').enablePositionalOptions();
  hotwallets
    .command('register')
    .description('record an on-chain account as an application\'s hot wallet on a chain with named accounts (EOS): create the account first and give its active permission the hot key this prints; running workers must be restarted after a change')
    .requiredOption('--app <id>', 'application id', parseId)
    .requiredOption('--chain <code>', 'chain code, e.g. EOS')
    .requiredOption('--account <name>', 'the account name')
    .addOption(jsonOpt())
    .action(async (o: { app: number; chain: string; account: string; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const store = loadKeyStorePlugin(cfg).create(keyStoreOptions(cfg));
      await store.init();
      try {
        const done = await ctx.withStorage(async (s) => {
          const [row] = await s.database.sequelize.query<{ environment: 'test' | 'live' }>('SELECT environment FROM applications WHERE id = $1', { bind: [o.app], type: QueryTypes.SELECT });
          if (!row) throw new Error(`application ${o.app} not found`);
          const chain = s.catalogue.chain(row.environment, o.chain.toUpperCase());
          return registerHotAccount(s.database.sequelize, cliActor(), s.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), store, o.app, chain, o.account);
        }, cfg);
        ctx.emit(done, () => `app ${done.applicationId} ${done.environment}:${done.chainCode} hot account ${done.address}${done.replaced ? ` (was ${done.replaced}; restart running workers)` : ''}\n`
          + `its active permission must hold the hot key ${done.publicKey} (secp256k1, compressed) with the threshold's weight; withdrawals open once a worker has checked it and read the balance`);
      } finally {
        await store.destroy();
      }
    });
  hotwallets
    .description('list the hot wallets (fund these addresses), their balances as last read from the nodes and what accepted withdrawals reserve; `register` records an EOS hot account')
    .option('--app <id>', 'only this application', parseId)
    .addOption(jsonOpt())
    .action(async (o: { app?: number; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const endpoints = workerEndpoints(cfg);
      const { wallets, missing } = await ctx.withStorage(async (s) => ({
        wallets: await hotWalletReport(s.database.sequelize, o.app ?? null),
        missing: await missingHotWallets(s.database.sequelize, s.catalogue, s.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), endpoints, o.app ?? null),
      }), cfg);
      // one row per wallet and token; then one per enabled chain without a hot wallet (address null, and the reason)
      const rows = [...wallets, ...missing];
      ctx.emit(rows, () =>
        rows.length === 0
          ? 'no hot wallets (no application has a chain enabled)'
          : [
            ...wallets.map((r) => `app ${r.applicationId} ${r.environment}:${r.chainCode} ${r.address} ${r.token}: on chain ${r.onChain ?? '(not read)'}, reserved ${r.reserved}${r.observedTime ? ` (read ${r.observedTime})` : ''}`),
            ...missing.map((r) => `app ${r.applicationId} ${r.environment}:${r.chainCode} no hot wallet: ${r.reason}`),
          ].join('\n'),
      );
    });
}

const DEPOSITS_TEXT: Record<ScanStatus, string> = { ENABLED: 'scanned', NO_RPC: 'not scanned (no RPC endpoint)', NOT_SUPPORTED: 'not scanned (the adapter cannot scan)' };

const TRACES_TEXT: Record<string, string> = {
  debug_traceBlockByNumber: 'internal transfers from debug_traceBlockByNumber (callTracer)',
  trace_block: 'internal transfers from trace_block',
  off: 'internal transfers not read (option traces "off")',
  unavailable: 'internal transfers not seen (the node serves no trace API)',
};

/**
 * How a scanned chain's scanner reads internal transfers (EVM: the trace API it detects on the
 * node, asked now, as the deposit worker's scanner asks at its start), or why it cannot say;
 * traces null for chains whose scanner reads no traces or that are not scanned here.
 */
async function scannerTraces(registry: AdapterRegistry, chain: ChainDefinition, endpoint: ChainEndpoint | undefined): Promise<{ traces: string | null; tracesError?: string }> {
  if (!endpoint) return { traces: null };
  const adapter = registry.forChain(chain);
  if (!adapter.createScanner) return { traces: null };
  const scanner = scanning(adapter).createScanner(endpoint);
  if (scanner.kind !== 'blocks' || !scanner.traceMode) return { traces: null };
  try {
    return { traces: await scanner.traceMode() };
  } catch (e) {
    return { traces: null, tracesError: (e as Error).message };
  }
}

/** wcs chains. */
export function registerChainsCommand(program: Command, ctx: CliContext): void {
  program
    .command('chains')
    .description('list the chain catalogue: tokens credited, and whether deposits are scanned and withdrawals paid on each chain (and why not)')
    .addOption(new Option('--env <env>', 'environment').choices([...ENVIRONMENTS]))
    .addOption(jsonOpt())
    .action(async (o: { env?: 'test' | 'live'; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const endpoints = workerEndpoints(cfg);
      const chains = await ctx.withStorage(async (s) => {
        const registry = s.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry);
        const list = o.env ? s.catalogue.chains(o.env) : [...s.catalogue.chains('live'), ...s.catalogue.chains('test')];
        return Promise.all(list.map(async (c) => {
          // the rules support/chains and the workers use
          const deposits = scanStatus({ ...cfg.deposits, endpoints }, registry, c);
          const unavailable = payoutUnavailable(c, registry, endpoints);
          const traces = deposits === 'ENABLED' ? await scannerTraces(registry, c, endpoints.get(`${c.environment}:${c.code}`)) : { traces: null };
          return { ...c, deposits, ...traces, payouts: unavailable === null ? 'ENABLED' : 'UNAVAILABLE', payoutsUnavailableReason: unavailable };
        }));
      }, cfg);
      const tracesText = (c: { traces: string | null; tracesError?: string }) =>
        c.tracesError !== undefined ? `; internal transfers: the node could not be asked (${c.tracesError})` : c.traces !== null ? `; ${TRACES_TEXT[c.traces] ?? c.traces}` : '';
      ctx.emit(chains, () =>
        chains
          .map((c) => `${String(c.id).padEnd(4)} ${c.environment.padEnd(4)} ${c.code.padEnd(8)} ${c.network.padEnd(12)} ${c.tokens.map((t) => `${t.symbol}#${t.id}`).join(' ')}\n`
            + `     deposits ${DEPOSITS_TEXT[c.deposits]}${tracesText(c)}; withdrawals ${c.payoutsUnavailableReason ?? 'paid'}`)
          .join('\n'),
      );
    });
}
