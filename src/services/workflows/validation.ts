import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { WorkflowState } from "../../../gen/flowlog/workflows/v1/workflow_pb.js";
import { checkConditionConfig } from "../../engine/condition.js";
import { checkReferenceSyntax, normalizeBlockName } from "../../engine/references.js";
import type { FieldViolation } from "../../errors/api-errors.js";
import { defaultQuotas } from "../../limits/quotas.js";
import { checkGraph, containersOf } from "./graph-rules.js";
import { checkQuotas, type WorkflowQuotas } from "./quota-rules.js";

/**
 * The rules a workflow passes to be saved (D13, issue 4 item 1), so that what the engine runs has the
 * shape it expects. Each violation names the field by its path in the request, such as
 * `state.blocks.api1.config.url` or `state.edges[2].target`, and its message names the block or edge
 * or the limit (D26) it exceeds.
 */
export function validateWorkflowState(
  state: WorkflowState,
  quotas: WorkflowQuotas = defaultQuotas,
): FieldViolation[] {
  return [
    ...checkStarter(state),
    ...checkBlocks(state),
    ...checkGraph(state),
    ...checkCollections(state),
    ...checkQuotas(state, quotas),
  ];
}

const blockTypes = ["starter", "api", "agent", "condition", "response"];
const httpMethods = ["GET", "POST", "PUT", "DELETE", "PATCH"];
/** D16: a JSON body for these only. */
const methodsWithBody = ["POST", "PUT", "PATCH"];

type Config = Record<string, unknown>;
type Problem = (field: string, message: string) => FieldViolation;

function checkStarter(state: WorkflowState): FieldViolation[] {
  const starters = Object.entries(state.blocks)
    .filter(([, block]) => block.type === "starter")
    .map(([id]) => id);
  if (starters.length === 1) return [];
  const found = starters.length === 0 ? "none" : `${starters.length} (${starters.join(", ")})`;
  return [{ field: "state.blocks", message: `a workflow needs exactly one starter block; found ${found}` }];
}

function checkBlocks(state: WorkflowState): FieldViolation[] {
  const byName = new Map<string, string>();
  return Object.entries(state.blocks).flatMap(([id, block]) => {
    const path = `state.blocks.${id}`;
    const problem: Problem = (field, message) => ({
      field: `${path}.${field}`,
      message: `block ${id}: ${message}`,
    });
    const violations: FieldViolation[] = [];
    if (!blockTypes.includes(block.type)) {
      violations.push(problem("type", `type "${block.type}" is not one of ${blockTypes.join(", ")}`));
    }
    // D14: references find blocks by normalized name, so two blocks must not share one.
    const name = normalizeBlockName(block.name);
    const namesake = byName.get(name);
    if (namesake === undefined) byName.set(name, id);
    else if (name !== "") violations.push(problem("name", `<${name}.…> would also mean block ${namesake}`));
    const config: Config = block.config ?? {};
    violations.push(
      ...checkConfig(block.type, config, problem),
      ...referenceProblems(`${path}.config`, config),
    );
    return violations;
  });
}

function checkConfig(type: string, config: Config, problem: Problem): FieldViolation[] {
  switch (type) {
    case "api":
      return checkApiConfig(config, problem);
    case "agent":
      return isText(config.model) ? [] : [problem("config.model", "an agent block needs a model")];
    case "condition":
      return checkConditionConfig(config).map((message) => problem("config", message));
    default:
      return [];
  }
}

function checkApiConfig(config: Config, problem: Problem): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const method = config.method;
  if (typeof method !== "string" || !httpMethods.includes(method)) {
    violations.push(problem("config.method", `method must be one of ${httpMethods.join(", ")}`));
  } else if (config.body !== undefined && config.body !== null && !methodsWithBody.includes(method)) {
    violations.push(
      problem("config.body", `a ${method} request has no body; ${methodsWithBody.join(", ")} do`),
    );
  }
  if (!isText(config.url)) violations.push(problem("config.url", "an api block needs a url"));
  return violations;
}

function isText(value: unknown): boolean {
  return typeof value === "string" && value.trim() !== "";
}

function checkCollections(state: WorkflowState): FieldViolation[] {
  return containersOf(state).flatMap(([, container]) =>
    container.collection === undefined
      ? []
      : referenceProblems(`${container.path}.collection`, toJson(ValueSchema, container.collection)),
  );
}

/** D14: any string of a config may hold references; each bad one is named by its own path. */
function referenceProblems(path: string, value: unknown): FieldViolation[] {
  return [...stringsIn(value, path)].flatMap(([field, text]) =>
    checkReferenceSyntax(text).map((message) => ({ field, message })),
  );
}

function* stringsIn(value: unknown, path: string): Generator<[string, string]> {
  if (typeof value === "string") yield [path, value];
  else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) yield* stringsIn(item, `${path}[${i}]`);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) yield* stringsIn(item, `${path}.${key}`);
  }
}
