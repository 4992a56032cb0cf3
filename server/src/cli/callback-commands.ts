import { Option, type Command } from 'commander';
import { BIZ_TYPES, type BizType } from '../apps/applications';
import type { CallbackService } from '../callbacks/callback-service';
import { TOKENS } from '../container';
import { jsonOpt, parseId, type CliContext } from './context';

/** wcs callback test. */
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
        return s.container.resolve<CallbackService>(TOKENS.CallbackService).sendTest(o.app, o.bizType);
      });
      const out = { callbackTaskId: task.id, status: task.status, url: task.url };
      ctx.emit(out, () =>
        task.status === 'WAITING'
          ? `queued test callback task ${task.id} to ${task.url}; a running worker (wcs start) delivers it; attempts: GET /api/v1/wallet/callback/attempts?callbackTaskId=${task.id}`
          : `recorded test callback task ${task.id} as FAILED: no callback URL is configured for ${o.bizType} (wcs app set-callback), then resend it`,
      );
    });
}
