import type { Migration } from '../db/migrations';

/**
 * Migration 15: one event store for the dispatcher and the events feed (docs/callbacks.md,
 * "Storage"; docs/events-feed.md).
 *
 * - `callback_tasks` is the durable event store: one row per event, written in the business
 *   change's transaction (the outbox). Its indexes cover only columns that never change, so the
 *   one update a delivery makes to it (the spec's status, retryTimes, last response...) is a
 *   HOT update (no index entry written), and its pages keep room for one (fillfactor 80).
 * - `tx_id`, the writing transaction's id, orders the feed: a reader lists only events of
 *   transactions that have ended (older than its snapshot's xmin), so an event committed after
 *   a reader passed its position can never land behind the reader's cursor.
 * - `callback_queue` is the claim/lease table: one narrow row per task that still has a delivery
 *   to make (first delivery or a retry), deleted once the task is settled. Only `due_at` is
 *   indexed; the lease (owner, until) is not, so a claim is a HOT update, and a lease left by a
 *   killed process is claimed again once it has run out. PROCESSING is not stored: a task is
 *   PROCESSING exactly while its queue row carries a lease_owner.
 * - `callback_attempts` loses its foreign keys: an attempt row is only written by the statement
 *   that updates its task, so the per-row checks bought nothing on the hottest path; so does
 *   `callback_tasks.application_id` (written only by the outbox for the application whose change
 *   it records), whose check locked the application's row in every writing transaction.
 * - `callback_task_states` is the view listings read: the task with its derived status and,
 *   while queued, its due time and lease.
 * - `callback_pacing`: the next free send slot per (application, endpoint) for applications
 *   with a delivery rate limit (`applications.callback_rate_limit`, deliveries per second per
 *   endpoint), shared by every dispatcher process.
 * - `callback_feed_horizons`: per application, the position below which the retention job
 *   pruned events; a cursor below it is EVENT_CURSOR_EXPIRED.
 */
