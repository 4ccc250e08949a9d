import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls `probe` until it answers something other than undefined, and returns that; fails naming `what`
 * once `timeoutMs` has passed. The probe may read the store, whose reads are async (issue 15).
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Polls until `condition` holds; fails once `timeoutMs` has passed. */
export async function untilTrue(
  condition: () => boolean | Promise<boolean>,
  timeoutMs?: number,
): Promise<void> {
  await until("the condition to hold", async () => ((await condition()) ? true : undefined), timeoutMs);
}

/**
 * `until` for a probe that reads through the API: four reads a second, since every read takes a token of
 * the key's API bucket (D11) and twenty ms polling would empty it and be refused (429).
 */
export function untilApi<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs?: number,
): Promise<T> {
  return until(
    what,
    async () => {
      await sleep(250);
      return await probe();
    },
    timeoutMs,
  );
}
