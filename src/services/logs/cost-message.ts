import type { Cost, ModelCost, TokenUsage } from "../../../gen/flowlog/logs/v1/log_entry_pb.js";
import { storedText, type WithStoredText } from "../../codegen/serializers/runtime/json-reading.js";
import { jsonDouble } from "../../codegen/serializers/runtime/json-text.js";
import type { CostRecord, ModelCostRecord, StoredCostRecord, TokenCounts } from "../../store/records.js";

/**
 * An entry's cost as the answers show it with its detail (D30): from its stored text when that is canonical
 * (StoredCost), else built from the record. Object literals of the generated types, as log-entry-view.ts
 * builds its messages.
 */
export function costMessage(cost: CostRecord | StoredCostRecord): Cost {
  return "detailJson" in cost ? new StoredCost(cost.total, cost.detailJson) : fullCost(cost);
}

export function fullCost({ total, tokens, models }: CostRecord): Cost {
  return costOf(total, tokenUsage(tokens), modelCosts(models));
}

export function costOf(
  total: number,
  tokens: TokenUsage | undefined,
  models: Record<string, ModelCost>,
): Cost {
  return { $typeName: "flowlog.logs.v1.Cost", total, tokens, models };
}

type Optional<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

function modelCosts(models: Record<string, Optional<ModelCostRecord, "tokens">>): Record<string, ModelCost> {
  const costs: Record<string, ModelCost> = {};
  for (const [model, cost] of Object.entries(models)) costs[model] = modelCost(cost);
  return costs;
}

/** A model's cost; its tokens may be absent in canonical JSON, though flowlog always writes them. */
function modelCost({ input, output, total, tokens }: Optional<ModelCostRecord, "tokens">): ModelCost {
  return { $typeName: "flowlog.logs.v1.ModelCost", input, output, total, tokens: tokenUsage(tokens) };
}

function tokenUsage(tokens: TokenCounts): TokenUsage;
function tokenUsage(tokens: TokenCounts | undefined): TokenUsage | undefined;
function tokenUsage(tokens: TokenCounts | undefined): TokenUsage | undefined {
  if (tokens === undefined) return undefined;
  const { prompt, completion, total } = tokens;
  return { $typeName: "flowlog.logs.v1.TokenUsage", prompt, completion, total };
}

/**
 * A Cost whose tokens and models are still the canonical JSON text they were stored as (StoredCostRecord):
 * the generated JSON writers write the whole cost as that text with the total spliced in first
 * (storedMessageJson), with no parse and no messages, which was a sixth of an export's time (issue 53). The
 * tokens and models are read into messages only when something reads or sets them (the binary writers,
 * reflection); from then on those messages are the fields, and the text is no longer written. The total
 * is a plain field, written as it stands either way.
 */
export class StoredCost implements Cost, WithStoredText {
  readonly $typeName = "flowlog.logs.v1.Cost";
  total: number;
  declare tokens?: TokenUsage;
  #detail: { tokens?: TokenUsage; models: Record<string, ModelCost> } | undefined;
  readonly #detailJson: string;

  /**
   * `tokens` as an own property, since reflection takes a field of explicit presence as set only when it is
   * one, with the same accessors on every instance: accessors made per instance (closures over `this`) gave
   * each cost a map of its own, which V8 keeps in the old generation, and so kept every answer's costs, and
   * what they reached, alive through young collections (bench gc-promotion: 210 KB promoted per scavenge
   * against 25; issue 13 met the same with object literals' getters).
   */
  static readonly #tokens: PropertyDescriptor = {
    get(this: StoredCost) {
      return this.#read().tokens;
    },
    set(this: StoredCost, tokens: TokenUsage | undefined) {
      this.#read().tokens = tokens;
    },
    enumerable: true,
  };

  /** `detailJson` must be canonical: log_entries.cost_canonical, isCanonicalCostJson. */
  constructor(total: number, detailJson: string) {
    this.total = total;
    this.#detailJson = detailJson;
    Object.defineProperty(this, "tokens", StoredCost.#tokens);
  }

  get models(): Record<string, ModelCost> {
    return this.#read().models;
  }

  set models(models: Record<string, ModelCost>) {
    this.#read().models = models;
  }

  [storedText](): string | undefined {
    // Canonical text always has models (isCanonicalCost), so it never is "{}".
    return this.#detail === undefined
      ? `{"total":${jsonDouble(this.total)},${this.#detailJson.slice(1)}`
      : undefined;
  }

  #read(): { tokens?: TokenUsage; models: Record<string, ModelCost> } {
    if (this.#detail === undefined) {
      // Canonical JSON (isCanonicalCost): models always, tokens here and in each model when present.
      const { tokens, models } = JSON.parse(this.#detailJson) as {
        tokens?: TokenCounts;
        models: Record<string, Optional<ModelCostRecord, "tokens">>;
      };
      this.#detail = { tokens: tokenUsage(tokens), models: modelCosts(models) };
    }
    return this.#detail;
  }
}
