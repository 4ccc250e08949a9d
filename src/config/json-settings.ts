import { z } from "zod";

/**
 * The pieces the JSON-valued variables are checked with (FLOWLOG_PLAN_LIMITS, FLOWLOG_QUOTAS,
 * FLOWLOG_CONNECTIONS), so each reports a problem the same way: at its path, never echoing the value.
 */

/** JSON text, parsed; its value is then checked by the schema the variable names. */
export const jsonText = z.string().transform((text, context): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, so it is not passed on.
    context.issues.push({ code: "custom", message: "must be JSON", input: text });
    return z.NEVER;
  }
});

export const positiveInteger = z
  .number({ error: "must be a positive integer" })
  .int("must be a positive integer")
  .positive("must be a positive integer");

/** An object with only the keys it names; an unknown key is reported at its own path (config.ts, problemsOf). */
export function strictObject<Shape extends z.ZodRawShape>(shape: Shape, what: string) {
  const keys = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown ${what}; expected one of ${keys}`
        : "must be a JSON object",
  });
}
