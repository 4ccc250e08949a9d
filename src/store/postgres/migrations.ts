import type pg from "pg";
import { facetLexemes, indexEntriesWithoutWords } from "./search-index.js";

/**
 * Versioned PostgreSQL schema (D23, D32). Each entry runs once, in order; schema_migrations records
 * how far a database has come. Never edit a released entry: append one.
 *
 * The first entry is the SQLite schema as its migrations leave it (../migrations.ts), table for table
 * and index for index, with the same column names and row shapes, so both stores share their row
 * mappings and a copy between them is column for column:
 * - Times are bigint Unix milliseconds and flags 0/1 integers, as in SQLite (database.ts reads int8 as
 *   a number); JSON stays text, kept as written, as the store reads it whole.
 * - Keys, ids and names that rows are ordered by are COLLATE "C": SQLite compares text by its bytes, so
 *   the keyset order (D8) and every listing must not follow the server's locale.
 * - BLOB is bytea, REAL is double precision, WITHOUT ROWID tables are plain tables with the same key.
 * - SQLite's triggers become trigger functions; usage is added once per statement, still rounded to
 *   whole nano-USD (D30).
 * A step that needs flowlog's own code (D45's words, split in search-words.ts) is a function of the
 * migrating transaction's client.
 */
export const migrations: readonly (string | ((client: pg.ClientBase) => Promise<void>))[] = [
  `
  CREATE TABLE users (
    id text COLLATE "C" PRIMARY KEY,
    email text NOT NULL UNIQUE,
    plan text NOT NULL CHECK (plan IN ('free', 'pro', 'team', 'enterprise')),
    created_at bigint NOT NULL
  );
  CREATE TABLE workspaces (
    id text COLLATE "C" PRIMARY KEY,
    name text NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE TABLE memberships (
    user_id text COLLATE "C" NOT NULL REFERENCES users (id),
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (id),
    PRIMARY KEY (user_id, workspace_id)
  );
  CREATE INDEX memberships_by_workspace ON memberships (workspace_id, user_id);
  CREATE TABLE api_keys (
    id text COLLATE "C" PRIMARY KEY,
    user_id text COLLATE "C" NOT NULL REFERENCES users (id),
    prefix text NOT NULL,
    -- SHA-256 of the whole key (D5); the key itself is never stored.
    hash bytea NOT NULL UNIQUE,
    created_at bigint NOT NULL,
    last_used_at bigint,
    revoked_at bigint
  );
  CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at);
  CREATE TABLE folders (
    id text COLLATE "C" PRIMARY KEY,
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (id),
    name text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE INDEX folders_by_workspace ON folders (workspace_id, name);
  CREATE TABLE workflows (
    id text COLLATE "C" PRIMARY KEY,
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (id),
    folder_id text COLLATE "C" REFERENCES folders (id),
    name text COLLATE "C" NOT NULL,
    description text NOT NULL DEFAULT '',
    version integer NOT NULL DEFAULT 1,
    state_json text NOT NULL DEFAULT '{}',
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    -- Deleting only marks a workflow: its log entries and executions keep their workflow (D17).
    deleted_at bigint
  );
  CREATE INDEX workflows_by_workspace ON workflows (workspace_id, name);
  CREATE INDEX workflows_by_folder ON workflows (workspace_id, folder_id, name);
  -- Every saved version of a workflow (D13), so an execution can snapshot exactly the one it ran.
  CREATE TABLE workflow_versions (
    workflow_id text COLLATE "C" NOT NULL REFERENCES workflows (id),
    version integer NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    state_json text NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (workflow_id, version)
  );

  -- One row per execution (D17). The list query reads only this table; the heavy JSON columns are
  -- read for the rows of one page (and, being large, live out of line in TOAST).
  CREATE TABLE log_entries (
    id text COLLATE "C" PRIMARY KEY,
    workspace_id text COLLATE "C" NOT NULL,
    workflow_id text COLLATE "C" NOT NULL,
    folder_id text COLLATE "C",
    execution_id text COLLATE "C" NOT NULL UNIQUE,
    -- Whose usage the cost counts against (D12).
    billed_user_id text COLLATE "C",
    level text NOT NULL CHECK (level IN ('info', 'error')),
    trigger text NOT NULL CHECK (trigger IN ('api', 'webhook', 'schedule', 'manual', 'chat')),
    started_at bigint NOT NULL,
    ended_at bigint NOT NULL,
    total_duration_ms bigint NOT NULL,
    cost_total double precision NOT NULL,
    -- {tokens: {prompt, completion, total}, models: {name: {...}}}
    cost_json text NOT NULL,
    files_json text,
    trace_spans_json text NOT NULL DEFAULT '[]',
    final_output_json text
  );
  -- Keyset order (D8) under each common filter, so a page reads only its own rows; a B-tree is read
  -- backwards as well as forwards, so each serves both orders.
  CREATE INDEX log_entries_by_time ON log_entries (workspace_id, started_at, id);
  CREATE INDEX log_entries_by_workflow ON log_entries (workspace_id, workflow_id, started_at, id);
  CREATE INDEX log_entries_by_folder ON log_entries (workspace_id, folder_id, started_at, id);
  CREATE INDEX log_entries_by_level ON log_entries (workspace_id, level, started_at, id);
  CREATE INDEX log_entries_by_trigger ON log_entries (workspace_id, trigger, started_at, id);
  -- Usage of the current month (D12), and the alert rules' windows over a workflow's executions (D21).
  CREATE INDEX log_entries_by_billed_user ON log_entries (billed_user_id, started_at);
  CREATE INDEX log_entries_by_workflow_time ON log_entries (workflow_id, started_at);

  -- The models an execution used, in keyset order, for the model filter.
  CREATE TABLE log_entry_models (
    workspace_id text COLLATE "C" NOT NULL,
    model text COLLATE "C" NOT NULL,
    started_at bigint NOT NULL,
    log_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (workspace_id, model, started_at, log_id)
  );

  -- The exact workflow version an execution ran (D13), stored once per distinct state under the
  -- SHA-256 of its JSON (issue 15); each execution points at its state.
  CREATE TABLE workflow_states (
    hash bytea PRIMARY KEY,
    workflow_state_json text NOT NULL
  );
  CREATE TABLE execution_states (
    execution_id text COLLATE "C" PRIMARY KEY,
    state_hash bytea NOT NULL REFERENCES workflow_states (hash)
  );

  -- Token buckets shared by every process on the database (D11, D12).
  CREATE TABLE rate_limit_buckets (
    key text COLLATE "C" PRIMARY KEY,
    tokens double precision NOT NULL,
    updated_at bigint NOT NULL,
    last_allowed bigint NOT NULL
  );

  -- Cost per user and calendar month (UTC) of the executions billed to them (D12), kept by a trigger in
  -- the transaction of each insert; period_start is the month's first millisecond. Costs are whole
  -- nano-USD (D30): a statement's entries are summed as whole nano-USD, exactly, and the month's sum is
  -- rounded to them at every addition, as SQLite's round(x, 9) does. Once per statement rather than
  -- per row, so a batch adds to each month once; in key order, so concurrent batches lock alike.
  CREATE TABLE usage_periods (
    user_id text COLLATE "C" NOT NULL,
    period_start bigint NOT NULL,
    cost double precision NOT NULL,
    PRIMARY KEY (user_id, period_start)
  );
  CREATE FUNCTION usage_periods_add() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO usage_periods (user_id, period_start, cost)
    SELECT billed_user_id, period_start, sum(round(cost_total * 1e9)) / 1e9
    FROM (
      SELECT billed_user_id, cost_total,
        (extract(epoch FROM date_trunc('month', to_timestamp(started_at / 1000) AT TIME ZONE 'UTC')) * 1000)::bigint
          AS period_start
      FROM added WHERE billed_user_id IS NOT NULL
    ) entry
    GROUP BY 1, 2
    ORDER BY 1, 2
    ON CONFLICT (user_id, period_start)
    DO UPDATE SET cost = round((usage_periods.cost + excluded.cost) * 1e9) / 1e9;
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER usage_periods_add AFTER INSERT ON log_entries
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION usage_periods_add();

  -- Workspace environment variables (D14); the value only as AES-256-GCM ciphertext (D24).
  CREATE TABLE environment_variables (
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (id),
    name text COLLATE "C" NOT NULL,
    sealed_value bytea NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (workspace_id, name)
  );

  -- The triggers of a workflow (D15): its inbound webhook, found by the SHA-256 of its token (D5), and
  -- its schedules, whose timing and pausing Temporal Schedules own.
  CREATE TABLE webhook_triggers (
    workflow_id text COLLATE "C" PRIMARY KEY REFERENCES workflows (id),
    token_hash bytea NOT NULL,
    billed_user_id text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE TABLE workflow_schedules (
    id text COLLATE "C" PRIMARY KEY,
    workflow_id text COLLATE "C" NOT NULL REFERENCES workflows (id),
    cron text NOT NULL,
    billed_user_id text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE INDEX workflow_schedules_by_workflow ON workflow_schedules (workflow_id, created_at, id);

  -- Notification subscriptions of a workspace (D18); secrets only encrypted (D24). D33: the secret a
  -- rotation replaced keeps signing until its expiry. D35: the run of failed deliveries that can
  -- disable an endpoint, its advance notice, and why flowlog disabled it.
  CREATE TABLE notification_subscriptions (
    id text COLLATE "C" PRIMARY KEY,
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (id),
    channel text NOT NULL CHECK (channel IN ('webhook', 'email', 'slack')),
    config_json text NOT NULL,
    secret_sealed bytea,
    all_workflows integer NOT NULL,
    workflow_ids_json text NOT NULL DEFAULT '[]',
    level_filter_json text NOT NULL DEFAULT '[]',
    trigger_filter_json text NOT NULL DEFAULT '[]',
    include_final_output integer NOT NULL DEFAULT 0,
    include_trace_spans integer NOT NULL DEFAULT 0,
    include_rate_limits integer NOT NULL DEFAULT 0,
    include_usage_data integer NOT NULL DEFAULT 0,
    alert_rule_json text,
    active integer NOT NULL DEFAULT 1,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    deleted_at bigint,
    previous_secret_sealed bytea,
    previous_secret_expires_at bigint,
    failing_since bigint,
    failed_deliveries integer NOT NULL DEFAULT 0,
    disabled_reason text,
    disabled_at bigint,
    disable_notice_at bigint,
    last_failure text
  );
  CREATE INDEX notification_subscriptions_by_workspace ON notification_subscriptions (workspace_id, created_at, id);

  -- One delivery per (event, subscription) (D19); the event is kept as sent so a redelivery sends it again.
  CREATE TABLE deliveries (
    id text COLLATE "C" PRIMARY KEY,
    event_id text COLLATE "C" NOT NULL,
    event_type text NOT NULL,
    subscription_id text COLLATE "C" NOT NULL REFERENCES notification_subscriptions (id),
    workspace_id text COLLATE "C" NOT NULL,
    log_id text COLLATE "C",
    event_json text NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    UNIQUE (event_id, subscription_id)
  );
  CREATE INDEX deliveries_by_workspace ON deliveries (workspace_id, created_at, id);
  CREATE INDEX deliveries_by_subscription ON deliveries (subscription_id, created_at, id);

  -- Every attempt of a delivery; a redelivery starts a new series with the same delivery id.
  CREATE TABLE delivery_attempts (
    delivery_id text COLLATE "C" NOT NULL REFERENCES deliveries (id),
    series integer NOT NULL,
    attempt integer NOT NULL,
    started_at bigint NOT NULL,
    duration_ms bigint NOT NULL,
    outcome text NOT NULL CHECK (outcome IN ('succeeded', 'retrying', 'failed')),
    http_status integer,
    response_snippet text,
    error text,
    PRIMARY KEY (delivery_id, series, attempt)
  );

  -- When each (subscription, workflow) alert last fired (D21), claimed by one conditional upsert; a
  -- firing stays until the rule stops holding, and firing and resolution alternate per pair (D34).
  CREATE TABLE alert_state (
    subscription_id text COLLATE "C" NOT NULL REFERENCES notification_subscriptions (id),
    workflow_id text COLLATE "C" NOT NULL,
    rule text NOT NULL,
    last_fired_at bigint NOT NULL,
    last_event_id text NOT NULL,
    reason text NOT NULL,
    status text NOT NULL DEFAULT 'firing' CHECK (status IN ('firing', 'resolved')),
    resolved_at bigint,
    resolution_reason text,
    resolved_event_id text,
    PRIMARY KEY (subscription_id, workflow_id)
  );

  -- Issue 13: every change that can alter who a key is, or which workspaces a user may see, moves this
  -- revision in the same transaction, so a process caching keys and memberships sees it on commit.
  CREATE TABLE auth_revision (id integer PRIMARY KEY CHECK (id = 1), n bigint NOT NULL);
  INSERT INTO auth_revision (id, n) VALUES (1, 0);
  CREATE FUNCTION auth_revision_bump() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE auth_revision SET n = n + 1;
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER auth_revision_key_revoked AFTER UPDATE OF revoked_at, user_id, hash ON api_keys
  FOR EACH ROW EXECUTE FUNCTION auth_revision_bump();
  CREATE TRIGGER auth_revision_key_deleted AFTER DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION auth_revision_bump();
  CREATE TRIGGER auth_revision_user_changed AFTER UPDATE ON users
  FOR EACH ROW EXECUTE FUNCTION auth_revision_bump();
  CREATE TRIGGER auth_revision_user_deleted AFTER DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION auth_revision_bump();
  CREATE TRIGGER auth_revision_member_added AFTER INSERT ON memberships
  FOR EACH ROW EXECUTE FUNCTION auth_revision_bump();
  CREATE TRIGGER auth_revision_member_changed AFTER UPDATE ON memberships
  FOR EACH ROW EXECUTE FUNCTION auth_revision_bump();
  CREATE TRIGGER auth_revision_member_removed AFTER DELETE ON memberships
  FOR EACH ROW EXECUTE FUNCTION auth_revision_bump();

  -- Issue 12: fan-outs to start, written in the transaction of their log entry.
  CREATE TABLE notification_outbox (
    log_id text COLLATE "C" PRIMARY KEY,
    workspace_id text COLLATE "C" NOT NULL,
    workflow_id text COLLATE "C" NOT NULL,
    task_queue text NOT NULL,
    created_at bigint NOT NULL,
    -- Not claimed before this time: its creation, then the end of a claim's lease or a retry's wait.
    not_before bigint NOT NULL
  );
  CREATE INDEX notification_outbox_due ON notification_outbox (not_before);
  `,
  `
  -- Issue 17, the log stats, as in the SQLite schema (../migrations.ts): each model's cost and tokens
  -- beside the model, read once from cost_json for the rows already there, and the time index widened to
  -- what the hours count.
  ALTER TABLE log_entry_models
    ADD COLUMN cost_nano_usd bigint NOT NULL DEFAULT 0,
    ADD COLUMN tokens bigint NOT NULL DEFAULT 0;
  UPDATE log_entry_models AS m
  SET cost_nano_usd = round(coalesce((j.value ->> 'total')::numeric, 0) * 1000000000)::bigint,
    tokens = coalesce((j.value -> 'tokens' ->> 'total')::bigint, 0)
  FROM log_entries l, json_each(l.cost_json::json -> 'models') AS j
  WHERE l.id = m.log_id AND j.key = m.model;
  CREATE INDEX log_entry_models_by_time
    ON log_entry_models (workspace_id, started_at, model, log_id, cost_nano_usd, tokens);
  DROP INDEX log_entries_by_time;
  CREATE INDEX log_entries_by_time ON log_entries (workspace_id, started_at, id, total_duration_ms, level);
  `,
  `
  -- Block outputs parked outside Temporal's payloads while their execution runs, as in the SQLite schema.
  CREATE TABLE parked_outputs (
    execution_id text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    value_json text NOT NULL,
    parked_at bigint NOT NULL,
    PRIMARY KEY (execution_id, key)
  );
  CREATE INDEX parked_outputs_by_time ON parked_outputs (parked_at);
  `,
  `
  -- Issue 13: whether trace_spans_json is exactly the spans' canonical protobuf JSON, as in the SQLite
  -- schema.
  ALTER TABLE log_entries ADD COLUMN trace_spans_canonical integer NOT NULL DEFAULT 0;
  `,
  `
  -- Issue 51, as in the SQLite schema: a delivery may be held (D36); D40's list filters by the last
  -- attempt's HTTP status class, kept on the delivery (rows already there take it from their attempts),
  -- and by status and event type through indexes of their own.
  ALTER TABLE deliveries
    DROP CONSTRAINT deliveries_status_check,
    ADD CONSTRAINT deliveries_status_check CHECK (status IN ('pending', 'held', 'succeeded', 'failed')),
    ADD COLUMN last_http_status integer;
  UPDATE deliveries AS d SET last_http_status = a.http_status
  FROM (SELECT DISTINCT ON (delivery_id) delivery_id, http_status FROM delivery_attempts
    ORDER BY delivery_id, series DESC, attempt DESC) AS a
  WHERE a.delivery_id = d.id AND a.http_status IS NOT NULL;
  CREATE INDEX deliveries_by_status ON deliveries (workspace_id, status, created_at, id);
  CREATE INDEX deliveries_by_subscription_status ON deliveries (subscription_id, status, created_at, id);
  CREATE INDEX deliveries_by_event_type ON deliveries (workspace_id, event_type, created_at, id);
  -- A subscription belongs to one workspace, so the list's workspace condition keeps every row of a
  -- subscription's. Told so, the planner no longer takes it for a further filter, expects a subscription's
  -- rows to be as many as they are, and reads a page along the subscription's index instead of sorting.
  CREATE STATISTICS deliveries_subscription_workspace (dependencies) ON subscription_id, workspace_id
    FROM deliveries;
  `,
  `
  -- D38 and D39: event types, pace and sealed webhook headers, as in the SQLite schema.
  ALTER TABLE notification_subscriptions ADD COLUMN event_types_json text NOT NULL
    DEFAULT '["workflow.execution.completed","workflow.alert.fired","workflow.alert.resolved"]';
  ALTER TABLE notification_subscriptions ADD COLUMN throttle_per_second integer;
  ALTER TABLE notification_subscriptions ADD COLUMN headers_sealed bytea;
  `,
  `
  -- D36: hold state, event time and the exhausted mark, as in the SQLite schema.
  ALTER TABLE notification_subscriptions ADD COLUMN hold_state text NOT NULL DEFAULT 'active'
    CHECK (hold_state IN ('active', 'held', 'draining'));
  ALTER TABLE notification_subscriptions ADD COLUMN held_at bigint;
  ALTER TABLE notification_subscriptions ADD COLUMN exhausted_in_row integer NOT NULL DEFAULT 0;
  ALTER TABLE deliveries ADD COLUMN event_at bigint;
  UPDATE deliveries SET event_at = created_at;
  ALTER TABLE deliveries ADD COLUMN exhausted integer NOT NULL DEFAULT 0;
  CREATE INDEX deliveries_in_hold_order ON deliveries (subscription_id, status, event_at, id);
  `,
  `
  -- Issue 52: the indexes deleting entries finds their dependants by, and D41's workspace setting, as in
  -- the SQLite schema.
  CREATE INDEX deliveries_by_log ON deliveries (log_id);
  CREATE INDEX execution_states_by_state ON execution_states (state_hash);
  ALTER TABLE workspaces ADD COLUMN retention_days integer;
  `,
  `
  -- D42: the archive's catalogue, as in the SQLite schema.
  CREATE TABLE archives (
    workspace_id text NOT NULL,
    day text NOT NULL,
    object_url text NOT NULL,
    entries bigint NOT NULL,
    bytes bigint NOT NULL,
    sha256 text NOT NULL,
    written_at bigint NOT NULL,
    PRIMARY KEY (workspace_id, day)
  );
  `,
  `
  -- D44: the order entries are written in, which a tail follows whatever their startedAt. A sequence's
  -- nextval is not commit order here (a transaction that took 10 may commit after one that took 11), so
  -- each row also records its transaction: a reader takes only rows of transactions older than its
  -- snapshot's xmin, all of them settled, in (xid, seq) order, and nothing can later commit before that
  -- point. Entries written before take their numbers in startedAt order, under transaction 0. SQLite's
  -- counter row is kept here too, unused (the sequence numbers), so the two schemas stay one (issue 15).
  CREATE TABLE log_entry_sequence (last bigint NOT NULL);
  CREATE SEQUENCE log_entry_seq;
  ALTER TABLE log_entries ADD COLUMN seq bigint, ADD COLUMN xid xid8;
  UPDATE log_entries l SET seq = r.n, xid = '0'
    FROM (SELECT id, row_number() OVER (ORDER BY started_at, id) AS n FROM log_entries) r
    WHERE r.id = l.id;
  SELECT setval('log_entry_seq', (SELECT coalesce(max(seq), 0) + 1 FROM log_entries), false);
  ALTER TABLE log_entries
    ALTER COLUMN seq SET DEFAULT nextval('log_entry_seq'), ALTER COLUMN seq SET NOT NULL,
    ALTER COLUMN xid SET DEFAULT pg_current_xact_id(), ALTER COLUMN xid SET NOT NULL;
  CREATE INDEX log_entries_in_write_order ON log_entries (xid, seq);
  CREATE INDEX log_entries_by_workspace_in_write_order ON log_entries (workspace_id, xid, seq);
  `,
  `
  -- D47: the version each execution ran, beside its snapshot (NULL for the executions logged before), and
  -- which execution a retry retries, written as the retry starts; by the retried one too.
  ALTER TABLE execution_states ADD COLUMN workflow_version integer;
  CREATE TABLE execution_retries (
    execution_id text COLLATE "C" PRIMARY KEY,
    retry_of text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE INDEX execution_retries_by_original ON execution_retries (retry_of, created_at);
  `,
  async (client) => {
    // D45: each entry's words as a tsvector of them as they are (search-index.ts), apart from
    // log_entries, whose columns are SQLite's (a copy goes column for column); its rows go with their
    // entry. Existing entries are indexed before the GIN index is built over them.
    await client.query(`CREATE TABLE log_search (
      log_id text COLLATE "C" PRIMARY KEY REFERENCES log_entries (id) ON DELETE CASCADE,
      words tsvector NOT NULL
    )`);
    await indexEntriesWithoutWords(client);
    await client.query("CREATE INDEX log_search_by_word ON log_search USING gin (words)");
  },
  `
  -- D50: the execution span's W3C trace context with the intent to notify, as in ../migrations.ts.
  ALTER TABLE notification_outbox ADD COLUMN trace_parent text, ADD COLUMN trace_state text;
  `,
  async (client) => {
    // D45: each entry's level and trigger among its words (search-index.ts's facetLexemes), so a search
    // with those filters is one intersection in the GIN index. The index is built again over the rows
    // rather than updated row by row.
    await client.query("DROP INDEX log_search_by_word");
    await client.query(
      `UPDATE log_search s SET words = s.words || array_to_tsvector(${facetLexemes("l.level", "l.trigger")})
       FROM log_entries l WHERE l.id = s.log_id`,
    );
    await client.query("CREATE INDEX log_search_by_word ON log_search USING gin (words)");
  },
  `
  -- Issue 53: whether cost_json is exactly the cost's canonical protobuf JSON, as in the SQLite schema.
  ALTER TABLE log_entries ADD COLUMN cost_canonical integer NOT NULL DEFAULT 0;
  `,
];

/** Any constant of flowlog's own: every process migrating this database takes the same lock. */
const migrationLock = 0x666c6f77; // "flow"

/**
 * Applies the migrations the database has not seen, all in one transaction under a transaction-level
 * advisory lock: processes starting at once queue on the lock, the first migrates, the others then
 * find nothing left to do (issue 15). A process that dies mid-way leaves no half-applied version, and
 * its lock ends with its session. `upTo` stops at an older version, for tests.
 */
export async function migrate(client: pg.ClientBase, upTo = migrations.length): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [migrationLock]);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)",
    );
    const { rows } = await client.query<{ current: number }>(
      "SELECT coalesce(max(version), 0) AS current FROM schema_migrations",
    );
    const current = rows[0]?.current ?? 0;
    if (current > migrations.length) {
      throw new Error(
        `the database is at schema version ${current}, newer than this flowlog (${migrations.length})`,
      );
    }
    for (const [index, step] of migrations.slice(current, upTo).entries()) {
      if (typeof step === "string") await client.query(step);
      else await step(client);
      await client.query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)", [
        current + index + 1,
        Date.now(),
      ]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  }
}
