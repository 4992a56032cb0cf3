import { InvalidArgumentError, Option, type Command } from 'commander';
import { BIZ_TYPES, type BizType } from '../apps/applications';
import { PAGE_SIZE_MAX, TASK_STATUSES, type CallbackService, type CallbackTaskView, type TaskStatus } from '../callbacks/callback-service';
import { TOKENS } from '../container';
import { cliActor } from '../operators/audit';
import { UsageError, jsonOpt, parseId, type CliContext } from './context';

/** wcs callback test|resend|list. */
export function registerCallbackCommands(program: Command, ctx: CliContext): void {
  const callback = program.command('callback').description('merchant callbacks (webhooks)');
  callback
    .command('test')
    .description('queue a signed test event to the application\'s callback URL for a business type, through the real delivery pipeline')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(new Option('--biz-type <type>', 'business type').choices([...BIZ_TYPES]).makeOptionMandatory())
    .addOption(jsonOpt())
    .action(async (o: { app: number; bizType: BizType; json?: boolean }) => {
      ctx.setJson(o);
      const task = await ctx.withStorage(async (s) => {
        await s.applications.get(o.app); // APPLICATION_NOT_FOUND before anything is written
        return s.container.resolve<CallbackService>(TOKENS.CallbackService).sendTest(cliActor(), o.app, o.bizType);
      });
      const out = { callbackTaskId: task.id, status: task.status, url: task.url };
      ctx.emit(out, () =>
        task.status === 'WAITING'
          ? `queued test callback task ${task.id} to ${task.url}; a running worker (wcs start) delivers it; attempts: GET /api/v1/wallet/callback/attempts?callbackTaskId=${task.id}`
          : `recorded test callback task ${task.id} as FAILED: no callback URL is configured for ${o.bizType} (wcs app set-callback), then resend it`,
      );
    });

  const service = (s: { container: { resolve<T>(token: symbol): T } }) => s.container.resolve<CallbackService>(TOKENS.CallbackService);
  const taskLine = (t: CallbackTaskView) =>
    `task ${t.id} ${t.bizType} bizId ${t.bizId} ${t.status} retries ${t.retryTimes}/${t.maxRetryTimes} ${t.url || '(no URL)'}${t.lastError ? ` last error: ${t.lastError}` : ''} created ${t.createTime}`;

  callback
    .command('resend')
    .description('queue callback tasks again (as POST /api/v1/wallet/callback/resend does): one task (--task), or every FAILED task of an application and business type (--app --biz-type); a running worker delivers them')
    .option('--task <id>', 'one callback task id (FAILED or SUCCESS; a SUCCESS task is delivered again on purpose)', parseId)
    .option('--app <id>', 'application id (with --biz-type: every FAILED task)', parseId)
    .addOption(new Option('--biz-type <type>', 'business type (with --app)').choices([...BIZ_TYPES]))
    .addOption(jsonOpt())
    .action(async (o: { task?: number; app?: number; bizType?: BizType; json?: boolean }) => {
      ctx.setJson(o);
      const byTask = o.task !== undefined;
      if (byTask === (o.app !== undefined || o.bizType !== undefined) || (!byTask && (o.app === undefined || o.bizType === undefined))) {
        throw new UsageError('callback resend: give either --task ID, or --app ID with --biz-type TYPE');
      }
      const result = await ctx.withStorage(async (s) => {
        const callbacks = service(s);
        if (byTask) {
          const task = await callbacks.resend(cliActor(), await callbacks.taskApplication(o.task!), o.task!);
          return { resent: [task], skipped: [] as number[] };
        }
        await s.applications.get(o.app!); // APPLICATION_NOT_FOUND rather than "nothing to resend"
        return callbacks.resendFailed(cliActor(), o.app!, o.bizType!);
      });
      ctx.emit(result, () => {
        const lines = result.resent.map((t) => `queued ${taskLine(t)}`);
        if (!byTask && result.resent.length === 0) lines.push(`no FAILED ${o.bizType} callback tasks for application ${o.app}`);
        if (result.skipped.length) lines.push(`skipped (no longer FAILED): ${result.skipped.join(', ')}`);
        if (result.resent.length) lines.push('a running worker (wcs start) delivers them');
        return lines.join('\n');
      });
    });

  callback
    .command('list')
    .description('list an application\'s callback tasks, newest first')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(new Option('--status <status>', 'only tasks in this status').choices([...TASK_STATUSES]))
    .addOption(new Option('--biz-type <type>', 'only this business type').choices([...BIZ_TYPES]))
    .option('--limit <n>', `at most this many (1 to ${PAGE_SIZE_MAX}, default 50)`, (v: string) => {
      const n = parseId(v);
      if (n > PAGE_SIZE_MAX) throw new InvalidArgumentError(`At most ${PAGE_SIZE_MAX}.`);
      return n;
    })
    .addOption(jsonOpt())
    .action(async (o: { app: number; status?: TaskStatus; bizType?: BizType; limit?: number; json?: boolean }) => {
      ctx.setJson(o);
      const page = await ctx.withStorage(async (s) => {
        await s.applications.get(o.app);
        return service(s).listTasks(o.app, { status: o.status, bizType: o.bizType, pageNo: 1, pageSize: o.limit ?? 50 });
      });
      ctx.emit(page, () =>
        page.list.length === 0
          ? 'no callback tasks'
          : [...page.list.map(taskLine), ...(page.total > page.list.length ? [`(${page.list.length} of ${page.total}; --limit for more)`] : [])].join('\n'),
      );
    });
}
