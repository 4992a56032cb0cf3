/**
 * A writer process of the events feed test (events-feed.test.ts): writes callback events through
 * the service's own outbox (enqueueCallbacks) in transactions of 1 to 5 events that stay open for
 * a random 0 to 15 ms after their ids are drawn, so transactions of several writers commit out of
 * id order; about one in eight is rolled back. Prints one JSON line at the end:
 * {writer, committed: [seq...], rolledBack: [seq...]}.
 *
 *   FEED_DB_URL, FEED_APP_ID, FEED_WRITER, FEED_EVENTS (committed events to write)
 */
import { Sequelize } from 'sequelize';
import { enqueueCallbacks } from '@wcs/server';

class Rollback extends Error {}

async function main(): Promise<void> {
  const url = process.env.FEED_DB_URL!;
  const applicationId = Number(process.env.FEED_APP_ID);
  const writer = Number(process.env.FEED_WRITER);
  const target = Number(process.env.FEED_EVENTS);
  const sequelize = new Sequelize(url, { dialect: 'postgres', logging: false, pool: { max: 2 } });
  const committed: number[] = [];
  const rolledBack: number[] = [];
  let seq = 0;
  while (committed.length < target) {
    const n = Math.min(1 + Math.floor(Math.random() * 5), target - committed.length);
    const seqs = Array.from({ length: n }, () => ++seq);
    const abort = Math.random() < 0.125;
    try {
      await sequelize.transaction(async (t) => {
        await enqueueCallbacks(sequelize, t, seqs.map((s) => ({ applicationId, bizType: 'RECHARGE' as const, bizId: writer * 1_000_000 + s, payload: { event: 'feed-test', writer, seq: s, rolledBack: abort } })));
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 16)));
        if (abort) throw new Rollback();
      });
      committed.push(...seqs);
    } catch (e) {
      if (!(e instanceof Rollback)) throw e;
      rolledBack.push(...seqs);
    }
  }
  await sequelize.close();
  process.stdout.write(JSON.stringify({ writer, committed, rolledBack }) + '\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`feed writer failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
