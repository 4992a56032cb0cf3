import { InvalidArgumentError, Option, type Command } from 'commander';
import { formatLocalDateTime } from '@wcs/core';
import type { SecretBox } from '../crypto/secret-box';
import { TOKENS } from '../container';
import { AlertError, Alerts, type AlertView } from '../operators/alerts';
import { AuditLog, cliActor, type AuditEntry } from '../operators/audit';
import { OperatorError, Operators, ROLES, type OperatorCredentials, type OperatorView } from '../operators/operators';
import { UsageError, jsonOpt, type CliContext } from './context';

const AUDIT_LIMIT_MAX = 1000;

function parseLimit(v: string): number {
  if (!/^\d{1,4}$/.test(v) || Number(v) < 1 || Number(v) > AUDIT_LIMIT_MAX) throw new InvalidArgumentError(`Must be an integer from 1 to ${AUDIT_LIMIT_MAX}.`);
  return Number(v);
}

function parseCursor(v: string): string {
  if (!/^\d{1,19}$/.test(v)) throw new InvalidArgumentError('Must be an audit entry id.');
  return v;
}

/** Bad input found by the rules (a username or role) is a usage error: nothing was written. */
async function rules<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof OperatorError && e.code === 'OPERATOR_INVALID') throw new UsageError(e.message);
    throw e;
  }
}

const operatorJson = (o: OperatorView) => ({
  id: o.id, username: o.username, role: o.role, status: o.status, totp: o.totp, mustChangePassword: o.mustChangePassword,
  lockedUntil: o.lockedUntil === null ? null : formatLocalDateTime(o.lockedUntil), createdTime: formatLocalDateTime(o.createdAt),
});

function credentialsText(c: OperatorCredentials, verb: string): string {
  const lines = [
    `${verb} operator ${c.operator.username} (${c.operator.role}, id ${c.operator.id})`,
    `password (shown once; to be changed at the first login): ${c.password}`,
  ];
  if (c.totpUri) lines.push(`TOTP secret (shown once; scan it into an authenticator app): ${c.totpUri}`);
  return lines.join('\n');
}

const entryJson = (e: AuditEntry) => ({
  id: e.id, time: formatLocalDateTime(e.at), actor: e.actor, role: e.actorRole, channel: e.channel, source: e.source, action: e.action, target: e.target, before: e.before, after: e.after,
});

/**
 * wcs operator create|reset-password|disable|list and wcs audit (docs/console.md). The same
 * service functions the console calls; every change is audited with the CLI's actor (the system
 * user and host).
 */
