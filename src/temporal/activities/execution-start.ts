import { createHash } from "node:crypto";
import { ApplicationFailure } from "@temporalio/activity";
import { executionRefusedFailure } from "../../engine/execution-types.js";
import { asWorkflowState, type WorkflowStateJson } from "../../engine/json-shapes.js";
import { logger } from "../../logging/logger.js";
import { type Trigger, triggers } from "../../store/records.js";
import type { WorkflowHead } from "../../store/workflows-store.js";
import type { ActivityDeps } from "./deps.js";

/**
 * Issue 49: anyone who can reach the Temporal frontend can start `executeWorkflow` on flowlog's task queue
 * (the reference cluster runs Temporal without authorization), and every part of a start is theirs to
 * write. So a start is a claim, and the worker checks it against the store before the execution runs a
 * block, reads a secret or writes an entry:
 *
 * - workspaceId and workflowId: the workflow must be that workspace's. Every `{{NAME}}` a block reads is
 *   the execution's workspace's (D14, D24), so this is what keeps one tenant's run out of another's secrets.
 * - the state and its version: a handed-over state (issue 12) must be exactly the one the store holds for
 *   that version, compared by a SHA-256 digest of its JSON. A graph of the starter's own, such as an HTTP
 *   block posting `{{API_TOKEN}}` to their server, never runs. Without a state, the worker loads the version
 *   itself, as before.
 * - billedUserId: a member of the workspace, whose executions these are: every trigger bills one (D12,
 *   D15), so nobody outside a workspace is charged for it, nor has a bucket drained by it.
 * - the folder and the D26 bounds a start hands over are not taken from it: the worker reads the folder
 *   from the workflow's head and applies its own quotas, as it does for a version it loads.
 *
 * What stays the starter's: the trigger's input and name, the executionId and the activity timeouts. The
 * input is data the workspace's own graph reads, as it reads a webhook caller's; a graph that takes a
 * destination from its input sends where the input says, as it would for anyone holding a key or the
 * webhook's token. The trigger's name labels the entry; an executionId already used writes no second entry
 * (D17's idempotent write); the timeouts change when a lost block is retried, never what it sends. Proving
 * them would take a key the API signs each start with (from FLOWLOG_MASTER_KEY, D24, which the API's
 * execution dependencies do not hold today), and a signed start can still be started again: who may start
 * runs at all is Temporal's own authorization (mTLS, an authorizer), where an operator closes the frontend
 * (docs/operations.md, "What a worker runs").
 */

/** What the checks read of a start; its ids alone name it in a refusal's message and operator line. */
export interface ExecutionStart {
  executionId: string;
  workspaceId: string;
  workflowId: string;
  version: number;
  billedUserId: string | null;
  trigger: Trigger;
}

/**
 * Whether the start has the shape flowlog's own starts have. Its values reach SQL parameters and the log
 * entry, where a value of another type would fail the run for reasons no retry mends, after writing an
 * error entry, or keep the log write retrying: such a start is refused first.
 */
function wellFormed(start: ExecutionStart): boolean {
  const { executionId, workspaceId, workflowId, version, billedUserId, trigger } = start;
  return (
    [executionId, workspaceId, workflowId].every((id) => typeof id === "string") &&
    Number.isSafeInteger(version) &&
    version >= 0 &&
    (billedUserId === null || typeof billedUserId === "string") &&
    triggers.includes(trigger)
  );
}

/** The digest a handed-over state is compared by: of its JSON text, as the state travels. */
function stateDigest(state: unknown): string {
  return createHash("sha256").update(JSON.stringify(state)).digest("base64url");
}

/**
 * Digests of the versions this worker has checked, so that a second execution of a version reads none of
 * its graph again (issue 12): a saved version never changes (D13). Bounded, least recently used first out:
 * an entry is a few hundred bytes.
 */
class VersionDigests {
  private readonly digests = new Map<string, string>();

  constructor(private readonly capacity: number) {}

  async of(workflowId: string, version: number, read: () => Promise<string | undefined>) {
    const key = `${workflowId}@${version}`;
    const known = this.digests.get(key);
    if (known !== undefined) {
      this.digests.delete(key);
      this.digests.set(key, known);
      return known;
    }
    const digest = await read();
    if (digest === undefined) return undefined;
    if (this.digests.size >= this.capacity) this.digests.delete(this.digests.keys().next().value as string);
    this.digests.set(key, digest);
    return digest;
  }
}

const rememberedVersions = 10_000;

/** The checks of issue 49 on one worker's store, with its memory of the versions it has checked. */
export function executionStartChecks(deps: ActivityDeps) {
  const digests = new VersionDigests(rememberedVersions);
  const log = (deps.logger ?? logger).child({ component: "execution-start" });

  /** Fails the start for good: the run writes nothing and the Temporal UI shows why (execute-workflow.ts). */
  const refuse = (start: ExecutionStart, reason: string): never => {
    const { executionId, workspaceId, workflowId, version } = start;
    log.warn({ executionId, workspaceId, workflowId, version }, `an execution start was refused: ${reason}`);
    throw ApplicationFailure.nonRetryable(
      `execution ${executionId} refused: ${reason}`,
      executionRefusedFailure,
    );
  };

  const notFound = (start: ExecutionStart) =>
    `workflow ${start.workflowId} has no version ${start.version} in workspace ${start.workspaceId}`;

  return {
    /**
     * The workflow's head, once the start is found to name a workflow of its workspace, billed to one of
     * its members. The two reads run together: one round trip on PostgreSQL.
     */
    async headFor(start: ExecutionStart): Promise<WorkflowHead> {
      const { store } = deps;
      if (!wellFormed(start)) return refuse(start, "it does not have the shape of a start flowlog makes");
      const [head, member] = await Promise.all([
        store.workflows.getWorkflowHead(start.workflowId),
        start.billedUserId === null ? false : store.accounts.isMember(start.billedUserId, start.workspaceId),
      ]);
      if (head?.workspaceId !== start.workspaceId) return refuse(start, notFound(start));
      if (!member) {
        const whom =
          start.billedUserId === null
            ? "it names nobody to bill"
            : `it is billed to user ${start.billedUserId}, who is not a member of workspace ${start.workspaceId}`;
        return refuse(start, `${whom}; an execution is billed to a member of its workspace (D12)`);
      }
      return head;
    },

    /** Refuses a handed-over state that is not the one the store holds for the start's version. */
    async checkState(start: ExecutionStart, state: WorkflowStateJson): Promise<void> {
      const stored = await digests.of(start.workflowId, start.version, async () => {
        const saved = await deps.store.workflows.getWorkflowVersion(start.workflowId, start.version);
        // The form the API hands over (executions.ts): every collection present, however it was saved.
        return saved && stateDigest(asWorkflowState(saved.state));
      });
      if (stored === undefined) return refuse(start, notFound(start));
      const handed = typeof state === "object" && state !== null ? stateDigest(state) : undefined;
      if (handed !== stored) {
        refuse(
          start,
          `the workflow state it carries is not version ${start.version} of workflow ${start.workflowId} as workspace ${start.workspaceId} saved it; only a saved version runs (issue 49)`,
        );
      }
    },

    notFound,
    refuse,
  };
}
