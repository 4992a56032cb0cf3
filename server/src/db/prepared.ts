import type { Transaction } from 'sequelize';
import type * as pg from 'pg';

/**
 * Runs a named statement on the connection of a Sequelize transaction: Postgres parses it once
 * per connection and keeps its plan (Sequelize sends every statement unnamed, parsed and planned
 * anew each time). For the statements on a hot path that run inside a caller's transaction, such
 * as the callback outbox, where planning cost more than executing.
 *
 * The name must be unique to the text: one name, one statement, for the life of the process.
 */
export async function preparedInTransaction<R extends object>(transaction: Transaction, name: string, text: string, values: unknown[]): Promise<R[]> {
  const connection = (transaction as unknown as { connection?: pg.ClientBase }).connection;
  if (!connection || typeof connection.query !== 'function') throw new Error('preparedInTransaction: the transaction has no connection (not begun?)');
  return (await connection.query<R>({ name, text, values })).rows;
}
