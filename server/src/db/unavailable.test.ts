import { expect } from 'chai';
import { Client } from 'pg';
import { Sequelize, UniqueConstraintError, ConnectionAcquireTimeoutError, ConnectionError, ConnectionRefusedError, DatabaseError } from 'sequelize';
import { ChainRpcError, HttpJsonError, WcsError } from '@wcs/core';
import { createTestDatabase, freePort, type TestDatabase } from '../testing';
import { toWcsError } from '../http/app';
import { redact } from '../config/logger';
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailable, isDatabaseUnavailable } from './unavailable';

/** An error of the shape node-postgres gives (pg-protocol's DatabaseError: name "error", a SQLSTATE code). */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { name: 'error', code, severity: 'FATAL' });
}

function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, syscall: 'connect', address: '127.0.0.1', port: 5432 });
}

describe('databaseUnavailable: database connectivity failures', () => {
  it('the SQLSTATEs of a server that cannot serve now, socket failures and pg\'s uncoded connection messages', () => {
    const cases: Array<[Error, string]> = [
      [pgError('57P01', 'terminating connection due to administrator command'), '57P01'],
      [pgError('57P02', 'terminating connection because of crash of another server process'), '57P02'],
      [pgError('57P03', 'the database system is starting up'), '57P03'],
      [pgError('53300', 'sorry, too many clients already'), '53300'],
      [pgError('08006', 'connection failure'), '08006'],
      [pgError('08001', 'could not connect'), '08001'],
      [socketError('ECONNREFUSED'), 'ECONNREFUSED'],
      [socketError('ECONNRESET'), 'ECONNRESET'],
      [socketError('ETIMEDOUT'), 'ETIMEDOUT'],
      [new Error('Connection terminated unexpectedly'), 'CONNECTION_TERMINATED'],
      [new Error('Connection terminated due to connection timeout'), 'CONNECTION_TERMINATED'],
      [new Error('Client has encountered a connection error and is not queryable'), 'CONNECTION_TERMINATED'],
      [new Error('timeout exceeded when trying to connect'), 'CONNECTION_TERMINATED'],
    ];
    for (const [e, code] of cases) expect(databaseUnavailable(e), e.message).to.deep.equal({ code, reason: e.message });
  });

  it('found through Sequelize\'s wrappers (parent / original) and any cause chain; the most specific code wins', () => {
    const refused = new ConnectionRefusedError(socketError('ECONNREFUSED'));
    expect(databaseUnavailable(refused)?.code).to.equal('ECONNREFUSED');
    const inQuery = new DatabaseError(Object.assign(pgError('57P01', 'terminating connection due to administrator command'), { sql: 'SELECT 1', parameters: [] }) as never);
    expect(databaseUnavailable(inQuery)?.code).to.equal('57P01');
    // a Sequelize connection error with nothing more specific below it: its name
    expect(databaseUnavailable(new ConnectionAcquireTimeoutError(new Error('ResourceRequest timed out')))?.code).to.equal('SequelizeConnectionAcquireTimeoutError');
    expect(databaseUnavailable(new ConnectionError(pgError('28P01', 'password authentication failed')))?.code).to.equal('SequelizeConnectionError');
    const wrapped = new WcsError('INTERNAL_ERROR', { cause: new Error('claim failed', { cause: inQuery }) });
    expect(databaseUnavailable(wrapped)?.code).to.equal('57P01');
    expect(databaseUnavailable(new AggregateError([new Error('x'), socketError('ECONNREFUSED')]))?.code).to.equal('ECONNREFUSED');
  });

  it('not: statement errors, plain faults, and a chain node or HTTP endpoint that refuses connections', () => {
    const notThese: unknown[] = [
      new UniqueConstraintError({ message: 'dup' }),
      new DatabaseError(Object.assign(pgError('42601', 'syntax error at or near "SELEC"'), { sql: 'SELEC', parameters: [] }) as never),
      pgError('40001', 'could not serialize access'),
      pgError('57014', 'canceling statement due to statement timeout'),
      new TypeError("Cannot read properties of undefined (reading 'x')"),
      new Error('Connection terminated unexpectedly, maybe'),
      new ChainRpcError('RPC_UNAVAILABLE', 'ETH RPC unavailable', { cause: socketError('ECONNREFUSED') }),
      new WcsError('INTERNAL_ERROR', { cause: new ChainRpcError('RPC_UNAVAILABLE', 'x', { cause: socketError('ECONNRESET') }) }),
      new HttpJsonError('REFUSED', 'HTTP 400', { cause: socketError('ECONNRESET') }),
      null, undefined, 'ECONNREFUSED', 42, { code: 57 },
    ];
    for (const e of notThese) expect(isDatabaseUnavailable(e), String((e as Error)?.message ?? e)).to.equal(false);
  });

  it('a cyclic cause chain ends', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    a.cause = new Error('b', { cause: a });
    expect(databaseUnavailable(a)).to.equal(null);
  });
});

