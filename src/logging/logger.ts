import { pino } from "pino";
import { traceFields } from "./tracing.js";

/**
 * One structured logger for the process. Secrets never reach it: callers log ids and codes,
 * and the redact list is a second line of defence for headers that carry credentials. With tracing on
 * (tracing.ts), a line written inside a span carries its `trace_id` and `span_id`.
 */
export const logger = pino({
  level: process.env.FLOWLOG_LOG_LEVEL ?? (process.env.VITEST ? "silent" : "info"),
  redact: {
    paths: ["headers['x-api-key']", "headers.authorization", "*.secret", "*.password", "*.apiKey"],
    censor: "[redacted]",
  },
  mixin: traceFields,
});

export type Logger = typeof logger;
