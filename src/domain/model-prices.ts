import type { CostRecord, ModelCostRecord, TokenCounts } from "../store/records.js";
import { ownValue } from "../util/own-property.js";

/** What a model costs, in USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * Public list prices (standard tier, USD per million tokens) of common chat models: the default table
 * the agent block prices its calls with (D13). Providers answer with dated names such as
 * `gpt-4o-2024-08-06` or `claude-sonnet-4-20250514`; priceOf matches those to these base names.
 */
export const defaultModelPrices: PriceTable = {
  "gpt-4o": { input: 2.5, output: 10 },
  "gpt-4o-mini": { input: 0.15, output: 0.6 },
  "gpt-4.1": { input: 2, output: 8 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6 },
  "gpt-4.1-nano": { input: 0.1, output: 0.4 },
  "o3-mini": { input: 1.1, output: 4.4 },
  "o4-mini": { input: 1.1, output: 4.4 },
  "claude-opus-4": { input: 15, output: 75 },
  "claude-sonnet-4": { input: 3, output: 15 },
  "claude-3-7-sonnet": { input: 3, output: 15 },
  "claude-3-5-haiku": { input: 0.8, output: 4 },
  "gemini-2.5-pro": { input: 1.25, output: 10 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5 },
  "gemini-2.0-flash": { input: 0.1, output: 0.4 },
};

/** One model call's token usage, as a provider's `usage` reports it. */
export interface ModelUsage {
  model: string;
  promptTokens: number;
  completionTokens: number;
}

export type TokenCost = Omit<ModelCostRecord, "tokens">;

/**
 * The price of a model: its exact entry, else the longest entry that prefixes the name at a `-`
 * boundary (so `gpt-4o-mini-2024-07-18` is gpt-4o-mini, not gpt-4o). Undefined when unpriced.
 */
export function priceOf(model: string, prices: PriceTable = defaultModelPrices): ModelPrice | undefined {
  const exact = ownValue(prices, model);
  if (exact) return exact;
  let best: string | undefined;
  for (const name of Object.keys(prices)) {
    if (model.startsWith(`${name}-`) && name.length > (best?.length ?? 0)) best = name;
  }
  return best === undefined ? undefined : ownValue(prices, best);
}

/**
 * The USD cost of one call or of a model's summed usage. An unpriced model costs 0 rather than failing
 * the execution: the operator adds its price to the table (D12 makes defaults configurable).
 */
export function costOf(
  model: string,
  promptTokens: number,
  completionTokens: number,
  prices: PriceTable = defaultModelPrices,
): TokenCost {
  const price = priceOf(model, prices) ?? { input: 0, output: 0 };
  const input = roundUsd((promptTokens * price.input) / 1_000_000);
  const output = roundUsd((completionTokens * price.output) / 1_000_000);
  return { input, output, total: roundUsd(input + output) };
}

/**
 * An execution's `cost` (spec "Log entry (detail form)"): per model the summed tokens priced once, the
 * token totals, and `total` as the sum of the models' totals, so the parts always add up to the whole.
 */
export function executionCost(
  usages: Iterable<ModelUsage>,
  prices: PriceTable = defaultModelPrices,
): CostRecord {
  const tokensByModel = new Map<string, TokenCounts>();
  for (const { model, promptTokens, completionTokens } of usages) {
    const tokens = tokensByModel.get(model) ?? { prompt: 0, completion: 0, total: 0 };
    tokens.prompt += promptTokens;
    tokens.completion += completionTokens;
    tokens.total += promptTokens + completionTokens;
    tokensByModel.set(model, tokens);
  }
  const models = [...tokensByModel].map(([model, tokens]): [string, ModelCostRecord] => [
    model,
    { ...costOf(model, tokens.prompt, tokens.completion, prices), tokens },
  ]);
  // fromEntries defines each key, so a model named `__proto__` is an entry, not the object's prototype.
  const cost: CostRecord = {
    total: 0,
    tokens: { prompt: 0, completion: 0, total: 0 },
    models: Object.fromEntries(models),
  };
  for (const [, modelCost] of models) {
    cost.total = roundUsd(cost.total + modelCost.total);
    cost.tokens.prompt += modelCost.tokens.prompt;
    cost.tokens.completion += modelCost.tokens.completion;
    cost.tokens.total += modelCost.tokens.total;
  }
  return cost;
}

/** Whole nano-dollars: sums of per-token prices stay free of binary-fraction noise such as 0.30000000000000004. */
function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}
