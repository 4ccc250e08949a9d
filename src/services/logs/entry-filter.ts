import type { ListLogsRequest } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { type FieldViolation, listLengthViolations } from "../../errors/api-errors.js";
import type { LogFilter } from "../../store/log-list-sql.js";
import type { Level, Trigger } from "../../store/records.js";
import { maxWordChars, type SearchTerm, searchTermsOf } from "../../store/search-words.js";
import { msFromIso } from "../../util/time.js";

/**
 * The filters ListLogs and GetLogStats share, as both requests name them: which entries count (D9).
 * The dates are left out: the list takes them as inclusive bounds, the stats as a range of hours.
 */
export type EntryFilterFields = Pick<
  ListLogsRequest,
  | "workspaceId"
  | "workflowIds"
  | "folderIds"
  | "triggers"
  | "level"
  | "minDurationMs"
  | "maxDurationMs"
  | "minCost"
  | "maxCost"
  | "model"
  | "q"
>;

/**
 * The shared filters as the store takes them, with the D26 list lengths checked (configuration, so not
 * in the .proto): the violations are the caller's to report with its own, in one round.
 */
export function entryFilterOf(
  request: EntryFilterFields,
  maxListValues: number,
): { filter: LogFilter; violations: FieldViolation[] } {
  const search = searchOf(request.q);
  return {
    filter: {
      workspaceId: request.workspaceId,
      workflowIds: request.workflowIds.length > 0 ? request.workflowIds : undefined,
      folderIds: request.folderIds.length > 0 ? request.folderIds : undefined,
      triggers: request.triggers.length > 0 ? (request.triggers as Trigger[]) : undefined,
      level: request.level as Level | undefined,
      minDurationMs: request.minDurationMs,
      maxDurationMs: request.maxDurationMs,
      minCost: request.minCost,
      maxCost: request.maxCost,
      model: request.model,
      search: search.terms,
    },
    violations: [
      ...listLengthViolations("workflowIds", request.workflowIds, maxListValues),
      ...listLengthViolations("folderIds", request.folderIds, maxListValues),
      ...listLengthViolations("triggers", request.triggers, maxListValues),
      ...search.violations,
    ],
  };
}

/**
 * The filters of the requests that select entries as the list does (ListLogs, TailLogs, ExportLogs): the
 * shared ones, the startedAt bounds (inclusive, D9) and the execution, with every violation collected.
 */
export function listFilterOf(
  request: EntryFilterFields & Pick<ListLogsRequest, "startDate" | "endDate" | "executionId">,
  maxListValues: number,
): { filter: LogFilter; violations: FieldViolation[] } {
  const { filter: entries, violations } = entryFilterOf(request, maxListValues);
  const fail = (field: string, message: string) => violations.push({ field, message });
  const startedFrom = isoDate(request.startDate, "startDate", fail);
  const startedTo = isoDate(request.endDate, "endDate", fail);
  return { filter: { ...entries, startedFrom, startedTo, executionId: request.executionId }, violations };
}

/**
 * D45's `q` as the store's terms. Its length is the .proto's rule; what is left needs the word rule
 * (search-words.ts): a q must hold a word, since one that holds none would select every entry (and
 * DeleteLogs would take it for a filter), and no word may be longer than any word indexed.
 */
function searchOf(q: string | undefined): { terms?: SearchTerm[]; violations: FieldViolation[] } {
  if (q === undefined) return { violations: [] };
  const terms = searchTermsOf(q);
  if (terms === undefined) {
    return { violations: [{ field: "q", message: `q has a word longer than ${maxWordChars} characters` }] };
  }
  if (terms.length === 0) {
    return {
      violations: [
        { field: "q", message: "q must hold at least one word (letters or digits) to search for" },
      ],
    };
  }
  return { terms, violations: [] };
}

/**
 * A date parameter as Unix milliseconds. The .proto's pattern already holds it to the calendar; what it
 * lets through and Date cannot read is reported under the field's name.
 */
export function isoDate(
  value: string | undefined,
  field: string,
  fail: (field: string, message: string) => void,
): number | undefined {
  if (value === undefined) return undefined;
  const ms = msFromIso(value);
  if (ms === undefined)
    fail(field, `${field} must be an ISO 8601 timestamp such as 2026-01-02T03:04:05.000Z`);
  return ms;
}
