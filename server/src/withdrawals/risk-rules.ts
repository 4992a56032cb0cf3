import { AuditLog, type AuditActor } from '../operators/audit';
import { QueryTypes, type Sequelize } from 'sequelize';
import { AmountFormatError, formatUnits, parseUnits, WcsError, type AdapterRegistry } from '@wcs/core';
import type { Catalogue } from '../catalogue/catalogue';
import { HOLDING_RULE_ACTION, holdingRuleTarget, lockHoldingRule } from './four-eyes';

/** What `wcs withdraw limits` sets for one token of an application (decimal strings; null: no limit). */
export interface TokenLimits {
  readonly perOrderMax: string | null;
  readonly dailyMax: string | null;
  readonly approvalThreshold: string | null;
}

export interface RiskRulesView {
  readonly applicationId: number;
  readonly allowlistOnly: boolean;
  readonly limits: Array<{ chainCode: string; chainTokenId: number; token: string } & TokenLimits>;
  readonly addresses: Array<{ chainCode: string; address: string; kind: 'BLOCK' | 'ALLOW' }>;
}

/**
 * The operator's risk rules per application (docs/withdrawals.md): per-token limits and the
 * approval threshold, destination block and allow lists, and the allowlist-only switch. Amounts
 * are written as the token's decimal strings and kept in base units; addresses are kept in the
 * chain's canonical form (what orders store), so a rule matches however the merchant writes it.
 */
