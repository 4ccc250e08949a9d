import type { ExportLogsRequest } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { invalidArgument } from "../../errors/api-errors.js";
import type { LogFilter, Order } from "../../store/log-list-sql.js";
import { listFilterOf } from "./entry-filter.js";
import type { ExportForm } from "./export-lines.js";

export interface ExportLogsQuery {
  filter: LogFilter;
  order: Order;
  form: ExportForm;
}

/**
 * ExportLogs' request as the export reads it (D45): ListLogs' filters, checked as the list checks them
 * (entry-filter.ts), its order, and the parts of the detail form to show, details=full unless asked
 * otherwise. `format` only shapes the REST body (the gateway's export-download.ts) and is checked by the
 * .proto's rule.
 */
export function parseExportLogsRequest(request: ExportLogsRequest, maxListValues: number): ExportLogsQuery {
  const { filter, violations } = listFilterOf(request, maxListValues);
  if (violations.length > 0) throw invalidArgument(violations);
  return {
    filter,
    order: (request.order ?? "desc") as Order,
    form: {
      full: (request.details ?? "full") === "full",
      traceSpans: request.includeTraceSpans ?? false,
      finalOutput: request.includeFinalOutput ?? false,
    },
  };
}