export function registerOperatorCommands(program: Command, ctx: CliContext): void {
  const operators = (s: { container: { resolve<T>(token: symbol): T }; database: { sequelize: import('sequelize').Sequelize } }) =>
    new Operators(s.database.sequelize, s.container.resolve<SecretBox>(TOKENS.SecretBox));
  const op = program.command('operator').description('console operator accounts');

  op.command('create')
    .description('create an operator: a generated password (shown once) and, for approvers and admins (or with --totp), a TOTP secret (shown once)')
    .requiredOption('--username <name>', 'login name: 3-64 characters, lower-case letters, digits, ".", "_", "-"')
    .addOption(new Option('--role <role>', 'what the operator may do').choices([...ROLES]).makeOptionMandatory())
    .option('--totp', 'enrol a TOTP second factor (always for approver and admin)')
    .addOption(jsonOpt())
    .action(async (o: { username: string; role: string; totp?: boolean; json?: boolean }) => {
      ctx.setJson(o);
      const c = await rules(() => ctx.withStorage((s) => operators(s).create(cliActor(), { username: o.username, role: o.role, totp: o.totp === true })));
      ctx.emit({ operator: operatorJson(c.operator), password: c.password, totpUri: c.totpUri }, () => credentialsText(c, 'created'));
    });

  op.command('reset-password')
    .description('give an operator a new generated password (shown once), unlock the account; --totp also enrols a new TOTP secret')
    .requiredOption('--username <name>', 'the operator')
    .option('--totp', 'replace the TOTP secret too (a lost authenticator)')
    .addOption(jsonOpt())
    .action(async (o: { username: string; totp?: boolean; json?: boolean }) => {
      ctx.setJson(o);
      const c = await rules(() => ctx.withStorage((s) => operators(s).resetPassword(cliActor(), { username: o.username, totp: o.totp === true })));
      ctx.emit({ operator: operatorJson(c.operator), password: c.password, totpUri: c.totpUri }, () => credentialsText(c, 'reset'));
    });

  op.command('disable')
    .description('disable an operator: no more logins')
    .requiredOption('--username <name>', 'the operator')
    .addOption(jsonOpt())
    .action(async (o: { username: string; json?: boolean }) => {
      ctx.setJson(o);
      const v = await rules(() => ctx.withStorage((s) => operators(s).disable(cliActor(), { username: o.username })));
      ctx.emit({ operator: operatorJson(v) }, () => `operator ${v.username} is ${v.status}`);
    });

  op.command('list')
    .description('the operators (never a secret)')
    .addOption(jsonOpt())
    .action(async (o: { json?: boolean }) => {
      ctx.setJson(o);
      const list = await ctx.withStorage((s) => operators(s).list());
      ctx.emit({ operators: list.map(operatorJson) }, () => (list.length === 0 ? 'no operators (wcs operator create)'
        : list.map((v) => `${v.id} ${v.username} ${v.role} ${v.status}${v.totp ? ' totp' : ''}${v.mustChangePassword ? ' (password to change)' : ''}`).join('\n')));
    });

  const alertJson = (a: AlertView) => ({
    id: a.id, chain: a.chainCode, kind: a.kind, message: a.message, details: a.details, createdTime: formatLocalDateTime(a.createdAt),
    acknowledgedTime: a.acknowledgedAt === null ? null : formatLocalDateTime(a.acknowledgedAt), acknowledgedBy: a.acknowledgedBy,
  });
  const alerts = program.command('alerts').description('operator alerts raised by the workers: open ones (or --all), newest first; `wcs alerts ack ID`');
  alerts.command('list', { isDefault: true })
    .description('open alerts (or --all), newest first')
    .option('--all', 'acknowledged ones too')
    .option('--limit <n>', `alerts (1-${AUDIT_LIMIT_MAX})`, parseLimit, 100)
    .addOption(jsonOpt())
    .action(async (o: { all?: boolean; limit: number; json?: boolean }) => {
      ctx.setJson(o);
      const list = await ctx.withStorage((s) => new Alerts(s.database.sequelize).list({ open: o.all !== true, limit: o.limit }));
      ctx.emit({ alerts: list.map(alertJson) }, () => (list.length === 0 ? `no ${o.all ? '' : 'open '}alerts`
        : list.map((a) => `${a.id} ${formatLocalDateTime(a.createdAt)} ${a.kind}${a.chainCode ? ` ${a.chainCode}` : ''}: ${a.message}${a.acknowledgedAt ? ` (acknowledged${a.acknowledgedBy ? ` by ${a.acknowledgedBy}` : ''})` : ''}`).join('\n')));
    });
  alerts.command('ack <id>')
    .description('acknowledge an alert (audited)')
    .addOption(jsonOpt())
    .action(async (id: string, o: { json?: boolean }) => {
      ctx.setJson(o);
      if (!/^\d{1,19}$/.test(id)) throw new UsageError(`alert id must be a number, got ${JSON.stringify(id)}`);
      const r = await ctx.withStorage((s) => new Alerts(s.database.sequelize).acknowledge(cliActor(), id));
      if (!r.ok) throw r.reason === 'NOT_FOUND' ? new AlertError('ALERT_NOT_FOUND', `no alert ${id}`) : new AlertError('ALERT_ALREADY_ACKNOWLEDGED', `alert ${id} is already acknowledged`);
      ctx.emit({ alert: alertJson(r.alert) }, () => `acknowledged alert ${id} (${r.alert.kind})`);
    });

  program.command('audit')
    .description('the audit log, newest first: every change by an operator (console or CLI)')
    .option('--limit <n>', `entries (1-${AUDIT_LIMIT_MAX})`, parseLimit, 50)
    .option('--before <id>', 'entries older than this entry id (the next page)', parseCursor)
    .option('--actor <name>', 'only this actor (an operator, or cli:<system user>)')
    .option('--action <action>', 'only this action (e.g. operator.create)')
    .addOption(jsonOpt())
    .action(async (o: { limit: number; before?: string; actor?: string; action?: string; json?: boolean }) => {
      ctx.setJson(o);
      const entries = await ctx.withStorage((s) => new AuditLog(s.database.sequelize).list({ limit: o.limit, before: o.before ?? null, actor: o.actor ?? null, action: o.action ?? null }));
      const next = entries.length === o.limit ? entries[entries.length - 1]!.id : null;
      ctx.emit({ entries: entries.map(entryJson), next }, () => (entries.length === 0 ? 'no audit entries'
        : [...entries.map((e) => `${e.id} ${formatLocalDateTime(e.at)} ${e.actor} (${e.actorRole}, ${e.channel}${e.source ? ` from ${e.source}` : ''}) ${e.action} ${e.target ?? ''}`),
          ...(next ? [`more: wcs audit --before ${next}`] : [])].join('\n')));
    });
}
