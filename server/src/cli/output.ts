import type { ApplicationView } from '../apps/applications';
import type { RiskRulesView } from '../withdrawals/risk-rules';

export function appTable(apps: ApplicationView[]): string {
  if (apps.length === 0) return 'no applications';
  const rows = apps.map((a) => [String(a.id), a.name, a.environment, a.status, a.apiKey, a.chains.join(',') || '-']);
  const head = ['ID', 'NAME', 'ENV', 'STATUS', 'API KEY', 'CHAINS'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}

export function describeApp(a: ApplicationView): string {
  const cbs = Object.entries(a.callbacks).map(([k, v]) => `  ${k}: ${v}`);
  return [
    `id:          ${a.id}`,
    `name:        ${a.name}`,
    `environment: ${a.environment}`,
    `status:      ${a.status}`,
    `apiKey:      ${a.apiKey}`,
    `chains:      ${a.chains.join(', ') || '(none)'}`,
    `rate limit:  ${a.rateLimit ? `${a.rateLimit.ratePerSecond}/s, burst ${a.rateLimit.burst}` : 'service default'}`,
    `callbacks:${cbs.length ? '\n' + cbs.join('\n') : ' (none)'}`,
  ].join('\n');
}

export function describeRules(v: RiskRulesView): string {
  const lines = [`application ${v.applicationId}: allowlist-only ${v.allowlistOnly ? 'on' : 'off'}`];
  for (const l of v.limits) lines.push(`  ${l.chainCode} ${l.token}#${l.chainTokenId}: per order ${l.perOrderMax ?? '-'}, daily ${l.dailyMax ?? '-'}, approval over ${l.approvalThreshold ?? '-'}`);
  for (const a of v.addresses) lines.push(`  ${a.kind === 'BLOCK' ? 'blocked' : 'allowed'} on ${a.chainCode}: ${a.address}`);
  return lines.join('\n');
}

export const factLines = (facts: Record<string, unknown>) =>
  Object.entries(facts).map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`).join('\n');
