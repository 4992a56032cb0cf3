import { QueryTypes, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { operatorTotpBinding, type SecretBox } from '../crypto/secret-box';
import { sealingKeyId } from '../crypto/sealing-key';
import { AuditLog, type AuditActor } from './audit';
import { generatePassword, hashPassword } from './password';
import { newTotpSecret, otpauthUri } from './totp';

export const ROLES = ['viewer', 'operator', 'approver', 'admin'] as const;
export type Role = (typeof ROLES)[number];
/** Roles that must have a second factor. */
export const TOTP_REQUIRED: readonly Role[] = ['approver', 'admin'];
const USERNAME = /^[a-z][a-z0-9._-]{2,63}$/;
/** The issuer authenticator apps show next to the account. */
export const TOTP_ISSUER = 'Wallet Custody Service';

/** Stable codes of operator-account refusals (docs/console.md). */
export type OperatorErrorCode = 'OPERATOR_INVALID' | 'OPERATOR_EXISTS' | 'OPERATOR_NOT_FOUND';

export class OperatorError extends Error {
  constructor(readonly code: OperatorErrorCode, message: string) {
    super(message);
    this.name = code;
  }
}

/** An operator as listed (never a secret). */
export interface OperatorView {
  readonly id: number;
  readonly username: string;
  readonly role: Role;
  readonly status: 'ACTIVE' | 'DISABLED';
  readonly totp: boolean;
  readonly mustChangePassword: boolean;
  readonly lockedUntil: Date | null;
  readonly createdAt: Date;
}

/** What a create or reset hands out, once: the password and, where enrolled, the TOTP secret. */
export interface OperatorCredentials {
  readonly operator: OperatorView;
  readonly password: string;
  /** The otpauth:// URI to scan (null: no second factor enrolled). */
  readonly totpUri: string | null;
}

interface OperatorRow {
  id: number;
  username: string;
  role: Role;
  status: 'ACTIVE' | 'DISABLED';
  totp_ciphertext: Buffer | null;
  must_change_password: boolean;
  locked_until: Date | null;
  created_at: Date;
}

const view = (r: OperatorRow): OperatorView => ({
  id: r.id, username: r.username, role: r.role, status: r.status, totp: r.totp_ciphertext !== null, mustChangePassword: r.must_change_password, lockedUntil: r.locked_until, createdAt: r.created_at,
});
/** What the audit log keeps of an operator: never the password hash or the TOTP secret. */
const audited = (o: OperatorView) => ({ username: o.username, role: o.role, status: o.status, totp: o.totp });

/**
 * Operator accounts (docs/console.md): the rules the CLI and the console share. Every change is
 * written with its audit entry in one transaction. Passwords are generated (shown once, to be
 * changed at the first login); approvers and admins always get a TOTP secret (shown once as an
 * otpauth URI); the secret is stored sealed under the master key, bound to the operator's id.
 */
export class Operators {
  private readonly audit: AuditLog;

  constructor(private readonly sequelize: Sequelize, private readonly box: SecretBox) {
    this.audit = new AuditLog(sequelize);
  }

  static checkRole(role: string): Role {
    if (!(ROLES as readonly string[]).includes(role)) throw new OperatorError('OPERATOR_INVALID', `role must be one of ${ROLES.join(', ')}, not ${JSON.stringify(role)}`);
    return role as Role;
  }

  static checkUsername(username: string): string {
    if (typeof username !== 'string' || !USERNAME.test(username)) {
      throw new OperatorError('OPERATOR_INVALID', 'username must be 3 to 64 characters: a lower-case letter, then lower-case letters, digits, ".", "_" or "-"');
    }
    return username;
  }

  async list(): Promise<OperatorView[]> {
    const rows = await this.sequelize.query<OperatorRow>(
      'SELECT id, username, role, status, totp_ciphertext, must_change_password, locked_until, created_at FROM operators ORDER BY id',
      { type: QueryTypes.SELECT },
    );
    return rows.map(view);
  }

  async create(actor: AuditActor, input: { username: string; role: string; totp?: boolean }): Promise<OperatorCredentials> {
    const username = Operators.checkUsername(input.username);
    const role = Operators.checkRole(input.role);
    const withTotp = TOTP_REQUIRED.includes(role) || input.totp === true;
    const password = generatePassword();
    const hash = await hashPassword(password);
    try {
      return await this.sequelize.transaction(async (t) => {
        const [row] = await this.sequelize.query<OperatorRow>(
          // approvers and admins need the secret in the same statement (the table's check): a placeholder, replaced below in the same transaction
          `INSERT INTO operators (username, role, password_hash, totp_ciphertext, totp_iv, totp_auth_tag, totp_key_id)
           VALUES ($1, $2, $3, CASE WHEN $4 THEN '\\x00'::bytea END, CASE WHEN $4 THEN '\\x00'::bytea END, CASE WHEN $4 THEN '\\x00'::bytea END, CASE WHEN $4 THEN '-' END)
           RETURNING id, username, role, status, totp_ciphertext, must_change_password, locked_until, created_at`,
          { bind: [username, role, hash, withTotp], type: QueryTypes.SELECT, transaction: t },
        );
        const totpUri = withTotp ? await this.enrollTotp(t, row!.id, username) : null;
        const operator = view(row!);
        await this.audit.record(t, actor, { action: 'operator.create', target: `operator:${username}`, before: null, after: audited(operator) });
        return { operator, password, totpUri };
      });
    } catch (e) {
      if (e instanceof UniqueConstraintError) throw new OperatorError('OPERATOR_EXISTS', `an operator named ${username} exists already`);
      throw e;
    }
  }

  /** A new generated password (to be changed at the next login); unlocks the account. With `totp`, a new TOTP secret too. */
  async resetPassword(actor: AuditActor, input: { username: string; totp?: boolean }): Promise<OperatorCredentials> {
    const username = Operators.checkUsername(input.username);
    const password = generatePassword();
    const hash = await hashPassword(password);
    return this.sequelize.transaction(async (t) => {
      const before = await this.locked(t, username);
      const [row] = await this.sequelize.query<OperatorRow>(
        `UPDATE operators SET password_hash = $2, must_change_password = true, failed_logins = 0, locked_until = NULL, updated_at = now() WHERE id = $1
         RETURNING id, username, role, status, totp_ciphertext, must_change_password, locked_until, created_at`,
        { bind: [before.id, hash], type: QueryTypes.SELECT, transaction: t },
      );
      const totpUri = input.totp ? await this.enrollTotp(t, before.id, username) : null;
      await this.endSessions(t, before.id);
      const operator = { ...view(row!), totp: row!.totp_ciphertext !== null || totpUri !== null };
      await this.audit.record(t, actor, { action: input.totp ? 'operator.reset-password-and-totp' : 'operator.reset-password', target: `operator:${username}`, before: audited(view(before)), after: audited(operator) });
      return { operator, password, totpUri };
    });
  }

  /** DISABLED: the operator can no longer log in; their open sessions end. */
  async disable(actor: AuditActor, input: { username: string }): Promise<OperatorView> {
    const username = Operators.checkUsername(input.username);
    return this.sequelize.transaction(async (t) => {
      const before = await this.locked(t, username);
      const [row] = await this.sequelize.query<OperatorRow>(
        `UPDATE operators SET status = 'DISABLED', updated_at = now() WHERE id = $1
         RETURNING id, username, role, status, totp_ciphertext, must_change_password, locked_until, created_at`,
        { bind: [before.id], type: QueryTypes.SELECT, transaction: t },
      );
      const operator = view(row!);
      await this.endSessions(t, before.id);
      if (before.status !== 'DISABLED') await this.audit.record(t, actor, { action: 'operator.disable', target: `operator:${username}`, before: audited(view(before)), after: audited(operator) });
      return operator;
    });
  }

  /** The operator's TOTP secret (for verifying a code); null when none is enrolled. */
  async totpSecret(id: number): Promise<Buffer | null> {
    const [r] = await this.sequelize.query<{ totp_ciphertext: Buffer | null; totp_iv: Buffer; totp_auth_tag: Buffer; totp_key_id: string }>(
      'SELECT totp_ciphertext, totp_iv, totp_auth_tag, totp_key_id FROM operators WHERE id = $1',
      { bind: [id], type: QueryTypes.SELECT },
    );
    if (!r || r.totp_ciphertext === null) return null;
    return this.box.openBound({ ciphertext: r.totp_ciphertext, iv: r.totp_iv, authTag: r.totp_auth_tag, keyId: r.totp_key_id }, operatorTotpBinding(id));
  }

  private async locked(t: Transaction, username: string): Promise<OperatorRow> {
    const [row] = await this.sequelize.query<OperatorRow>(
      'SELECT id, username, role, status, totp_ciphertext, must_change_password, locked_until, created_at FROM operators WHERE username = $1 FOR UPDATE',
      { bind: [username], type: QueryTypes.SELECT, transaction: t },
    );
    if (!row) throw new OperatorError('OPERATOR_NOT_FOUND', `no operator named ${username}`);
    return row;
  }

  /** Every open console session of the operator ends (a reset or a disable). */
  private async endSessions(t: Transaction, id: number): Promise<void> {
    await this.sequelize.query('UPDATE operator_sessions SET ended_at = now() WHERE operator_id = $1 AND ended_at IS NULL', { bind: [id], transaction: t });
  }

  private async enrollTotp(t: Transaction, id: number, username: string): Promise<string> {
    const secret = newTotpSecret();
    try {
      const sealed = this.box.sealBound(secret, operatorTotpBinding(id), await sealingKeyId(this.sequelize, t, this.box));
      await this.sequelize.query(
        'UPDATE operators SET totp_ciphertext = $2, totp_iv = $3, totp_auth_tag = $4, totp_key_id = $5, totp_last_step = NULL WHERE id = $1',
        { bind: [id, sealed.ciphertext, sealed.iv, sealed.authTag, sealed.keyId], transaction: t },
      );
      return otpauthUri(TOTP_ISSUER, username, secret);
    } finally {
      secret.fill(0);
    }
  }
}