export class RiskRules {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly catalogue: Catalogue,
    private readonly registry: AdapterRegistry,
  ) {}

  private async app(applicationId: number): Promise<{ environment: 'test' | 'live' }> {
    const [a] = await this.sequelize.query<{ environment: 'test' | 'live' }>('SELECT environment FROM applications WHERE id = $1', { bind: [applicationId], type: QueryTypes.SELECT });
    if (!a) throw new WcsError('APPLICATION_NOT_FOUND', { message: `No application ${applicationId}` });
    return a;
  }

  private token(environment: 'test' | 'live', chainTokenId: number) {
    for (const chain of this.catalogue.chains(environment)) {
      const t = chain.tokens.find((x) => x.id === chainTokenId);
      if (t) return { chain, token: t };
    }
    throw new WcsError('TOKEN_UNKNOWN', { message: `Unknown chainTokenId ${chainTokenId} in ${environment}` });
  }

  /**
   * Sets (or, all null, removes) a token's limits; audited with the limits before and after, in
   * the change's transaction (a change to what it already is changes nothing and writes no entry).
   * Its approval threshold is the rule that holds withdrawals (four eyes, four-eyes.ts): the change
   * takes the rule's lock, so a decision on a held order sees it or waits for it.
   */
  async setLimits(actor: AuditActor, applicationId: number, chainTokenId: number, limits: TokenLimits): Promise<void> {
    const { environment } = await this.app(applicationId);
    const { token } = this.token(environment, chainTokenId);
    const units = (field: string, v: string | null): string | null => {
      if (v === null) return null;
      try {
        const u = parseUnits(v, token.decimals);
        if (u <= 0n) throw new AmountFormatError('must be greater than 0');
        return u.toString();
      } catch (e) {
        if (e instanceof AmountFormatError) throw new WcsError('APPLICATION_INVALID', { message: `${field}: ${e.message} (${token.symbol} has ${token.decimals} decimals)` });
        throw e;
      }
    };
    const [p, d, a] = [units('--per-order', limits.perOrderMax), units('--daily', limits.dailyMax), units('--approval-over', limits.approvalThreshold)];
    await this.sequelize.transaction(async (t) => {
      await lockHoldingRule(this.sequelize, t, applicationId, chainTokenId);
      const [before] = await this.sequelize.query<{ per_order_max: string | null; daily_max: string | null; approval_threshold: string | null }>(
        `SELECT per_order_max::text AS per_order_max, daily_max::text AS daily_max, approval_threshold::text AS approval_threshold
           FROM withdraw_limits WHERE application_id = $1 AND chain_token_id = $2 FOR UPDATE`,
        { bind: [applicationId, chainTokenId], type: QueryTypes.SELECT, transaction: t },
      );
      const same = before
        ? before.per_order_max === p && before.daily_max === d && before.approval_threshold === a
        : p === null && d === null && a === null;
      if (same) return;
      if (p === null && d === null && a === null) {
        await this.sequelize.query('DELETE FROM withdraw_limits WHERE application_id = $1 AND chain_token_id = $2', { bind: [applicationId, chainTokenId], transaction: t });
      } else {
        await this.sequelize.query(
          `INSERT INTO withdraw_limits (application_id, chain_token_id, per_order_max, daily_max, approval_threshold) VALUES ($1, $2, $3::numeric, $4::numeric, $5::numeric)
           ON CONFLICT (application_id, chain_token_id) DO UPDATE SET per_order_max = EXCLUDED.per_order_max, daily_max = EXCLUDED.daily_max, approval_threshold = EXCLUDED.approval_threshold`,
          { bind: [applicationId, chainTokenId, p, d, a], transaction: t },
        );
      }
      const shape = (x: { per_order_max: string | null; daily_max: string | null; approval_threshold: string | null } | undefined) =>
        (x ? { perOrderMax: x.per_order_max, dailyMax: x.daily_max, approvalThreshold: x.approval_threshold, units: 'base units', token: token.symbol } : null);
      await new AuditLog(this.sequelize).record(t, actor, {
        action: HOLDING_RULE_ACTION, target: holdingRuleTarget(applicationId, chainTokenId),
        before: shape(before), after: p === null && d === null && a === null ? null : shape({ per_order_max: p, daily_max: d, approval_threshold: a }),
      });
    });
  }

  /** Adds (or with `remove`, takes away) a destination on the application's block or allow list of a chain; audited when it changed the list. */
  async setAddress(actor: AuditActor, applicationId: number, chainCode: string, address: string, kind: 'BLOCK' | 'ALLOW', remove: boolean): Promise<string> {
    const { environment } = await this.app(applicationId);
    const chain = this.catalogue.chain(environment, chainCode);
    const v = this.registry.forChain(chain).address.validate(address, null);
    if (!v.valid) throw new WcsError('WITHDRAW_ADDRESS_INVALID', { message: `not a valid ${chain.code} (${chain.network}) address: ${v.reason}` });
    await this.sequelize.transaction(async (t) => {
      const changed = remove
        ? await this.sequelize.query<{ id: unknown }>('DELETE FROM withdraw_address_rules WHERE application_id = $1 AND chain_id = $2 AND kind = $3 AND address = $4 RETURNING 1 AS id', {
          bind: [applicationId, chain.id, kind, v.normalized], type: QueryTypes.SELECT, transaction: t,
        })
        : await this.sequelize.query<{ id: unknown }>(
          'INSERT INTO withdraw_address_rules (application_id, chain_id, address, kind) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1 AS id',
          { bind: [applicationId, chain.id, v.normalized, kind], type: QueryTypes.SELECT, transaction: t },
        );
      if (changed.length === 0) return;
      const list = kind === 'BLOCK' ? 'blocklist' : 'allowlist';
      await new AuditLog(this.sequelize).record(t, actor, {
        action: `withdraw.${list}.${remove ? 'remove' : 'add'}`, target: `app:${applicationId}/${chain.code}:${v.normalized}`,
        before: { listed: remove }, after: { listed: !remove },
      });
    });
    return v.normalized;
  }

  async setAllowlistOnly(actor: AuditActor, applicationId: number, on: boolean): Promise<void> {
    await this.app(applicationId);
    await this.sequelize.transaction(async (t) => {
      const [before] = await this.sequelize.query<{ only: boolean }>('SELECT withdraw_allowlist_only AS only FROM applications WHERE id = $1 FOR UPDATE', {
        bind: [applicationId], type: QueryTypes.SELECT, transaction: t,
      });
      if (before!.only === on) return;
      await this.sequelize.query('UPDATE applications SET withdraw_allowlist_only = $2, updated_at = now() WHERE id = $1', { bind: [applicationId, on], transaction: t });
      await new AuditLog(this.sequelize).record(t, actor, { action: 'withdraw.allowlist-only.set', target: `app:${applicationId}`, before: { allowlistOnly: before!.only }, after: { allowlistOnly: on } });
    });
  }

  async show(applicationId: number): Promise<RiskRulesView> {
    const { environment } = await this.app(applicationId);
    const [a] = await this.sequelize.query<{ only: boolean }>('SELECT withdraw_allowlist_only AS only FROM applications WHERE id = $1', { bind: [applicationId], type: QueryTypes.SELECT });
    const limits = await this.sequelize.query<{ chain_token_id: number; per_order_max: string | null; daily_max: string | null; approval_threshold: string | null }>(
      `SELECT chain_token_id, per_order_max::text AS per_order_max, daily_max::text AS daily_max, approval_threshold::text AS approval_threshold
         FROM withdraw_limits WHERE application_id = $1 ORDER BY chain_token_id`,
      { bind: [applicationId], type: QueryTypes.SELECT },
    );
    const rules = await this.sequelize.query<{ code: string; address: string; kind: 'BLOCK' | 'ALLOW' }>(
      'SELECT c.code, r.address, r.kind FROM withdraw_address_rules r JOIN chains c ON c.id = r.chain_id WHERE r.application_id = $1 ORDER BY c.code, r.kind, r.address',
      { bind: [applicationId], type: QueryTypes.SELECT },
    );
    return {
      applicationId,
      allowlistOnly: a!.only,
      limits: limits.map((l) => {
        const { chain, token } = this.token(environment, l.chain_token_id);
        const fmt = (v: string | null) => (v === null ? null : formatUnits(BigInt(v), token.decimals));
        return { chainCode: chain.code, chainTokenId: token.id, token: token.symbol, perOrderMax: fmt(l.per_order_max), dailyMax: fmt(l.daily_max), approvalThreshold: fmt(l.approval_threshold) };
      }),
      addresses: rules.map((r) => ({ chainCode: r.code, address: r.address, kind: r.kind })),
    };
  }
}
