import { Option, type Command } from 'commander';
import { TOKENS } from '../container';
import { cliActor } from '../operators/audit';
import { SUBSCRIPTION_DIRECTIONS, type SubscriptionDirection } from '../chain-events/matching';
import { MIN_AMOUNT_RE, type SubscriptionService, type SubscriptionView } from '../chain-events/subscription-service';
import { CHAIN_EVENT_STATUSES, OUTFLOW_KINDS, type ChainEventService, type ChainEventStatus, type OutflowKind } from '../chain-events/event-service';
import { UsageError, jsonOpt, parseId, type CliContext } from './context';

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** A positional id: a usage error (exit 2) when it is not one. */
function positionalId(v: string): number {
  if (!/^\d{1,15}$/.test(v) || Number(v) === 0) throw new UsageError(`id: must be a subscription id (a positive integer), got "${v}"`);
  return Number(v);
}

function describe(s: SubscriptionView): string {
  const lines = [
    `${s.id} ${s.appSubscriptionNo} ${s.chainCode} ${s.direction} ${s.status} addresses ${s.addressCount}` +
      `${s.chainTokenIds ? ` tokens ${s.chainTokenIds.join(',')}` : ''}${s.minAmount ? ` min ${s.minAmount}` : ''}`,
  ];
  if (s.addresses) lines.push(...s.addresses.map((a) => `  ${a}`));
  return lines.join('\n');
}

/**
 * wcs subscriptions list|show|create|delete|events and wcs outflows: the operator's side of
 * chain event subscriptions (docs/chain-events.md). Changes go through the same service as the
 * signed API and are audited (subscription.create, subscription.delete).
 */
