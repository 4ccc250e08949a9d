import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { benchPostgres } from "./support/postgres.js";
import { flowlogCli, type RunningProcess, startFlowlog } from "./support/processes.js";
import { type Bench, type BenchOptions, ms, type Table } from "./support/report.js";
import { distribution } from "./support/sample.js";

const plans = {
  quick: { entries: 2_000, burst: 19 },
  full: { entries: 1_000_000, burst: 19 },
};

const dayMs = 86_400_000;

/**
 * Issue 49, D46: can one tenant take a PostgreSQL replica down for everyone? A free-plan key fires a
 * burst of 31-day stats calls with a cost filter (the heaviest read there is) at one `flowlog serve`,
 * while another tenant reads single entries on it. Before D46 a burst of 19 on 1M entries held all ten
 * pooled connections and the other tenant waited 10 s for a 503. Goal: the other tenant's GetLog answers
 * within 1 s throughout, and the burst's calls beyond the caps are refused with 429.
 */
export const tenantReadsBench: Bench = {
  name: "tenant-reads",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const server = await benchPostgres(options);
    const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-tenant-reads-"));
    let serve: RunningProcess | undefined;
    try {
      const env = {
        FLOWLOG_DATA_DIR: dataDir,
        FLOWLOG_DATABASE_URL: await server.createDatabase(),
        FLOWLOG_MASTER_KEY: randomBytes(32).toString("base64"),
      };
      const account = async (plan: string) => {
        const printed = JSON.parse(await flowlogCli(["bootstrap", "--json", "--plan", plan], env)) as {
          workspace: { id: string };
          key: string;
        };
        return { workspaceId: printed.workspace.id, key: printed.key };
      };
      const [heavy, other] = await Promise.all([account("free"), account("enterprise")]);
      const seeding = performance.now();
      await Promise.all([
        flowlogCli(["seed", "--workspace", heavy.workspaceId, "--executions", String(plan.entries)], env),
        flowlogCli(["seed", "--workspace", other.workspaceId, "--executions", "100"], env),
      ]);
      process.stderr.write(
        `  seeded ${plan.entries} entries in ${((performance.now() - seeding) / 1000).toFixed(1)} s\n`,
      );
      serve = await startFlowlog(["serve"], {
        env: { ...env, PORT: "0" },
        ready: /flowlog API at http:\/\/localhost:(\d+)/,
      });
      const base = `http://127.0.0.1:${serve.ready[1]}`;
      const page = (await (
        await fetch(`${base}/api/v1/logs?workspaceId=${other.workspaceId}&limit=1`, {
          headers: { "x-api-key": other.key },
        })
      ).json()) as { data: { id: string }[] };
      const entryUrl = `${base}/api/v1/logs/${page.data[0]?.id}`;
      const getLog = async () => {
        const started = performance.now();
        const answer = await fetch(entryUrl, { headers: { "x-api-key": other.key } });
        await answer.arrayBuffer();
        return { ms: performance.now() - started, status: answer.status };
      };
      const now = Date.now();
      const statsUrl =
        `${base}/api/v1/log-stats?workspaceId=${heavy.workspaceId}&minCost=0.001&maxCost=1` +
        `&startDate=${new Date(now - 31 * dayMs).toISOString()}&endDate=${new Date(now).toISOString()}`;
      const stats = async () => {
        const started = performance.now();
        const answer = await fetch(statsUrl, { headers: { "x-api-key": heavy.key } });
        await answer.arrayBuffer();
        return { ms: performance.now() - started, status: answer.status };
      };

      const alone = [];
      for (let i = 0; i < 30; i++) alone.push(await getLog());
      const oneStats = await stats();

      const during: { ms: number; status: number }[] = [];
      let bursting = true;
      const reader = (async () => {
        while (bursting) {
          during.push(await getLog());
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      const burstStarted = performance.now();
      const burst = await Promise.all(Array.from({ length: plan.burst }, () => stats()));
      const burstMs = performance.now() - burstStarted;
      bursting = false;
      await reader;

      const statuses = (answers: { status: number }[]) => {
        const counts = new Map<number, number>();
        for (const { status } of answers) counts.set(status, (counts.get(status) ?? 0) + 1);
        return [...counts].map(([status, n]) => `${n}x ${status}`).join(", ");
      };
      const row = (name: string, answers: { ms: number; status: number }[]) => {
        const times = distribution(answers.map((answer) => answer.ms));
        return [name, answers.length, ms(times.p50), ms(times.p99), ms(times.max), statuses(answers)];
      };
      const table: Table = {
        title:
          `tenant-reads: a free key's burst of ${plan.burst} 31-day stats calls (cost filter) on ` +
          `${plan.entries.toLocaleString("en-US")} entries, PostgreSQL, one flowlog serve`,
        columns: ["requests", "count", "p50 ms", "p99 ms", "max ms", "answers"],
        rows: [
          row("other tenant's GetLog, alone", alone),
          row("one stats call, alone", [oneStats]),
          row("the burst's stats calls", burst),
          row("other tenant's GetLog during the burst", during),
        ],
        note:
          `The burst took ${ms(burstMs)} ms. Goal (issue 49): the other tenant's GetLog max under 1 s during ` +
          "the burst; the stats beyond 2 per user (4 per process) refused with 429 (D46).",
      };
      return [table];
    } finally {
      await serve?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      await server.stop();
    }
  },
};
