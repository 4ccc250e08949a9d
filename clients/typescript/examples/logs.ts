import { createFlowlogClient } from "@flowlog/client";
import { LogsService } from "@flowlog/client/gen/flowlog/logs/v1/logs_service_pb";

const workspaceId = process.env.FLOWLOG_WORKSPACE ?? "";
const logs = createFlowlogClient(LogsService, {
  baseUrl: process.env.FLOWLOG_URL ?? "http://127.0.0.1:3000",
  apiKey: process.env.FLOWLOG_API_KEY ?? "",
});

// The five newest entries, then one of them in its detail form (workflow, spans, cost by model).
const page = await logs.listLogs({ workspaceId, limit: 5 });
for (const entry of page.data) console.log("listed", entry.id, entry.level, entry.totalDurationMs);
const { data: log } = await logs.getLog({ id: page.data[0]?.id ?? "" });
console.log("got", log?.id, log?.workflow?.name, log?.cost?.total);

// Entries as they are written, until stopped (D44): a heartbeat message has no entry.
for await (const message of logs.tailLogs({ workspaceId })) {
  if (message.entry) console.log("tailed", message.entry.id, message.entry.level);
}
