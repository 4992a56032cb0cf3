import { Sequelize } from 'sequelize';
import pg from 'pg';
import type { ServiceConfig } from '../config/config';
import type { Logger } from '../config/logger';
import { EmbeddedPostgres } from './embedded';

// NUMERIC and BIGINT come back as strings (exact); int4 stays a number.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export const EMBEDDED_DATABASE_NAME = 'wcs';

/**
 * The database connection: DATABASE_URL when set, otherwise the embedded cluster
 * under WCS_DATA_DIR. Owns the Sequelize instance and, when it started it, the cluster.
 */
export class Database {
  private embedded: EmbeddedPostgres | null = null;
  private _sequelize: Sequelize | null = null;
  private _url: string | null = null;

  constructor(
    private readonly config: ServiceConfig,
    private readonly logger: Logger,
  ) {}

  get sequelize(): Sequelize {
    if (!this._sequelize) throw new Error('Database not open');
    return this._sequelize;
  }

  /** The connection URL (contains a password: never log it unmasked). */
  get url(): string {
    if (!this._url) throw new Error('Database not open');
    return this._url;
  }

  get mode(): 'url' | 'embedded' {
    return this.config.databaseUrl ? 'url' : 'embedded';
  }

  async open(): Promise<void> {
    if (this._sequelize) return;
    if (this.config.databaseUrl) {
      this._url = this.config.databaseUrl;
    } else {
      this.embedded = new EmbeddedPostgres(this.config.dataDir, this.config.embeddedPgPort, this.logger);
      await this.embedded.ensureRunning();
      await this.embedded.ensureDatabase(EMBEDDED_DATABASE_NAME);
      this._url = this.embedded.url(EMBEDDED_DATABASE_NAME);
    }
    this._sequelize = new Sequelize(this._url, {
      dialect: 'postgres',
      dialectModule: pg,
      logging: false,
      pool: { max: this.config.dbPoolMax, min: 0, idle: 10000, acquire: 10000 },
      define: { underscored: true, timestamps: false },
    });
    await this._sequelize.authenticate();
  }

  /**
   * Hot paths: one statement on a connection of the same pool, without Sequelize's query
   * pipeline. Without `prepare` the statement is planned on every call: a cached generic plan
   * made while a table was still small (a new database) would keep its sequential scans after
   * the table has grown. `prepare` names a prepared statement (planned once per connection)
   * for statements whose plan cannot go stale that way (inserts through unique indexes); the
   * name must always go with the same text.
   */
  async raw<R extends object>(text: string, values: unknown[], prepare?: string): Promise<R[]> {
    return this.withClient(async (client) => (await client.query<R>(prepare ? { name: prepare, text, values } : { text, values })).rows);
  }

  /** A pooled connection of the Sequelize pool, for the duration of fn. */
  private async withClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
    const cm = this.sequelize.connectionManager as unknown as {
      getConnection(options?: { type?: 'read' | 'write' }): Promise<pg.Client>;
      releaseConnection(connection: pg.Client): void;
    };
    const client = await cm.getConnection({ type: 'write' });
    try {
      return await fn(client);
    } finally {
      cm.releaseConnection(client);
    }
  }

  /**
   * One statement in its own transaction with planner settings for it alone (SET LOCAL), e.g.
   * to keep a queue claim on its ordered index while the table's statistics still describe an
   * empty table (a bitmap scan then sorts every due row).
   */
  async rawWithPlannerSettings<R extends object>(settings: Record<string, 'on' | 'off'>, text: string, values: unknown[]): Promise<R[]> {
    const sets = Object.entries(settings).map(([k, v]) => {
      if (!/^[a-z_]+$/.test(k)) throw new Error(`bad planner setting ${k}`);
      return `SET LOCAL ${k} = ${v === 'on' ? 'on' : 'off'}`;
    });
    return this.withClient(async (client) => {
      await client.query(['BEGIN', ...sets].join('; '));
      try {
        const rows = (await client.query<R>(text, values)).rows;
        await client.query('COMMIT');
        return rows;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      }
    });
  }

  async ping(timeoutMs = 2000): Promise<void> {
    await Promise.race([
      this.sequelize.query('SELECT 1'),
      new Promise((_, rej) => setTimeout(() => rej(new Error('database ping timed out')), timeoutMs).unref()),
    ]);
  }

  async close(): Promise<void> {
    if (this._sequelize) {
      await this._sequelize.close().catch(() => undefined);
      this._sequelize = null;
    }
    if (this.embedded) {
      await this.embedded.stop();
      this.embedded = null;
    }
  }
}
