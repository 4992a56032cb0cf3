import { QueryTypes, type Sequelize } from 'sequelize';
import { AmountFormatError, formatUnits, parseUnits, WcsError, type AdapterRegistry } from '@wcs/core';
import type { Catalogue } from '../catalogue/catalogue';

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

  async setLimits(applicationId: number, chainTokenId: number, limits: TokenLimits): Promise<void> {
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
    if (p === null && d === null && a === null) {
      await this.sequelize.query('DELETE FROM withdraw_limits WHERE application_id = $1 AND chain_token_id = $2', { bind: [applicationId, chainTokenId] });
      return;
    }
    await this.sequelize.query(
      `INSERT INTO withdraw_limits (application_id, chain_token_id, per_order_max, daily_max, approval_threshold) VALUES ($1, $2, $3::numeric, $4::numeric, $5::numeric)
       ON CONFLICT (application_id, chain_token_id) DO UPDATE SET per_order_max = EXCLUDED.per_order_max, daily_max = EXCLUDED.daily_max, approval_threshold = EXCLUDED.approval_threshold`,
      { bind: [applicationId, chainTokenId, p, d, a] },
    );
  }

  /** Adds (or with `remove`, takes away) a destination on the application's block or allow list of a chain. */
  async setAddress(applicationId: number, chainCode: string, address: string, kind: 'BLOCK' | 'ALLOW', remove: boolean): Promise<string> {
    const { environment } = await this.app(applicationId);
    const chain = this.catalogue.chain(environment, chainCode);
    const v = this.registry.forChain(chain).address.validate(address, null);
    if (!v.valid) throw new WcsError('WITHDRAW_ADDRESS_INVALID', { message: `not a valid ${chain.code} (${chain.network}) address: ${v.reason}` });
    if (remove) {
      await this.sequelize.query('DELETE FROM withdraw_address_rules WHERE application_id = $1 AND chain_id = $2 AND kind = $3 AND address = $4', {
        bind: [applicationId, chain.id, kind, v.normalized],
      });
    } else {
      await this.sequelize.query(
        'INSERT INTO withdraw_address_rules (application_id, chain_id, address, kind) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
        { bind: [applicationId, chain.id, v.normalized, kind] },
      );
    }
    return v.normalized;
  }

  async setAllowlistOnly(applicationId: number, on: boolean): Promise<void> {
    await this.app(applicationId);
    await this.sequelize.query('UPDATE applications SET withdraw_allowlist_only = $2, updated_at = now() WHERE id = $1', { bind: [applicationId, on] });
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