export const CALLBACK_STORE_MIGRATION: Migration = {
  version: 15,
  name: 'callback event store: queue and lease table, HOT task updates, feed order, pacing, retention horizon',
  sql: `
CREATE TABLE callback_queue (
  task_id        BIGINT PRIMARY KEY,
  application_id INTEGER NOT NULL,
  -- scheme://host:port of the task's URL, lower-case: the unit of the per-endpoint caps
  endpoint       VARCHAR(2048) COLLATE "C" NOT NULL,
  -- when the next attempt is due
  due_at         TIMESTAMPTZ NOT NULL,
  -- set while a dispatcher holds the row; not indexed, so a claim is a HOT update, and a lease
  -- left by a killed process is taken again once lease_until has passed
  lease_owner    VARCHAR(64) NULL,
  lease_until    TIMESTAMPTZ NULL
) WITH (fillfactor = 50);
CREATE INDEX callback_queue_due ON callback_queue (due_at);

INSERT INTO callback_queue (task_id, application_id, endpoint, due_at, lease_owner, lease_until)
SELECT id, application_id, endpoint, coalesce(due_at, created_at),
       CASE WHEN status = 'PROCESSING' THEN lease_owner END, CASE WHEN status = 'PROCESSING' THEN coalesce(lease_until, now()) END
  FROM callback_tasks
 WHERE status = 'PROCESSING' OR (status IN ('WAITING','FAILED') AND due_at IS NOT NULL);
UPDATE callback_tasks SET status = CASE WHEN next_retry_time IS NULL THEN 'WAITING' ELSE 'FAILED' END WHERE status = 'PROCESSING';

DROP INDEX callback_tasks_due;
DROP INDEX callback_tasks_leased;
ALTER TABLE callback_tasks DROP COLUMN due_at, DROP COLUMN lease_owner, DROP COLUMN lease_until, DROP COLUMN endpoint;
ALTER TABLE callback_tasks ADD COLUMN tx_id xid8 NOT NULL DEFAULT pg_current_xact_id();
ALTER TABLE callback_tasks SET (fillfactor = 80);
CREATE INDEX callback_tasks_feed ON callback_tasks (application_id, tx_id, id);

-- an attempt row is written only in the statement that updates its task (queue-store.ts), and
-- retention removes both together: no per-row foreign key checks on the delivery path
ALTER TABLE callback_attempts DROP CONSTRAINT IF EXISTS callback_attempts_callback_task_id_fkey;
ALTER TABLE callback_attempts DROP CONSTRAINT IF EXISTS callback_attempts_application_id_fkey;
-- the outbox writes tasks only for the application whose change it records (applications are
-- never deleted): the per-row check took a KEY SHARE lock on the application's row in every
-- writing transaction, a multixact when several write at once
ALTER TABLE callback_tasks DROP CONSTRAINT IF EXISTS callback_tasks_application_id_fkey;

-- deliveries per second to each endpoint of the application; NULL: no limit
ALTER TABLE applications ADD COLUMN callback_rate_limit INTEGER NULL CHECK (callback_rate_limit IS NULL OR callback_rate_limit BETWEEN 1 AND 10000);
CREATE TABLE callback_pacing (
  application_id INTEGER NOT NULL,
  endpoint       VARCHAR(2048) COLLATE "C" NOT NULL,
  next_at        TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (application_id, endpoint)
);

-- the spec's task as listed: PROCESSING while a dispatcher holds the queue row
CREATE VIEW callback_task_states AS
SELECT t.id, t.application_id, t.biz_type, t.biz_id, t.url, t.url_source, t.body,
       CASE WHEN q.lease_owner IS NOT NULL THEN 'PROCESSING' ELSE t.status END AS status,
       t.retry_times, t.max_retry_times, t.attempts, t.next_retry_time, t.last_response_summary, t.last_error,
       t.created_at, t.updated_at, t.tx_id,
       q.due_at, q.lease_owner, q.lease_until, q.endpoint
  FROM callback_tasks t LEFT JOIN callback_queue q ON q.task_id = t.id;

-- the dispatcher's claim (queue-store.ts claimDue) as one call: one round trip, its plans cached
-- per connection (generic plans: planning these statements cost twice what running them does), and
-- an ordered index scan on callback_queue_due whatever the statistics say. Due rows are chosen
-- without locking (each endpoint's room, at most the limit), then only those are locked and
-- leased; rows another process holds are passed over in a further pass (at most three).
CREATE FUNCTION callback_claim(p_owner text, p_now timestamptz, p_lease_ms int, p_full text[], p_limit int,
                               p_room_endpoints text[], p_room_n int[], p_default_room int)
RETURNS TABLE (id text, application_id int, biz_type text, body bytea, retry_times int, max_retry_times int, attempts int,
               is_retry boolean, url text, endpoint text, api_key text, environment text, rate int, due_time timestamptz)
LANGUAGE plpgsql
SET enable_bitmapscan = off
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $fn$
#variable_conflict use_column
DECLARE
  v_chosen bigint[];
  v_ids bigint[];
  v_eps text[];
  v_leased boolean[];
  v_due timestamptz[];
  v_got_ids bigint[] := '{}';
  v_got_eps text[] := '{}';
  v_got_leased boolean[] := '{}';
  v_got_due timestamptz[] := '{}';
  v_skip bigint[] := '{}';
  v_pass int := 0;
BEGIN
  LOOP
    v_pass := v_pass + 1;
    -- due rows in due order, read without locking; each endpoint's room (less what an earlier pass
    -- took), at most the limit: only the rows taken are locked
    SELECT coalesce(array_agg(r.task_id ORDER BY r.due_at, r.task_id), '{}') INTO v_chosen
      FROM (SELECT c.task_id, c.due_at, c.endpoint, row_number() OVER (PARTITION BY c.endpoint ORDER BY c.due_at, c.task_id) AS rn
              FROM (SELECT cq.task_id, cq.endpoint, cq.due_at FROM callback_queue cq
                     WHERE cq.due_at <= p_now
                       AND (cq.lease_owner IS NULL OR cq.lease_until < now())
                       AND cq.endpoint <> ALL(p_full)
                       AND cq.task_id <> ALL(v_skip)
                     ORDER BY cq.due_at LIMIT p_limit - cardinality(v_got_ids)) c) r
      LEFT JOIN unnest(p_room_endpoints, p_room_n) AS room(endpoint, n) ON room.endpoint = r.endpoint
     WHERE r.rn <= coalesce(room.n, p_default_room) - (SELECT count(*) FROM unnest(v_got_eps) AS g(e) WHERE g.e = r.endpoint);
    EXIT WHEN cardinality(v_chosen) = 0;
    -- lease them: a row another process holds locked is skipped, one it leased since is re-checked out
    WITH l AS (
      SELECT q.task_id, q.due_at, q.lease_owner FROM callback_queue q
       WHERE q.task_id = ANY(v_chosen) AND q.due_at <= p_now AND (q.lease_owner IS NULL OR q.lease_until < now())
       FOR UPDATE SKIP LOCKED
    ), u AS (
      UPDATE callback_queue q SET lease_owner = p_owner, lease_until = now() + p_lease_ms * interval '1 millisecond'
        FROM l WHERE q.task_id = l.task_id
      RETURNING q.task_id, q.endpoint::text AS endpoint, l.lease_owner IS NOT NULL AS leased, l.due_at
    )
    SELECT coalesce(array_agg(u.task_id), '{}'), coalesce(array_agg(u.endpoint), '{}'), coalesce(array_agg(u.leased), '{}'), coalesce(array_agg(u.due_at), '{}')
      INTO v_ids, v_eps, v_leased, v_due FROM u;
    v_got_ids := v_got_ids || v_ids;
    v_got_eps := v_got_eps || v_eps;
    v_got_leased := v_got_leased || v_leased;
    v_got_due := v_got_due || v_due;
    -- all taken, or the limit reached, or enough passes: done; else what another process holds is
    -- passed over and the next rows are chosen
    EXIT WHEN cardinality(v_ids) = cardinality(v_chosen) OR cardinality(v_got_ids) >= p_limit OR v_pass >= 3;
    v_skip := v_skip || ARRAY(SELECT x FROM unnest(v_chosen) AS x WHERE x <> ALL(v_ids));
  END LOOP;
  RETURN QUERY
  SELECT t.id::text, t.application_id, t.biz_type::text, t.body, t.retry_times, t.max_retry_times, t.attempts,
         (t.next_retry_time IS NOT NULL),
         (CASE WHEN t.url_source = 'APPLICATION'
               THEN coalesce((SELECT ac.url FROM application_callbacks ac WHERE ac.application_id = t.application_id AND ac.biz_type = t.biz_type), '')
               ELSE t.url END)::text,
         g.endpoint, a.api_key::text, a.environment::text, a.callback_rate_limit,
         CASE WHEN g.leased THEN coalesce(t.next_retry_time, t.created_at) ELSE g.due_at END
    FROM unnest(v_got_ids, v_got_eps, v_got_leased, v_got_due) AS g(task_id, endpoint, leased, due_at)
    JOIN callback_tasks t ON t.id = g.task_id
    JOIN applications a ON a.id = t.application_id
   ORDER BY g.due_at, g.task_id;
END
$fn$;

CREATE TABLE callback_feed_horizons (
  application_id INTEGER PRIMARY KEY REFERENCES applications(id),
  tx_id          xid8 NOT NULL,
  task_id        BIGINT NOT NULL,
  pruned_at      TIMESTAMPTZ NOT NULL
);
`,
};
