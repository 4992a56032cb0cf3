import { InvalidArgumentError, Option, type Command } from 'commander';
import { QueryTypes } from 'sequelize';
import { formatLocalDateTime, formatUnits, type AdapterRegistry, type Environment, type KeyStore } from '@wcs/core';
import type { ServiceConfig } from '../config/config';
import { createLogger, type Logger } from '../config/logger';
import type { StorageHandle } from '../service';
import { TOKENS } from '../container';
import { FeeWallets, feeWalletReport, usesFeeWallet } from '../collection/fee-wallets';
import { CollectInputError, appOf, listPolicies, requestRun, setCollectionAddress, setPolicy, type AppRow } from '../collection/operator';
import { collectionStatus, itemView, listItems, retryItem } from '../collection/operator-items';
import { listDelegationBlocks, releaseDelegationBlock } from '../collection/delegation-blocks';
import { PolicyInputError } from '../collection/policy-input';
import { cliActor } from '../operators/audit';
import { setSettlementMode } from '../apps/settlement';
import { UsageError, jsonOpt, parseId, type CliContext } from './context';

/**
 * wcs collect policy set|show, address set|show, settlement, fee-wallets, items, status, run,
 * retry (docs/collection.md). Every change an operator makes here writes one info log line and
 * goes through the function the console calls (collection/operator.ts: setPolicy,
 * setCollectionAddress, requestRun, retryItem; apps/settlement.ts: setSettlementMode), which
 * audits it in the change's transaction (actor cli:<user>).
 */

const ITEM_STATUSES = ['PLANNED', 'TOPPING_UP', 'FUNDED', 'SWEEPING', 'SUCCESS', 'FAILED'] as const;
const STAGES = ['HOT_GATHER', 'COLD_TRANSFER'] as const;
const ADDRESS_KINDS = ['COLD', 'MERCHANT'] as const;
const SETTLEMENT_MODES = ['ON_CONFIRM', 'PASS_THROUGH'] as const;
const ITEMS_LIMIT_MAX = 200;

function registryOf(s: StorageHandle): AdapterRegistry {
  return s.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry);
}

/** Operator changes: one info line each, on stderr (WCS_LOG_LEVEL, when set, decides; warn or error silence them). */
function changeLog(ctx: CliContext, cfg: ServiceConfig): Logger {
  return createLogger({ level: ctx.env.WCS_LOG_LEVEL ? cfg.logLevel : 'info', format: ctx.env.WCS_LOG_FORMAT ? cfg.logFormat : 'pretty' });
}

const limitOpt = (v: string) => {
  const n = parseId(v);
  if (n > ITEMS_LIMIT_MAX) throw new InvalidArgumentError(`At most ${ITEMS_LIMIT_MAX}.`);
  return n;
};

const fmtOr = (v: string | null, decimals: number) => (v === null ? null : formatUnits(BigInt(v), decimals));

// ------------------------------------------------------------------ policies

type PolicyListView = Awaited<ReturnType<typeof listPolicies>>[number];

const policyLine = (p: PolicyListView) =>
  `app ${p.applicationId} ${p.environment}:${p.chainCode} ${p.token}#${p.chainTokenId} ${p.enabled ? 'enabled' : 'DISABLED'}: threshold ${p.threshold}, max fee ${p.maxFeePercent} %, `
  + `native value ${p.nativeValue ?? '-'}, on confirmed ${p.onConfirmed}, schedule ${p.scheduleSeconds === null ? 'off' : `${p.scheduleSeconds} s`}, `
  + `max wait ${p.maxWaitSeconds === null ? 'off' : `${p.maxWaitSeconds} s`}, hot low/target/high ${p.hotLow ?? '-'}/${p.hotTarget ?? '-'}/${p.hotHigh ?? '-'}, sweep mode ${p.sweepMode}`
  + `${p.lastRunTime ? `, last run ${p.lastRunTime}` : ''}`;

