import type { Connection } from "@temporalio/client";
import type { SearchAttributeType } from "@temporalio/common";
import type { temporal } from "@temporalio/proto";
// CommonJS: Node's ESM loader sees only its default export.
import proto from "@temporalio/proto";
import { flowlogSearchAttributes } from "./search-attributes.js";

/**
 * Adds whichever of our search attributes the namespace lacks. Safe to call on every start: a dev server
 * reusing its SQLite file, or a shared cluster, already has some or all of them.
 */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.values(flowlogSearchAttributes).filter((key) => !customAttributes?.[key.name]);
  if (missing.length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, indexedValueType(key.type)])),
    });
  } catch (error) {
    // Another process (a second `flowlog serve`, a parallel test run) may have added them meanwhile.
    if (!isAlreadyExists(error)) throw error;
  }
}

function indexedValueType(type: SearchAttributeType): temporal.api.enums.v1.IndexedValueType {
  return proto.temporal.api.enums.v1.IndexedValueType[`INDEXED_VALUE_TYPE_${type}`];
}

const GRPC_ALREADY_EXISTS = 6;

function isAlreadyExists(error: unknown): boolean {
  return typeof error === "object" && error !== null && "code" in error && error.code === GRPC_ALREADY_EXISTS;
}
