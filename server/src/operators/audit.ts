import * as os from 'node:os';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/** Who made a change, from where (docs/console.md, "Audit log"). */
export interface AuditActor {
  /** An operator's username, or `cli:<system user>`. */
  readonly name: string;
  /** The operator's role; `shell` for the CLI (whoever runs it holds the database). */
  readonly role: string;
  readonly channel: 'console' | 'cli';
  /** The client address (console) or the host name (CLI). */
  readonly source: string | null;
}

/** The CLI's actor: the system user on this host. */
export function cliActor(): AuditActor {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    user = process.env.USER ?? 'unknown';
  }
  return { name: `cli:${user}`.slice(0, 128), role: 'shell', channel: 'cli', source: os.hostname().slice(0, 256) };
}

export interface AuditChange {
  /** What was done, `<area>.<verb>` (e.g. `operator.create`). */
  readonly action: string;
  /** What it was done to (e.g. `operator:alice`). */
  readonly target: string | null;
  readonly before: Record<string, unknown> | null;
  readonly after: Record<string, unknown> | null;
}

export interface AuditEntry extends AuditChange {
  readonly id: string;
  readonly at: Date;
  readonly actor: string;
  readonly actorRole: string;
  readonly channel: 'console' | 'cli';
  readonly source: string | null;
}

/**
 * The append-only audit log (migration 11: updates, deletes and truncation are refused by
 * trigger for every database role). A change and its entry commit in one transaction: record()
 * takes the transaction the change is made in.
 */
export class AuditLog {
  constructor(private readonly sequelize: Sequelize) {}

  async record(t: Transaction, actor: AuditActor, change: AuditChange): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO audit_log (actor, actor_role, channel, source, action, target, before, after) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb)`,
      {
        bind: [actor.name, actor.role, actor.channel, actor.source, change.action, change.target,
          change.before === null ? null : JSON.stringify(change.before), change.after === null ? null : JSON.stringify(change.after)],
        transaction: t,
      },
    );
  }

  /** Newest first, `limit` entries before entry id `before` (keyset paging). */
  async list(options: { limit: number; before?: string | null; actor?: string | null; action?: string | null }): Promise<AuditEntry[]> {
    const rows = await this.sequelize.query<{ id: string; at: Date; actor: string; actor_role: string; channel: 'console' | 'cli'; source: string | null; action: string; target: string | null; before: Record<string, unknown> | null; after: Record<string, unknown> | null }>(
      `SELECT id::text AS id, at, actor, actor_role, channel, source, action, target, before, after FROM audit_log
        WHERE ($1::bigint IS NULL OR id < $1::bigint) AND ($2::text IS NULL OR actor = $2) AND ($3::text IS NULL OR action = $3)
        ORDER BY audit_log.id DESC LIMIT $4`,
      { bind: [options.before ?? null, options.actor ?? null, options.action ?? null, options.limit], type: QueryTypes.SELECT },
    );
    return rows.map((r) => ({ id: r.id, at: r.at, actor: r.actor, actorRole: r.actor_role, channel: r.channel, source: r.source, action: r.action, target: r.target, before: r.before, after: r.after }));
  }
}