function registerPolicyCommands(collect: Command, ctx: CliContext): void {
  const policy = collect.command('policy').description('collection policies: which tokens are collected, when, and at what cost');
  policy
    .command('set')
    .description('create or change the collection policy of one token of an application (amounts: decimal strings of the token); options left out keep their value, or the default on a new policy')
    .requiredOption('--app <id>', 'application id', parseId)
    .requiredOption('--chain <code>', 'chain code, e.g. ETH')
    .requiredOption('--token <symbol>', 'token symbol on that chain (or its chainTokenId), e.g. USDC')
    .option('--threshold <amount>', 'the least worth collecting from one address (default 0)')
    .option('--max-fee-percent <p>', 'cost guard: the fee may be at most this share of the amount, 0-100, 2 decimals (default 10)')
    .option('--native-value <amount>', 'tokens: what one whole native coin is worth in this token, or off (default off: token sweeps are skipped until it is set)')
    .option('--on-confirmed <bool>', 'true|false: plan as soon as a deposit is CONFIRMED (default true)')
    .option('--schedule-seconds <n>', 'plan every N seconds (at least 10), or off (default 300)')
    .option('--max-wait-seconds <n>', 'pass-through: sweep a deposit below the threshold alone after N seconds, or off (default off)')
    .option('--hot-low <amount>', 'hot wallet low watermark (alert below it), or off (default off)')
    .option('--hot-target <amount>', 'what a cold transfer leaves in the hot wallet, or off (default off)')
    .option('--hot-high <amount>', 'hot wallet high watermark (the surplus goes to the COLD address), or off (default off)')
    .option('--sweep-mode <mode>', 'EVM: topup (a gas top-up from the fee wallet, then the address\'s own sweep) or delegated (EIP-7702: batches swept by one fee-wallet transaction) (default topup)')
    .option('--enable', 'collect this token (a new policy is enabled)')
    .option('--disable', 'stop collecting this token (the policy is kept)')
    .addOption(jsonOpt())
    .action(async (o: {
      app: number; chain: string; token: string; threshold?: string; maxFeePercent?: string; nativeValue?: string; onConfirmed?: string; scheduleSeconds?: string;
      maxWaitSeconds?: string; hotLow?: string; hotTarget?: string; hotHigh?: string; sweepMode?: string; enable?: boolean; disable?: boolean; json?: boolean;
    }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const log = changeLog(ctx, cfg);
      const view = await ctx.withStorage(async (s) => {
        let r: Awaited<ReturnType<typeof setPolicy>>;
        try {
          r = await setPolicy(s.database.sequelize, s.catalogue, cliActor(), o);
        } catch (e) {
          if (e instanceof PolicyInputError) throw new UsageError(`collect policy set: ${e.message}`);
          throw e;
        }
        log.info(r.view.created ? 'collection policy created' : 'collection policy changed', r.log);
        return r.view;
      }, cfg);
      ctx.emit(view, () => `${view.created ? 'created' : view.changed.length ? `changed ${view.changed.join(', ')}` : 'unchanged'}: ${policyLine(view)}${view.notes.map((n) => `\n  ${n}`).join('')}`);
    });
  policy
    .command('show')
    .description('list collection policies (amounts in the token\'s decimals)')
    .option('--app <id>', 'only this application', parseId)
    .addOption(jsonOpt())
    .action(async (o: { app?: number; json?: boolean }) => {
      ctx.setJson(o);
      const rows = await ctx.withStorage(async (s) => {
        if (o.app !== undefined) await appOf(s.database.sequelize, o.app);
        return listPolicies(s.database.sequelize, o.app ?? null);
      });
      ctx.emit(rows, () => (rows.length === 0 ? 'no collection policies (nothing is collected): wcs collect policy set' : rows.map(policyLine).join('\n')));
    });
}

// ------------------------------------------------------------------ addresses

