/**
 * A notification_outbox row as the FanOutIntent it holds (issue 12), in either store (D32): the aliases
 * are quoted so that PostgreSQL keeps their case and a row is already its intent.
 */
export const fanOutIntentColumns =
  'log_id AS "logId", workspace_id AS "workspaceId", workflow_id AS "workflowId", task_queue AS "taskQueue", ' +
  'trace_parent AS "traceparent", trace_state AS "tracestate"';
