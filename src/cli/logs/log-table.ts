import { styleText } from "node:util";
import { type EntryJson, formatCost, formatDuration, formatTime } from "./entry-json.js";

interface Column {
  header: string;
  width: number;
  value(entry: EntryJson): string;
  alignRight?: boolean;
}

/** Most wanted first: a terminal too narrow for all of them drops columns from the end of this list. */
const fixedColumns: Column[] = [
  { header: "STARTED (UTC)", width: 19, value: (e) => formatTime(e.startedAt) },
  { header: "LEVEL", width: 5, value: (e) => e.level },
  { header: "ID", width: 20, value: (e) => e.id },
  { header: "DURATION", width: 8, value: (e) => formatDuration(e.totalDurationMs), alignRight: true },
  { header: "COST", width: 9, value: (e) => formatCost(e.cost.total), alignRight: true },
  { header: "TRIGGER", width: 8, value: (e) => e.trigger },
  { header: "EXECUTION", width: 19, value: (e) => e.executionId },
];

/** The workflow's name where the entry carries it (details=full), else its id. */
const workflowColumn = { header: "WORKFLOW", min: 12, max: 40 };
const gap = "  ";

/**
 * Log entries as a table for people, a row at a time (rows arrive page by page, or as the tail sends
 * them), so the columns have fixed widths. On a terminal the table fits its width: the workflow's name
 * is cut to the room left, and when even that is too little, the least wanted columns go. Elsewhere
 * (a pipe, a file) nothing is cut, and nothing is coloured.
 */
export class LogTable {
  private readonly columns: Column[];
  private headerPrinted = false;

  constructor(private readonly out: NodeJS.WriteStream = process.stdout) {
    const terminalWidth = out.isTTY ? out.columns : undefined;
    const fixed = [...fixedColumns];
    const used = () => fixed.reduce((sum, column) => sum + column.width + gap.length, 0);
    while (terminalWidth !== undefined && fixed.length > 3 && used() + workflowColumn.min > terminalWidth)
      fixed.pop();
    const room = terminalWidth === undefined ? workflowColumn.max : terminalWidth - used();
    const width = Math.max(workflowColumn.min, Math.min(workflowColumn.max, room));
    const workflow: Column = {
      header: workflowColumn.header,
      width,
      value: (e) => {
        const name = e.workflow?.name ?? e.workflowId;
        return terminalWidth !== undefined && name.length > width ? `${name.slice(0, width - 1)}…` : name;
      },
    };
    // The workflow sits after the level and id, where a reader looks for what ran.
    this.columns = [...fixed.slice(0, 3), workflow, ...fixed.slice(3)];
  }

  print(entry: EntryJson): void {
    if (!this.headerPrinted) {
      this.write(this.columns.map((column) => column.header));
      this.headerPrinted = true;
    }
    this.write(
      this.columns.map((column) => column.value(entry)),
      entry.level === "error",
    );
  }

  private write(cells: string[], isError = false): void {
    const line = cells
      .map((cell, i) => {
        const column = this.columns[i] as Column;
        return column.alignRight ? cell.padStart(column.width) : cell.padEnd(column.width);
      })
      .join(gap)
      .trimEnd();
    const coloured = isError && this.out.isTTY && this.out.hasColors() ? styleText("red", line) : line;
    this.out.write(`${coloured}\n`);
  }
}