function registerAddressCommands(collect: Command, ctx: CliContext): void {
  const address = collect.command('address').description('collection targets: an application\'s COLD address (watermark transfers) and MERCHANT address (pass-through sweeps) per chain');
  address
    .command('set')
    .description('set the COLD or MERCHANT address of an application on a chain; checked by the chain\'s adapter (network included) and, where accounts opt in to tokens (Stellar trustlines), by the node for every token with a policy; stored in its canonical form')
    .requiredOption('--app <id>', 'application id', parseId)
    .requiredOption('--chain <code>', 'chain code, e.g. BTC')
    .addOption(new Option('--kind <kind>', 'COLD or MERCHANT').choices([...ADDRESS_KINDS]).makeOptionMandatory())
    .requiredOption('--address <address>', 'the address')
    .option('--memo <memo>', 'memo chains: the memo / destination tag the target needs')
    .addOption(jsonOpt())
    .action(async (o: { app: number; chain: string; kind: (typeof ADDRESS_KINDS)[number]; address: string; memo?: string; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const log = changeLog(ctx, cfg);
      const out = await ctx.withStorage(async (s) => {
        let out: Awaited<ReturnType<typeof setCollectionAddress>>;
        try {
          out = await setCollectionAddress(s.database.sequelize, s.catalogue, registryOf(s), cliActor(), { app: o.app, chain: o.chain, kind: o.kind, address: o.address, memo: o.memo ?? null }, cfg.deposits.endpoints);
        } catch (e) {
          if (e instanceof CollectInputError) throw new UsageError(e.message);
          throw e;
        }
        log.info('collection address set', {
          applicationId: out.applicationId, chain: `${out.environment}:${out.chainCode}`, kind: o.kind, address: out.address, memo: out.memo,
          previous: out.previousAddress === null ? null : { address: out.previousAddress, memo: out.previousMemo },
        });
        return out;
      }, cfg);
      ctx.emit(out, () => `app ${out.applicationId} ${out.environment}:${out.chainCode} ${out.kind} ${out.address}${out.memo ? ` memo ${out.memo}` : ''}`
        + `${out.previousAddress && (out.previousAddress !== out.address || out.previousMemo !== out.memo) ? ` (was ${out.previousAddress}${out.previousMemo ? ` memo ${out.previousMemo}` : ''})` : ''}`);
    });
  address
    .command('show')
    .description('list the COLD and MERCHANT addresses')
    .option('--app <id>', 'only this application', parseId)
    .addOption(jsonOpt())
    .action(async (o: { app?: number; json?: boolean }) => {
      ctx.setJson(o);
      const rows = await ctx.withStorage(async (s) => {
        if (o.app !== undefined) await appOf(s.database.sequelize, o.app);
        const list = await s.database.sequelize.query<{ application_id: number; environment: Environment; code: string; kind: string; address: string; memo: string | null; updated_at: Date }>(
          `SELECT a.application_id, c.environment, c.code, a.kind, a.address, a.memo, a.updated_at FROM collection_addresses a JOIN chains c ON c.id = a.chain_id
            WHERE $1::int IS NULL OR a.application_id = $1 ORDER BY a.application_id, c.id, a.kind`,
          { bind: [o.app ?? null], type: QueryTypes.SELECT },
        );
        return list.map((r) => ({ applicationId: r.application_id, environment: r.environment, chainCode: r.code, kind: r.kind, address: r.address, memo: r.memo, updateTime: formatLocalDateTime(r.updated_at) }));
      });
      ctx.emit(rows, () => (rows.length === 0 ? 'no collection addresses' : rows.map((r) => `app ${r.applicationId} ${r.environment}:${r.chainCode} ${r.kind} ${r.address}${r.memo ? ` memo ${r.memo}` : ''}`).join('\n')));
    });
}

// ------------------------------------------------------------------ settlement, fee wallets

function registerSettlementCommand(collect: Command, ctx: CliContext): void {
  collect
    .command('settlement')
    .description('set how an application\'s deposits reach SETTLED: ON_CONFIRM (at confirmation) or PASS_THROUGH (once collected to its MERCHANT address)')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(new Option('--mode <mode>', 'settlement mode').choices([...SETTLEMENT_MODES]).makeOptionMandatory())
    .addOption(jsonOpt())
    .action(async (o: { app: number; mode: (typeof SETTLEMENT_MODES)[number]; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const log = changeLog(ctx, cfg);
      const out = await ctx.withStorage(async (s) => {
        const r = await setSettlementMode(s.database.sequelize, cliActor(), o.app, o.mode);
        log.info('settlement mode set', { applicationId: o.app, from: r.previousSettlementMode, to: r.settlementMode });
        return r;
      }, cfg);
      ctx.emit(out, () => [`app ${out.applicationId} settlement ${out.settlementMode}${out.previousSettlementMode !== out.settlementMode ? ` (was ${out.previousSettlementMode})` : ' (unchanged)'}`, ...out.notes.map((n) => `  ${n}`)].join('\n'));
    });
}

function registerFeeWalletCommand(collect: Command, ctx: CliContext): void {
  collect
    .command('fee-wallets')
    .description('the fee wallets that pay EVM token sweeps\' gas top-ups (fund these addresses), with their last reading; makes the missing ones of every enabled EVM chain through the key store')
    .option('--app <id>', 'only this application', parseId)
    .addOption(jsonOpt())
    .action(async (o: { app?: number; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const log = changeLog(ctx, cfg);
      const rows = await ctx.withStorage(async (s) => {
        const sequelize = s.database.sequelize;
        if (o.app !== undefined) await appOf(sequelize, o.app);
        const registry = registryOf(s);
        const apps = await sequelize.query<AppRow>(
          'SELECT id, name, environment, status, enabled_chains, settlement_mode FROM applications WHERE $1::int IS NULL OR id = $1 ORDER BY id',
          { bind: [o.app ?? null], type: QueryTypes.SELECT },
        );
        const have = new Set((await sequelize.query<{ k: string }>(`SELECT application_id || '/' || chain_id AS k FROM fee_wallets`, { type: QueryTypes.SELECT })).map((r) => r.k));
        // chains whose sweeps get gas top-ups (the processor's EVM path: sequence spend model, one address per user)
        const wanted = apps.flatMap((a) => a.enabled_chains.filter((code) => s.catalogue.has(a.environment, code)).map((code) => ({ app: a, chain: s.catalogue.chain(a.environment, code) })))
          .filter(({ app, chain }) => usesFeeWallet(registry.forChain(chain)) && !have.has(`${app.id}/${chain.id}`));
        const failures: Array<{ applicationId: number; environment: Environment; chainCode: string; address: null; reason: string }> = [];
        const made = new Set<string>();
        if (wanted.length > 0) {
          const store = s.container.resolve<KeyStore>(TOKENS.KeyStore);
          let opened: string | null = null;
          try {
            await store.init();
          } catch (e) {
            opened = `key store unavailable: ${e instanceof Error ? e.message : String(e)}`;
          }
          try {
            const wallets = new FeeWallets(sequelize, registry, () => store, () => {
              throw new Error('fee wallet balances are read by the workers, not by the CLI');
            });
            for (const { app, chain } of wanted) {
              if (opened !== null) {
                failures.push({ applicationId: app.id, environment: chain.environment, chainCode: chain.code, address: null, reason: opened });
                continue;
              }
              try {
                const w = await wallets.ensure(app.id, chain);
                made.add(`${app.id}/${chain.environment}:${chain.code}`);
                log.info('fee wallet made', { applicationId: app.id, chain: `${chain.environment}:${chain.code}`, address: w.address });
              } catch (e) {
                failures.push({ applicationId: app.id, environment: chain.environment, chainCode: chain.code, address: null, reason: e instanceof Error ? e.message : String(e) });
              }
            }
          } finally {
            if (opened === null) await store.destroy();
          }
        }
        const report = (await feeWalletReport(sequelize, o.app ?? null)).map((r) => ({
          applicationId: r.application_id, environment: r.environment as Environment, chainCode: r.code, address: r.address as string | null,
          balance: fmtOr(r.on_chain, r.decimals), symbol: r.symbol, observedTime: formatLocalDateTime(r.observed_at),
          created: made.has(`${r.application_id}/${r.environment}:${r.code}`), reason: null as string | null,
        }));
        return [...report, ...failures.map((f) => ({ ...f, balance: null, symbol: null, observedTime: null, created: false }))];
      }, cfg);
      ctx.emit(rows, () => (rows.length === 0
        ? 'no fee wallets (no application has an EVM chain enabled)'
        : rows.map((r) => (r.address === null
          ? `app ${r.applicationId} ${r.environment}:${r.chainCode} no fee wallet: ${r.reason}`
          : `app ${r.applicationId} ${r.environment}:${r.chainCode} ${r.address}: ${r.balance === null ? '(not read yet)' : `${r.balance} ${r.symbol} (read ${r.observedTime})`}${r.created ? ' (new: fund it)' : ''}`)).join('\n')));
    });
}

// ------------------------------------------------------------------ items, status

function registerItemCommands(collect: Command, ctx: CliContext): void {
  collect
    .command('items')
    .description('collection items, newest first: the collect event\'s fields, the token symbol and why a PLANNED item waits')
    .option('--app <id>', 'only this application', parseId)
    .addOption(new Option('--status <status>', 'only items in this status').choices([...ITEM_STATUSES]))
    .addOption(new Option('--stage <stage>', 'only this stage').choices([...STAGES]))
    .option('--limit <n>', `at most this many (1 to ${ITEMS_LIMIT_MAX}, default 50)`, limitOpt)
    .addOption(jsonOpt())
    .action(async (o: { app?: number; status?: string; stage?: string; limit?: number; json?: boolean }) => {
      ctx.setJson(o);
      const items = await ctx.withStorage(async (s) => {
        if (o.app !== undefined) await appOf(s.database.sequelize, o.app);
        const rows = await listItems(s.database.sequelize, { app: o.app ?? null, status: o.status ?? null, stage: o.stage ?? null, limit: o.limit ?? 50 });
        return rows.map(itemView);
      });
      ctx.emit(items, () => (items.length === 0 ? 'no collection items' : items.map((i) =>
        `item ${i.itemId} (request ${i.requestId}) app ${i.applicationId} ${i.stage} ${i.status}${i.waitingReason ? ` waiting: ${i.waitingReason}` : ''}: ${i.amount} ${i.token} `
        + `${i.fromAddress} -> ${i.toAddress || '(not chosen yet)'}${i.txHash ? ` tx ${i.txHash}` : ''}${i.gasFee !== null ? ` gas ${i.gasFee} ${i.gasFeeCurrency}` : ''}`
        + `${i.retryTimes ? ` retries ${i.retryTimes}` : ''}${i.failureReasonCode ? ` failed ${i.failureReasonCode}: ${i.failureReasonMessage}` : ''}`).join('\n')));
    });

  collect
    .command('status')
    .description('per application and token: open items by status (and why they wait), FAILED items, skipped and waiting addresses with their reasons, the fee wallet; then open collection alerts')
    .option('--app <id>', 'only this application', parseId)
    .addOption(jsonOpt())
    .action(async (o: { app?: number; json?: boolean }) => {
      ctx.setJson(o);
      const out = await ctx.withStorage(async (s) => {
        const sequelize = s.database.sequelize;
        if (o.app !== undefined) await appOf(sequelize, o.app);
        return collectionStatus(sequelize, o.app ?? null);
      });
      ctx.emit(out, () => {
        const lines: string[] = [];
        for (const t of out.tokens) {
          const open = Object.entries(t.open).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
          lines.push(`app ${t.applicationId} ${t.environment}:${t.chainCode} ${t.token}#${t.chainTokenId} (${t.policy}): open ${open}; failed ${t.failed}; skipped ${t.skippedTotal}`
            + `${t.feeWallet ? `; fee wallet ${t.feeWallet.address} ${t.feeWallet.balance ?? '(not read)'}${t.feeWallet.balance !== null ? ` ${t.feeWallet.symbol}` : ''}` : ''}`);
          for (const w of t.waiting) lines.push(`  ${w.items} waiting: ${w.reason}`);
          for (const k of t.skipped) {
            const cost = k.fee === null ? '' : `, fee ${k.fee} ${t.nativeSymbol}`;
            lines.push(k.kind === 'WAIT'
              ? `  waiting since ${k.sinceTime} ${k.address} (${k.amount} ${t.token}${cost}): ${k.reason}`
              : `  skipped ${k.address} (${k.amount} ${t.token}${cost}): ${k.reason}`);
          }
        }
        if (out.tokens.length === 0) lines.push('no collection policies, items or skips');
        for (const a of out.alerts) lines.push(`alert ${a.id} ${a.kind} ${a.createdTime}${a.applicationId !== null ? ` app ${a.applicationId}` : ''}: ${a.message}`);
        return lines.join('\n');
      });
    });
}

// ------------------------------------------------------------------ run, retry

function registerRunRetryCommands(collect: Command, ctx: CliContext): void {
  collect
    .command('run')
    .description('make the next planning pass treat this token\'s policy as due now (last run cleared): every address with uncollected confirmed deposits is looked at again; a running worker does it within WCS_COLLECT_PLAN_MS. With the schedule off this changes nothing the planner reads')
    .requiredOption('--app <id>', 'application id', parseId)
    .requiredOption('--chain <code>', 'chain code')
    .requiredOption('--token <symbol>', 'token symbol (or chainTokenId)')
    .addOption(jsonOpt())
    .action(async (o: { app: number; chain: string; token: string; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const log = changeLog(ctx, cfg);
      const out = await ctx.withStorage(async (s) => {
        const { app, chain, token, policy: r } = await requestRun(s.database.sequelize, s.catalogue, cliActor(), o);
        const notes: string[] = [];
        const effective = r.schedule_seconds !== null;
        if (!effective) {
          notes.push('the schedule is off, so the planner does not read the last run: nothing is forced. Only deposits reaching CONFIRMED (--on-confirmed true) trigger planning; '
            + 'set --schedule-seconds to make `collect run` take effect');
        }
        if (app.status !== 'ACTIVE') notes.push(`application ${app.id} is ${app.status}: the planner skips it`);
        log.info('collection run requested', { applicationId: app.id, chain: `${chain.environment}:${chain.code}`, token: token.symbol, previousRun: formatLocalDateTime(r.last_run_at), effective });
        return {
          applicationId: app.id, environment: chain.environment, chainCode: chain.code, chainTokenId: token.id, token: token.symbol, scheduleSeconds: r.schedule_seconds,
          previousRunTime: formatLocalDateTime(r.last_run_at), effective, withinMs: effective ? cfg.withdrawals.collectPlanMs : null, notes,
        };
      }, cfg);
      ctx.emit(out, () => (out.effective
        ? `app ${out.applicationId} ${out.environment}:${out.chainCode} ${out.token}: due now; a running worker plans it within ${out.withinMs} ms (WCS_COLLECT_PLAN_MS)`
        : `app ${out.applicationId} ${out.environment}:${out.chainCode} ${out.token}: last run cleared`) + out.notes.map((n) => `\n  ${n}`).join(''));
    });

  collect
    .command('retry')
    .description('plan a FAILED HOT_GATHER item again: PLANNED, retryTimes + 1, its failure and transfer cleared (a gas top-up that succeeded is kept); its deposits stay linked to it')
    .requiredOption('--item <id>', 'collection item id', parseId)
    .addOption(jsonOpt())
    .action(async (o: { item: number; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const log = changeLog(ctx, cfg);
      const out = await ctx.withStorage((s) => retryItem(s.database.sequelize, cliActor(), o.item), cfg);
      log.info('collection item retried', { item: out.item.itemId, retryTimes: out.item.retryTimes, previous: out.previous });
      ctx.emit(out.item, () => `item ${out.item.itemId} ${out.item.stage} PLANNED again (retry ${out.item.retryTimes}; was ${out.previous.failureCode}: ${out.previous.failureMessage ?? ''})`
        + `${out.previous.keptTopUp ? `; its gas top-up ${out.previous.topUpTransferId} (SUCCESS) is kept` : ''}; a running worker launches it`);
    });
}

// ------------------------------------------------------------------ delegation blocks

function registerBlockCommands(collect: Command, ctx: CliContext): void {
  collect
    .command('blocks')
    .description('EVM delegated sweeps: deposit addresses found delegated to code that is not the service\'s forwarder, whose sweeps stop (open ones; --all: released too)')
    .option('--app <id>', 'only this application', parseId)
    .option('--all', 'released blocks too')
    .addOption(jsonOpt())
    .action(async (o: { app?: number; all?: boolean; json?: boolean }) => {
      ctx.setJson(o);
      const rows = await ctx.withStorage((s) => listDelegationBlocks(s.database.sequelize, o.app ?? null, o.all === true));
      ctx.emit(rows, () => (rows.length === 0 ? 'no delegation blocks' : rows.map((b) => `block ${b.id} app ${b.applicationId} chain ${b.chainId} ${b.address}: ${b.found}${b.delegate ? ` to ${b.delegate}` : ''} since ${b.foundTime}${b.releasedTime ? `, released ${b.releasedTime} by ${b.releasedBy}` : ''}`).join('\n')));
    });
  collect
    .command('unblock')
    .description('release a delegation block once the address is dealt with (its funds moved, its user given a new address): its sweeps may go again, re-delegated to the forwarder if its code allows')
    .requiredOption('--id <id>', 'delegation block id', parseId)
    .requiredOption('--note <text>', 'what was done (kept in the audit log)')
    .addOption(jsonOpt())
    .action(async (o: { id: number; note: string; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const log = changeLog(ctx, cfg);
      const out = await ctx.withStorage((s) => releaseDelegationBlock(s.database.sequelize, cliActor(), o.id, o.note), cfg);
      log.info('delegation block released', { block: out.id, address: out.address });
      ctx.emit(out, () => `block ${out.id} (${out.address}) released`);
    });
}

/** wcs collect … (docs/collection.md). */
export function registerCollectCommands(program: Command, ctx: CliContext): void {
  const collect = program.command('collect').description('collection: sweeping deposit addresses to the hot wallet (or the merchant), fee wallets, cold transfers');
  registerPolicyCommands(collect, ctx);
  registerAddressCommands(collect, ctx);
  registerSettlementCommand(collect, ctx);
  registerFeeWalletCommand(collect, ctx);
  registerBlockCommands(collect, ctx);
  registerItemCommands(collect, ctx);
  registerRunRetryCommands(collect, ctx);
}
