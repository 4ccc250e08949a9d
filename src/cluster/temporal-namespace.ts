import { setTimeout as sleep } from "node:timers/promises";
import { Connection } from "@temporalio/client";
import { msToTs } from "@temporalio/common/lib/time.js";
import { registerSearchAttributes } from "../temporal/register-search-attributes.js";

/** How long a new namespace's executions and their histories are kept once closed. */
const retention = "7 days";
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;

/**
 * A real Temporal server starts with no namespace of ours (the dev server makes `default` itself): register
 * it when missing, wait until the frontend serves it (namespaces reach the frontend's cache within
 * seconds), and add flowlog's search attributes, so executions and deliveries can be found in the UI.
 */
export async function prepareNamespace(
  address: string,
  namespace: string,
  timeoutMs = 60_000,
): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const rpc = connection.workflowService;
    if (!(await describes(connection, namespace))) {
      await rpc
        .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(retention) })
        .catch((error: { code?: number }) => {
          if (error.code !== ALREADY_EXISTS) throw error;
        });
    }
    // The frontend's services learn of a new namespace one by one, within seconds: the search attributes
    // are added once the operator service knows it too.
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await registerSearchAttributes(connection, namespace);
        return;
      } catch (error) {
        if ((error as { code?: number }).code !== NOT_FOUND || Date.now() > deadline) throw error;
        await sleep(500);
      }
    }
  } finally {
    await connection.close();
  }
}

async function describes(connection: Connection, namespace: string): Promise<boolean> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === NOT_FOUND) return false;
    throw error;
  }
}