describe('database outages in the API envelope and the log', () => {
  it('toWcsError: 503 SERVICE_UNAVAILABLE with Retry-After, the cause kept; other faults stay INTERNAL_ERROR', () => {
    for (const thrown of [new ConnectionRefusedError(socketError('ECONNREFUSED')), pgError('57P03', 'the database system is starting up'), new Error('Connection terminated unexpectedly')]) {
      const { error, fault } = toWcsError(thrown);
      expect({ code: error.code, http: error.httpStatus, fault, headers: error.headers, cause: error.cause }).to.deep.equal({
        code: 1000009002, http: 503, fault: true, headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) }, cause: thrown,
      });
    }
    expect(toWcsError(pgError('42601', 'syntax error')).error.code).to.equal(1000009001);
    // a SERVICE_UNAVAILABLE raised elsewhere (the shared rate bucket away) gets a Retry-After too
    const bucket = toWcsError(new WcsError('SERVICE_UNAVAILABLE', { cause: new Error('redis down') })).error;
    expect({ code: bucket.code, headers: bucket.headers }).to.deep.equal({ code: 1000009002, headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) } });
  });

  it('the log record of a connectivity failure has its code and message, no stack; a fault keeps its stack', () => {
    const inQuery = new DatabaseError(Object.assign(pgError('57P01', 'terminating connection due to administrator command'), { sql: 'SELECT 1', parameters: [] }) as never);
    const rec = redact({ error: inQuery }) as { error: Record<string, unknown> };
    expect(rec.error).to.deep.equal({ name: 'SequelizeDatabaseError', code: '57P01', message: 'terminating connection due to administrator command' });
    const wrapped = redact(new WcsError('SERVICE_UNAVAILABLE', { cause: new ConnectionRefusedError(socketError('ECONNREFUSED')) })) as Record<string, unknown>;
    expect(wrapped).to.deep.equal({ name: 'WcsError', code: 'ECONNREFUSED', message: 'Service temporarily unavailable', reason: 'connect ECONNREFUSED 127.0.0.1:5432' });
    const fault = redact(pgError('42601', 'syntax error')) as Record<string, unknown>;
    expect(fault.stack).to.be.a('string');
  });
});

describe('databaseUnavailable on the errors a real Postgres and real drivers give', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db?.drop();
  });

  /** Runs fn with a backend pid of a fresh connection, and terminates that backend from another while fn's query runs. */
  async function terminatedWhile(run: (pid: number) => Promise<unknown>, pidOf: () => Promise<number>): Promise<unknown> {
    const pid = await pidOf();
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    try {
      const p = run(pid).then(() => null, (e: unknown) => e);
      // wait until the backend runs the sleep, then terminate it (57P01 admin_shutdown, as a fast shutdown does)
      for (let i = 0; i < 100; i++) {
        const r = await admin.query<{ n: string }>(`SELECT count(*)::text AS n FROM pg_stat_activity WHERE pid = $1 AND query LIKE '%pg_sleep%' AND state = 'active'`, [pid]);
        if (r.rows[0]!.n === '1') break;
        await new Promise((res) => setTimeout(res, 20));
      }
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      return await p;
    } finally {
      await admin.end();
    }
  }

  it('Sequelize: a refused connection, a query whose backend is terminated, and the pool afterwards', async () => {
    const refusedUrl = new URL(db.url);
    refusedUrl.port = String(await freePort());
    const nowhere = new Sequelize(refusedUrl.toString(), { dialect: 'postgres', logging: false, pool: { max: 1, acquire: 2000 } });
    const refused = await nowhere.query('SELECT 1').then(() => null, (e: unknown) => e);
    await nowhere.close();
    expect(databaseUnavailable(refused), String(refused)).to.deep.include({ code: 'ECONNREFUSED' });

    const sequelize = new Sequelize(db.url, { dialect: 'postgres', logging: false, pool: { max: 1 } });
    try {
      const err = await terminatedWhile(
        () => sequelize.query('SELECT pg_sleep(10)'),
        async () => Number(((await sequelize.query('SELECT pg_backend_pid() AS pid'))[0] as Array<{ pid: number }>)[0]!.pid),
      );
      expect(err, 'the query failed').to.be.instanceOf(Error);
      expect(databaseUnavailable(err), String(err)).to.not.equal(null);
      expect(toWcsError(err).error.code).to.equal(1000009002);
      // the pool drops the dead connection: queries work again without a restart. The pool learns of
      // the terminated backend from the socket's close, which on a loaded machine can come after the
      // failed query has returned: the query right after may still get that connection (and fail
      // with "Connection terminated"), never more than once
      const failures: unknown[] = [];
      let rows: unknown = null;
      for (let i = 0; i < 3 && rows === null; i++) {
        rows = await sequelize.query('SELECT 1 AS one').then(([r]) => r, (e: unknown) => { failures.push(e); return null; });
        if (rows === null) await new Promise((r) => setTimeout(r, 200));
      }
      expect(rows, `the pool recovered: ${failures.map(String).join('; ')}`).to.deep.equal([{ one: 1 }]);
      expect(failures.length, 'at most the one query that raced the close').to.be.at.most(1);
      for (const f of failures) expect(databaseUnavailable(f), String(f)).to.not.equal(null);
    } finally {
      await sequelize.close();
    }
  });

  it('node-postgres: a client whose backend is terminated mid-query, and the same client afterwards', async () => {
    const client = new Client({ connectionString: db.url });
    const errors: unknown[] = [];
    client.on('error', (e) => errors.push(e));
    await client.connect();
    try {
      const err = await terminatedWhile(() => client.query('SELECT pg_sleep(10)'), async () => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
      expect(databaseUnavailable(err), String(err)).to.not.equal(null);
      const after = await client.query('SELECT 1').then(() => null, (e: unknown) => e);
      expect(after, 'a dead client refuses queries').to.be.instanceOf(Error);
      expect(databaseUnavailable(after), String(after)).to.not.equal(null);
      for (const e of errors) expect(databaseUnavailable(e), String(e)).to.not.equal(null);
    } finally {
      await client.end().catch(() => undefined);
    }
  });
});
