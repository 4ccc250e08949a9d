import type { Database } from "better-sqlite3";

/**
 * Versioned schema (D23). Each entry runs once, in order, inside a transaction, and PRAGMA
 * user_version records how far a database has come. Never edit a released entry: append one.
 *
 * Times are integer Unix milliseconds; clients see them through util/time (D7).
 */
export const migrations: readonly string[] = [
  `
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL CHECK (plan IN ('free', 'pro', 'team', 'enterprise')),
    created_at INTEGER NOT NULL
  );
  CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE memberships (
    user_id TEXT NOT NULL REFERENCES users (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    PRIMARY KEY (user_id, workspace_id)
  ) WITHOUT ROWID;
  CREATE INDEX memberships_by_workspace ON memberships (workspace_id, user_id);
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    prefix TEXT NOT NULL,
    -- SHA-256 of the whole key (D5); the key itself is never stored.
    hash BLOB NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER
  );
  CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at);
  CREATE TABLE folders (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE workflows (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    folder_id TEXT REFERENCES folders (id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    version INTEGER NOT NULL DEFAULT 1,
    state_json TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX workflows_by_workspace ON workflows (workspace_id, name);

  -- One row per execution (D17). The list query reads only this table; the heavy JSON columns
  -- are read for the rows of one page.
  CREATE TABLE log_entries (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    folder_id TEXT,
    execution_id TEXT NOT NULL UNIQUE,
    -- Whose usage the cost counts against (D12).
    billed_user_id TEXT,
    level TEXT NOT NULL CHECK (level IN ('info', 'error')),
    trigger TEXT NOT NULL CHECK (trigger IN ('api', 'webhook', 'schedule', 'manual', 'chat')),
    started_at INTEGER NOT NULL,
    ended_at INTEGER NOT NULL,
    total_duration_ms INTEGER NOT NULL,
    cost_total REAL NOT NULL,
    -- {tokens: {prompt, completion, total}, models: {name: {...}}}
    cost_json TEXT NOT NULL,
    files_json TEXT,
    trace_spans_json TEXT NOT NULL DEFAULT '[]',
    final_output_json TEXT
  );
  -- Keyset order (D8) under each common filter, so a page reads only its own rows.
  CREATE INDEX log_entries_by_time ON log_entries (workspace_id, started_at, id);
  CREATE INDEX log_entries_by_workflow ON log_entries (workspace_id, workflow_id, started_at, id);
  CREATE INDEX log_entries_by_folder ON log_entries (workspace_id, folder_id, started_at, id);
  CREATE INDEX log_entries_by_level ON log_entries (workspace_id, level, started_at, id);
  CREATE INDEX log_entries_by_trigger ON log_entries (workspace_id, trigger, started_at, id);
  -- Usage of the current month (D12).
  CREATE INDEX log_entries_by_billed_user ON log_entries (billed_user_id, started_at);

  -- The models an execution used, in keyset order, for the model filter.
  CREATE TABLE log_entry_models (
    workspace_id TEXT NOT NULL,
    model TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    log_id TEXT NOT NULL,
    PRIMARY KEY (workspace_id, model, started_at, log_id)
  ) WITHOUT ROWID;

  -- The exact workflow version an execution ran (D13).
  CREATE TABLE execution_snapshots (
    execution_id TEXT PRIMARY KEY,
    workflow_state_json TEXT NOT NULL
  ) WITHOUT ROWID;

  -- Token buckets shared by every process on the machine (D11, D12).
  CREATE TABLE rate_limit_buckets (
    key TEXT PRIMARY KEY,
    tokens REAL NOT NULL,
    updated_at INTEGER NOT NULL,
    last_allowed INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  `
  -- Cost per user and calendar month (UTC) of the executions billed to them (D12), so the limits object
  -- in every response reads one row instead of summing a user's log entries. A trigger adds each new entry
  -- in the same transaction as its insert; entries are written once and never changed (D17), so a job that
  -- ever deletes or edits them must adjust this table too. period_start is the month's first millisecond.
  CREATE TABLE usage_periods (
    user_id TEXT NOT NULL,
    period_start INTEGER NOT NULL,
    cost REAL NOT NULL,
    PRIMARY KEY (user_id, period_start)
  ) WITHOUT ROWID;

  INSERT INTO usage_periods (user_id, period_start, cost)
  SELECT billed_user_id, unixepoch(started_at / 1000, 'unixepoch', 'start of month') * 1000, sum(cost_total)
  FROM log_entries WHERE billed_user_id IS NOT NULL GROUP BY 1, 2;

  CREATE TRIGGER usage_periods_add AFTER INSERT ON log_entries WHEN NEW.billed_user_id IS NOT NULL
  BEGIN
    INSERT INTO usage_periods (user_id, period_start, cost)
    VALUES (NEW.billed_user_id, unixepoch(NEW.started_at / 1000, 'unixepoch', 'start of month') * 1000,
      NEW.cost_total)
    ON CONFLICT (user_id, period_start) DO UPDATE SET cost = cost + excluded.cost;
  END;
  `,
  `
  -- A snapshot is a kilobyte or more: in a WITHOUT ROWID table each one spilled into an overflow page of
  -- its own, mostly empty. A rowid table packs them (seeding 100k executions: 22 s -> 9 s, 7.8 -> 5.2 KB a row).
  CREATE TABLE execution_snapshots_packed (
    execution_id TEXT PRIMARY KEY,
    workflow_state_json TEXT NOT NULL
  );
  INSERT INTO execution_snapshots_packed SELECT execution_id, workflow_state_json FROM execution_snapshots;
  DROP TABLE execution_snapshots;
  ALTER TABLE execution_snapshots_packed RENAME TO execution_snapshots;
  `,
  `
  -- Every saved version of a workflow (D13), so an execution can snapshot exactly the one it ran. The
  -- workflows row stays the head (current version and folder) that lists read without a join.
  CREATE TABLE workflow_versions (
    workflow_id TEXT NOT NULL REFERENCES workflows (id),
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    state_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (workflow_id, version)
  );
  INSERT INTO workflow_versions (workflow_id, version, name, description, state_json, created_at)
  SELECT id, version, name, description, state_json, updated_at FROM workflows;

  -- Deleting only marks a workflow: its log entries and executions keep their workflow (D17).
  ALTER TABLE workflows ADD COLUMN deleted_at INTEGER;
  CREATE INDEX workflows_by_folder ON workflows (workspace_id, folder_id, name);
  CREATE INDEX folders_by_workspace ON folders (workspace_id, name);

  -- Workspace environment variables (D14); the value only as AES-256-GCM ciphertext (D24).
  CREATE TABLE environment_variables (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name TEXT NOT NULL,
    sealed_value BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, name)
  ) WITHOUT ROWID;
  `,
  `
  -- The triggers of a workflow (D15): its inbound webhook, found by the SHA-256 of its token (shown once,
  -- like an API key, D5), and its schedules, whose timing and pausing Temporal Schedules own.
  CREATE TABLE webhook_triggers (
    workflow_id TEXT PRIMARY KEY REFERENCES workflows (id),
    token_hash BLOB NOT NULL,
    billed_user_id TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE workflow_schedules (
    id TEXT PRIMARY KEY,
    workflow_id TEXT NOT NULL REFERENCES workflows (id),
    cron TEXT NOT NULL,
    billed_user_id TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX workflow_schedules_by_workflow ON workflow_schedules (workflow_id, created_at, id);
  `,
  `
  -- Notification subscriptions of a workspace (D18). Channel settings that are not secret live in
  -- config_json; a webhook secret only encrypted (D24), never returned after creation.
  CREATE TABLE notification_subscriptions (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    channel TEXT NOT NULL CHECK (channel IN ('webhook', 'email', 'slack')),
    config_json TEXT NOT NULL,
    secret_sealed BLOB,
    all_workflows INTEGER NOT NULL,
    workflow_ids_json TEXT NOT NULL DEFAULT '[]',
    level_filter_json TEXT NOT NULL DEFAULT '[]',
    trigger_filter_json TEXT NOT NULL DEFAULT '[]',
    include_final_output INTEGER NOT NULL DEFAULT 0,
    include_trace_spans INTEGER NOT NULL DEFAULT 0,
    include_rate_limits INTEGER NOT NULL DEFAULT 0,
    include_usage_data INTEGER NOT NULL DEFAULT 0,
    alert_rule_json TEXT,
    active INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    deleted_at INTEGER
  );
  CREATE INDEX notification_subscriptions_by_workspace ON notification_subscriptions (workspace_id, created_at, id);

  -- One delivery per (event, subscription) (D19); its id is the service-delivery-id and Idempotency-Key,
  -- and the event is kept as sent so a redelivery sends the same event.
  CREATE TABLE deliveries (
    id TEXT PRIMARY KEY,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    subscription_id TEXT NOT NULL REFERENCES notification_subscriptions (id),
    workspace_id TEXT NOT NULL,
    log_id TEXT,
    event_json TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (event_id, subscription_id)
  );
  CREATE INDEX deliveries_by_workspace ON deliveries (workspace_id, created_at, id);
  CREATE INDEX deliveries_by_subscription ON deliveries (subscription_id, created_at, id);

  -- Every attempt of a delivery; a redelivery starts a new series with the same delivery id.
  CREATE TABLE delivery_attempts (
    delivery_id TEXT NOT NULL REFERENCES deliveries (id),
    series INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('succeeded', 'retrying', 'failed')),
    http_status INTEGER,
    response_snippet TEXT,
    error TEXT,
    PRIMARY KEY (delivery_id, series, attempt)
  ) WITHOUT ROWID;
  `,
  `
  -- When each (subscription, workflow) alert last fired (D21): the cooldown is claimed by one conditional
  -- upsert, so two concurrent evaluations can never both fire; the row is also what users see.
  CREATE TABLE alert_state (
    subscription_id TEXT NOT NULL REFERENCES notification_subscriptions (id),
    workflow_id TEXT NOT NULL,
    rule TEXT NOT NULL,
    last_fired_at INTEGER NOT NULL,
    last_event_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (subscription_id, workflow_id)
  ) WITHOUT ROWID;
  -- The rules read a workflow's recent executions by time (D21 windows).
  CREATE INDEX log_entries_by_workflow_time ON log_entries (workflow_id, started_at);
  `,
  `
  -- USD amounts are exact to 1e-9 (D30): each execution's cost is whole nano-dollars, and the month's sum
  -- is rounded to them at every addition, so it is the exact decimal sum (up to 2^53 nano-USD) instead of
  -- a float that drifts one addition at a time (216.815694400001). Existing sums are taken again.
  DROP TRIGGER usage_periods_add;
  CREATE TRIGGER usage_periods_add AFTER INSERT ON log_entries WHEN NEW.billed_user_id IS NOT NULL
  BEGIN
    INSERT INTO usage_periods (user_id, period_start, cost)
    VALUES (NEW.billed_user_id, unixepoch(NEW.started_at / 1000, 'unixepoch', 'start of month') * 1000,
      round(NEW.cost_total, 9))
    ON CONFLICT (user_id, period_start) DO UPDATE SET cost = round(cost + excluded.cost, 9);
  END;

  DELETE FROM usage_periods;
  INSERT INTO usage_periods (user_id, period_start, cost)
  SELECT billed_user_id, unixepoch(started_at / 1000, 'unixepoch', 'start of month') * 1000,
    round(sum(round(cost_total, 9)), 9)
  FROM log_entries WHERE billed_user_id IS NOT NULL GROUP BY 1, 2;
  `,
  `
  -- Issue 13: every change that can alter who a key is, or which workspaces a user may see, moves this
  -- revision in the same transaction, so a process caching keys and memberships (accounts-store.ts) sees
  -- a revocation or a removed member as soon as it commits, whichever process made it. Idempotent, as a
  -- test re-runs it.
  CREATE TABLE IF NOT EXISTS auth_revision (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
  INSERT OR IGNORE INTO auth_revision (id, n) VALUES (1, 0);
  CREATE TRIGGER IF NOT EXISTS auth_revision_key_revoked AFTER UPDATE OF revoked_at, user_id, hash ON api_keys
  BEGIN UPDATE auth_revision SET n = n + 1; END;
  CREATE TRIGGER IF NOT EXISTS auth_revision_key_deleted AFTER DELETE ON api_keys
  BEGIN UPDATE auth_revision SET n = n + 1; END;
  CREATE TRIGGER IF NOT EXISTS auth_revision_user_changed AFTER UPDATE ON users
  BEGIN UPDATE auth_revision SET n = n + 1; END;
  CREATE TRIGGER IF NOT EXISTS auth_revision_user_deleted AFTER DELETE ON users
  BEGIN UPDATE auth_revision SET n = n + 1; END;
  CREATE TRIGGER IF NOT EXISTS auth_revision_member_added AFTER INSERT ON memberships
  BEGIN UPDATE auth_revision SET n = n + 1; END;
  CREATE TRIGGER IF NOT EXISTS auth_revision_member_changed AFTER UPDATE ON memberships
  BEGIN UPDATE auth_revision SET n = n + 1; END;
  CREATE TRIGGER IF NOT EXISTS auth_revision_member_removed AFTER DELETE ON memberships
  BEGIN UPDATE auth_revision SET n = n + 1; END;
  `,
  `
  -- Webhook operations (issue 18). D33: the secret a rotation replaced keeps signing until its expiry.
  ALTER TABLE notification_subscriptions ADD COLUMN previous_secret_sealed BLOB;
  ALTER TABLE notification_subscriptions ADD COLUMN previous_secret_expires_at INTEGER;
  -- D35: the run of failed deliveries that can disable an endpoint, and why flowlog disabled it.
  ALTER TABLE notification_subscriptions ADD COLUMN failing_since INTEGER;
  ALTER TABLE notification_subscriptions ADD COLUMN failed_deliveries INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE notification_subscriptions ADD COLUMN disabled_reason TEXT;
  ALTER TABLE notification_subscriptions ADD COLUMN disabled_at INTEGER;
  -- D34: a firing stays until the rule stops holding; firing and resolution alternate per pair.
  ALTER TABLE alert_state ADD COLUMN status TEXT NOT NULL DEFAULT 'firing' CHECK (status IN ('firing', 'resolved'));
  ALTER TABLE alert_state ADD COLUMN resolved_at INTEGER;
  ALTER TABLE alert_state ADD COLUMN resolution_reason TEXT;
  ALTER TABLE alert_state ADD COLUMN resolved_event_id TEXT;
  `,
  `
  -- D35: when the current failing run's advance notice went out (the disable waits a notice period after
  -- it), and the run's last error, which the notices name.
  ALTER TABLE notification_subscriptions ADD COLUMN disable_notice_at INTEGER;
  ALTER TABLE notification_subscriptions ADD COLUMN last_failure TEXT;
  `,
  `
  -- Issue 15: a snapshot is stored once per distinct workflow state, keyed by the SHA-256 of its JSON
  -- (sha256() is registered by openDatabase), and each execution points at its state. Executions of one
  -- workflow version share one row instead of a kilobyte or more each. The old table is read once.
  CREATE TABLE workflow_states (
    hash BLOB PRIMARY KEY,
    workflow_state_json TEXT NOT NULL
  );
  INSERT OR IGNORE INTO workflow_states (hash, workflow_state_json)
  SELECT sha256(workflow_state_json), workflow_state_json FROM execution_snapshots;
  CREATE TABLE execution_states (
    execution_id TEXT PRIMARY KEY,
    state_hash BLOB NOT NULL REFERENCES workflow_states (hash)
  ) WITHOUT ROWID;
  INSERT INTO execution_states (execution_id, state_hash)
  SELECT execution_id, sha256(workflow_state_json) FROM execution_snapshots;
  DROP TABLE execution_snapshots;
  `,
  `
  -- Issue 12: fan-outs to start, written in the transaction of their log entry (outbox-store.ts), so an
  -- execution never waits for the start and a process that dies before it loses none.
  CREATE TABLE notification_outbox (
    log_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    task_queue TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    -- Not claimed before this time: its creation, then the end of a claim's lease or a retry's wait.
    not_before INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX notification_outbox_due ON notification_outbox (not_before);
  `,
  `
  -- Issue 17, the log stats. Each model's cost (whole nano-USD, D30) and tokens beside the model, so cost
  -- per day by model sums this narrow table instead of parsing every entry's cost_json; the rows already
  -- there are read from it once. Read by time, whatever the model, with all a sum needs in the index.
  ALTER TABLE log_entry_models ADD COLUMN cost_nano_usd INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE log_entry_models ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0;
  UPDATE log_entry_models AS m
  SET cost_nano_usd = CAST(round(coalesce(json_extract(j.value, '$.total'), 0) * 1e9) AS INTEGER),
    tokens = coalesce(json_extract(j.value, '$.tokens.total'), 0)
  FROM log_entries l, json_each(l.cost_json, '$.models') j
  WHERE l.id = m.log_id AND j.key = m.model;
  CREATE INDEX log_entry_models_by_time
    ON log_entry_models (workspace_id, started_at, model, log_id, cost_nano_usd, tokens);
  -- The time index carries what the hours count, so unfiltered stats read it alone, not a row apiece;
  -- its keyset prefix still serves the list (D8).
  DROP INDEX log_entries_by_time;
  CREATE INDEX log_entries_by_time ON log_entries (workspace_id, started_at, id, total_duration_ms, level);
  `,
  `
  -- Issue 13: the API's buckets (keys api:<user>) moved to the state file beside this one
  -- (state-database.ts); each starts full there once. The execution buckets stay here, synced.
  DELETE FROM rate_limit_buckets WHERE key LIKE 'api:%';
  `,
  `
  -- Block outputs parked outside Temporal's payloads while their execution runs (parked-outputs-store.ts).
  CREATE TABLE parked_outputs (
    execution_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value_json TEXT NOT NULL,
    parked_at INTEGER NOT NULL,
    PRIMARY KEY (execution_id, key)
  ) WITHOUT ROWID;
  CREATE INDEX parked_outputs_by_time ON parked_outputs (parked_at);
  `,
  `
  -- Issue 13: whether trace_spans_json is exactly the spans' canonical protobuf JSON, checked as the entry
  -- is written, so that an answer may write the text as it is. Rows written before are not (0): they are
  -- read and written as before.
  ALTER TABLE log_entries ADD COLUMN trace_spans_canonical INTEGER NOT NULL DEFAULT 0;
  `,
  `
  -- Issue 51. A delivery may be held while its endpoint keeps failing (D36), which the status CHECK must
  -- allow, and SQLite cannot change a CHECK: the table is rebuilt. Its attempts keep referring to it by
  -- name; the drop orphans them until the same ids are inserted again, which defer_foreign_keys allows
  -- within this transaction (it ends with it). D40: the last attempt's HTTP status is kept on the delivery,
  -- so the list filters by its class without reading attempts (rows already there take it from theirs),
  -- and the status and event type filters read indexes of their own.
  PRAGMA defer_foreign_keys = ON;
  CREATE TEMP TABLE deliveries_copy AS
  SELECT d.*, (SELECT a.http_status FROM delivery_attempts a WHERE a.delivery_id = d.id
      ORDER BY a.series DESC, a.attempt DESC LIMIT 1) AS last_http_status
  FROM deliveries d;
  DROP TABLE deliveries;
  CREATE TABLE deliveries (
    id TEXT PRIMARY KEY,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    subscription_id TEXT NOT NULL REFERENCES notification_subscriptions (id),
    workspace_id TEXT NOT NULL,
    log_id TEXT,
    event_json TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'held', 'succeeded', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_http_status INTEGER,
    UNIQUE (event_id, subscription_id)
  );
  INSERT INTO deliveries (id, event_id, event_type, subscription_id, workspace_id, log_id, event_json, status,
    attempts, last_error, created_at, updated_at, last_http_status)
  SELECT id, event_id, event_type, subscription_id, workspace_id, log_id, event_json, status,
    attempts, last_error, created_at, updated_at, last_http_status
  FROM deliveries_copy;
  DROP TABLE deliveries_copy;
  CREATE INDEX deliveries_by_workspace ON deliveries (workspace_id, created_at, id);
  CREATE INDEX deliveries_by_subscription ON deliveries (subscription_id, created_at, id);
  CREATE INDEX deliveries_by_status ON deliveries (workspace_id, status, created_at, id);
  CREATE INDEX deliveries_by_subscription_status ON deliveries (subscription_id, status, created_at, id);
  CREATE INDEX deliveries_by_event_type ON deliveries (workspace_id, event_type, created_at, id);
  `,
  `
  -- D38: the event types a subscription receives (those made before get the default three), its pace in
  -- deliveries a second (NULL: none), and its webhook headers, sealed as one JSON object like a secret
  -- (D24). D39's signature scheme and the header names sit in config_json with the URL.
  ALTER TABLE notification_subscriptions ADD COLUMN event_types_json TEXT NOT NULL
    DEFAULT '["workflow.execution.completed","workflow.alert.fired","workflow.alert.resolved"]';
  ALTER TABLE notification_subscriptions ADD COLUMN throttle_per_second INTEGER;
  ALTER TABLE notification_subscriptions ADD COLUMN headers_sealed BLOB;
  `,
  `
  -- D36: a webhook or chat subscription is active, held (its new deliveries wait, a probe tries the endpoint)
  -- or draining (the probe got through: what waited is sent oldest first); since when it is held; and how
  -- many of its deliveries in a row ended failed after their whole schedule on retryable outcomes.
  ALTER TABLE notification_subscriptions ADD COLUMN hold_state TEXT NOT NULL DEFAULT 'active'
    CHECK (hold_state IN ('active', 'held', 'draining'));
  ALTER TABLE notification_subscriptions ADD COLUMN held_at INTEGER;
  ALTER TABLE notification_subscriptions ADD COLUMN exhausted_in_row INTEGER NOT NULL DEFAULT 0;
  -- A delivery's event time orders a drain (the deliveries before took their creation's, within ms of it),
  -- and exhausted marks one that failed after its whole schedule on retryable outcomes: a hold takes it back.
  ALTER TABLE deliveries ADD COLUMN event_at INTEGER;
  UPDATE deliveries SET event_at = created_at;
  ALTER TABLE deliveries ADD COLUMN exhausted INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX deliveries_in_hold_order ON deliveries (subscription_id, status, event_at, id);
  `,
  `
  -- Issue 52: deleting entries (D41's purge, D43's DeleteLogs) finds what hangs off each one by an index:
  -- its deliveries by the entry, and whether any execution still uses a workflow state by the state.
  CREATE INDEX deliveries_by_log ON deliveries (log_id);
  CREATE INDEX execution_states_by_state ON execution_states (state_hash);
  -- D41: the days a workspace keeps its entries, when it chose fewer than its plan's (NULL: the plan's).
  ALTER TABLE workspaces ADD COLUMN retention_days INTEGER;
  `,
  `
  -- D42: each workspace-day archived before the purge deletes it (day: yyyy-mm-dd, UTC): where the object
  -- is, how many entries it holds, and the size and SHA-256 (hex) it was read back with. Kept after the
  -- entries go: it is the archive's catalogue.
  CREATE TABLE archives (
    workspace_id TEXT NOT NULL,
    day TEXT NOT NULL,
    object_url TEXT NOT NULL,
    entries INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    written_at INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, day)
  ) WITHOUT ROWID;
  `,
  `
  -- D44: the order entries are written in, which a tail follows whatever their startedAt. SQLite has one
  -- writer, so a number taken inside the inserting transaction is commit order. It is taken from a counter
  -- row, never from max(seq): deleting the newest entries must not hand their numbers out again. Entries
  -- written before take theirs in startedAt order. xid is PostgreSQL's writing transaction, always 0 here:
  -- the two schemas stay one (issue 15).
  CREATE TABLE log_entry_sequence (last INTEGER NOT NULL);
  ALTER TABLE log_entries ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE log_entries ADD COLUMN xid INTEGER NOT NULL DEFAULT 0;
  UPDATE log_entries SET seq = r.n
    FROM (SELECT id, row_number() OVER (ORDER BY started_at, id) AS n FROM log_entries) r
    WHERE r.id = log_entries.id;
  INSERT INTO log_entry_sequence (last) SELECT coalesce(max(seq), 0) FROM log_entries;
  CREATE TRIGGER log_entries_in_write_order AFTER INSERT ON log_entries BEGIN
    UPDATE log_entry_sequence SET last = last + 1;
    UPDATE log_entries SET seq = (SELECT last FROM log_entry_sequence) WHERE rowid = NEW.rowid;
  END;
  CREATE INDEX log_entries_in_write_order ON log_entries (xid, seq);
  CREATE INDEX log_entries_by_workspace_in_write_order ON log_entries (workspace_id, xid, seq);
  `,
  `
  -- D47: the version each execution ran, beside its snapshot, so a retry can run it again (NULL for the
  -- executions logged before: a retry of one runs the current version). And which execution a retry
  -- retries, written as the retry starts, so the retried one shows it at once; by the retried one too.
  ALTER TABLE execution_states ADD COLUMN workflow_version INTEGER;
  CREATE TABLE execution_retries (
    execution_id TEXT PRIMARY KEY,
    retry_of TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX execution_retries_by_original ON execution_retries (retry_of, created_at);
  `,
  `
  -- D45: the words each entry is found by (search-words.ts splits and lowercases them; the tokenizer only
  -- separates them again, with the same letters, digits and marks). Contentless: the words are kept only
  -- as the index. Keyed by the entry's seq, which stays its own for ever, where a rowid may change on
  -- VACUUM. Existing entries are indexed here (search_words, database.ts), and a deleted entry's words go
  -- with it, whichever statement deletes it.
  CREATE VIRTUAL TABLE log_search USING fts5 (
    words, content = '', contentless_delete = 1,
    tokenize = "unicode61 remove_diacritics 0 categories 'L* N* M*'"
  );
  INSERT INTO log_search (rowid, words)
    SELECT l.seq, search_words(w.name, l.trace_spans_json, l.final_output_json)
    FROM log_entries l LEFT JOIN workflows w ON w.id = l.workflow_id;
  CREATE TRIGGER log_entries_unsearchable AFTER DELETE ON log_entries BEGIN
    DELETE FROM log_search WHERE rowid = OLD.seq;
  END;
  `,
  `
  -- D50: the W3C trace context of the execution's span, kept with the intent to notify, so the
  -- notifications join the execution's trace in whichever process starts them (NULL when not traced).
  ALTER TABLE notification_outbox ADD COLUMN trace_parent TEXT;
  ALTER TABLE notification_outbox ADD COLUMN trace_state TEXT;
  `,
  `
  -- Issue 53: whether cost_json, with cost_total written before its members, is exactly the cost's
  -- canonical protobuf JSON, checked as the entry is written, so that an answer may write the text as it
  -- is. Rows written before are not (0): they are read and written as before.
  ALTER TABLE log_entries ADD COLUMN cost_canonical INTEGER NOT NULL DEFAULT 0;
  `,
];

/**
 * Applies the migrations the file has not seen, each in its own transaction. `upTo` stops at an older
 * schema version, for tests that build the database an older flowlog left.
 */
export function migrate(db: Database, upTo = migrations.length): void {
  applyMigrations(db, migrations, "the database", upTo);
}

/**
 * Brings a SQLite file's schema (its `user_version`) up to `upTo` of `list`, each step in a transaction
 * that takes the write lock before it reads the version: processes starting together on a new file (a
 * server and a worker) each wait for the other's step and then find it done, instead of running it twice.
 * A file migrated by a newer flowlog is refused, not changed.
 */
export function applyMigrations(
  db: Database,
  list: readonly string[],
  what: string,
  upTo = list.length,
): void {
  const version = () => db.pragma("user_version", { simple: true }) as number;
  const current = version();
  if (current > list.length) {
    throw new Error(`${what} is at schema version ${current}, newer than this flowlog (${list.length})`);
  }
  for (let step = current; step < upTo; step++) {
    db.transaction(() => {
      if (version() > step) return;
      db.exec(list[step] as string);
      db.pragma(`user_version = ${step + 1}`);
    }).immediate();
  }
}