export function registerSubscriptionCommands(program: Command, ctx: CliContext): void {
  const subs = program.command('subscriptions').description('chain event subscriptions of an application (docs/chain-events.md)');
  const service = (s: { container: { resolve<T>(t: symbol): T } }) => s.container.resolve<SubscriptionService>(TOKENS.SubscriptionService);
  const events = (s: { container: { resolve<T>(t: symbol): T } }) => s.container.resolve<ChainEventService>(TOKENS.ChainEventService);

  subs
    .command('list')
    .description("an application's live subscriptions, newest first")
    .requiredOption('--app <id>', 'application id', parseId)
    .option('--chain <code>', 'only this chain')
    .addOption(jsonOpt())
    .action(async (o: { app: number; chain?: string; json?: boolean }) => {
      ctx.setJson(o);
      const r = await ctx.withStorage(async (s) => {
        await s.applications.get(o.app);
        return service(s).list(o.app, { chainCode: o.chain, pageNo: 1, pageSize: 200 });
      });
      ctx.emit(r.list, () => (r.list.length === 0 ? 'no subscriptions' : r.list.map(describe).join('\n')));
    });

  subs
    .command('show <id>')
    .description('one subscription with every monitored address')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(jsonOpt())
    .action(async (id: string, o: { app: number; json?: boolean }) => {
      ctx.setJson(o);
      const sid = positionalId(id);
      const r = await ctx.withStorage(async (s) => {
        await s.applications.get(o.app);
        return service(s).get(o.app, sid);
      });
      ctx.emit(r, () => describe(r));
    });

  subs
    .command('create')
    .description('subscribe an application to transfers of addresses on a chain (idempotent on --ref)')
    .requiredOption('--app <id>', 'application id', parseId)
    .requiredOption('--ref <appSubscriptionNo>', "the merchant's reference (1-64 of letters, digits, _ - . :)")
    .requiredOption('--chain <code>', 'chain code, e.g. ETH')
    .requiredOption('--address <address>', 'a monitored address (repeat for more)', collect)
    .addOption(new Option('--direction <d>', 'IN, OUT or BOTH').choices([...SUBSCRIPTION_DIRECTIONS]).default('BOTH'))
    .option('--tokens <ids>', 'only these chainTokenIds, comma-separated')
    .option('--min <amount>', 'the least amount reported, in token units (a decimal)')
    .addOption(jsonOpt())
    .action(async (o: { app: number; ref: string; chain: string; address: string[]; direction: SubscriptionDirection; tokens?: string; min?: string; json?: boolean }) => {
      ctx.setJson(o);
      let tokens: number[] | null = null;
      if (o.tokens !== undefined) {
        tokens = o.tokens.split(',').map((t) => {
          if (!/^\d{1,10}$/.test(t.trim())) throw new UsageError(`--tokens: "${t}" is not a chainTokenId`);
          return Number(t.trim());
        });
      }
      if (o.min !== undefined && (!MIN_AMOUNT_RE.test(o.min) || !/[1-9]/.test(o.min))) throw new UsageError(`--min: must be a decimal greater than 0 with at most 18 decimals, got "${o.min}"`);
      const r = await ctx.withStorage(async (s) => {
        const app = await s.applications.get(o.app);
        return service(s).create(
          { applicationId: app.id, environment: app.environment, enabledChains: app.chains, operator: cliActor() },
          { appSubscriptionNo: o.ref, chainCode: o.chain, addresses: o.address, direction: o.direction, chainTokenIds: tokens, contractAddresses: null, minAmount: o.min ?? null },
        );
      });
      ctx.emit(r, () => `${r.created ? 'created' : 'exists'}: ${describe(r)}`);
    });

  subs
    .command('delete <id>')
    .description('end a subscription (its recorded events stay listable)')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(jsonOpt())
    .action(async (id: string, o: { app: number; json?: boolean }) => {
      ctx.setJson(o);
      const sid = positionalId(id);
      const r = await ctx.withStorage(async (s) => {
        await s.applications.get(o.app);
        return service(s).delete(o.app, sid, cliActor());
      });
      ctx.emit(r, () => `subscription ${r.id} deleted`);
    });

  subs
    .command('events')
    .description("an application's chain events, newest first (at most 200)")
    .requiredOption('--app <id>', 'application id', parseId)
    .option('--subscription <id>', 'only this subscription', parseId)
    .addOption(new Option('--status <s>', 'PENDING, CONFIRMED or DROPPED').choices([...CHAIN_EVENT_STATUSES]))
    .addOption(jsonOpt())
    .action(async (o: { app: number; subscription?: number; status?: ChainEventStatus; json?: boolean }) => {
      ctx.setJson(o);
      const r = await ctx.withStorage(async (s) => {
        await s.applications.get(o.app);
        return events(s).listEvents(o.app, { subscriptionId: o.subscription, status: o.status, pageNo: 1, pageSize: 200 });
      });
      ctx.emit(r.list, () =>
        r.list.length === 0
          ? 'no chain events'
          : r.list.map((e) => `${e.id} sub ${e.subscriptionId} ${e.chainCode} ${e.directionMatched} ${e.amount} ${e.tokenSymbol} ${e.fromAddress} -> ${e.toAddress} ${e.status} tx ${e.txHash}#${e.position}`).join('\n'),
      );
    });

  program
    .command('outflows')
    .description('transfers out of custody addresses that the service did not sign (TRANSFER), newest first (at most 200)')
    .option('--app <id>', 'only this application', parseId)
    .option('--chain <code>', 'only this chain')
    .addOption(new Option('--kind <k>', 'DEPOSIT, HOT or FEE').choices([...OUTFLOW_KINDS]))
    .addOption(jsonOpt())
    .action(async (o: { app?: number; chain?: string; kind?: OutflowKind; json?: boolean }) => {
      ctx.setJson(o);
      const r = await ctx.withStorage(async (s) => {
        if (o.app !== undefined) await s.applications.get(o.app);
        return events(s).listOutflows(o.app ?? null, { chainCode: o.chain, addressKind: o.kind, pageNo: 1, pageSize: 200 });
      });
      ctx.emit(r.list, () =>
        r.list.length === 0
          ? 'no unexpected outflows'
          : r.list.map((x) => `${x.id} app ${x.applicationId} ${x.chainCode} ${x.addressKind} ${x.fromAddress} -> ${x.toAddress} ${x.amount} ${x.tokenSymbol} tx ${x.txHash}`).join('\n'),
      );
    });
}
