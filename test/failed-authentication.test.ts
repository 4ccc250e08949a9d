import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  type AuthenticationAttempt,
  createFailedAuthenticationThrottle,
  type FailedAuthenticationThrottle,
} from "../src/limits/failed-authentication-throttle.js";

/**
 * D26's throttle on its own clock: at most 20 failed authentications a minute per address, and never more
 * credentials of an address looked at than it has failures left, however many arrive at once. The
 * end-to-end forms are in hostile-input (webhook tokens over HTTP/2) and postgres-processes (keys).
 */
describe("failed-authentication throttle (D26)", () => {
  const address = "203.0.113.5";

  function throttle() {
    let now = 0;
    return {
      throttle: createFailedAuthenticationThrottle(20, () => now),
      advance: (ms: number) => {
        now += ms;
      },
    };
  }

  /** Every attempt started at once: those that started now, and those that wait, as promises. */
  function startMany(throttle: FailedAuthenticationThrottle, count: number) {
    const started: AuthenticationAttempt[] = [];
    const waiting: Promise<AuthenticationAttempt | ConnectError>[] = [];
    for (let i = 0; i < count; i++) {
      const admission = throttle.attempt(address);
      if (admission instanceof Promise) waiting.push(admission);
      else if (admission instanceof ConnectError) throw admission;
      else started.push(admission);
    }
    return { started, waiting };
  }

  const settled = async <T>(promise: Promise<T>) =>
    Promise.race([
      promise.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20)),
    ]);

  it("starts 20 attempts of an address at once and holds the next until one ends", async () => {
    const { throttle: t } = throttle();
    const { started, waiting } = startMany(t, 25);
    expect(started).toHaveLength(20);
    expect(waiting).toHaveLength(5);
    expect(await settled(waiting[0] as Promise<unknown>)).toBe(false);
    // A success gives its failure back: the first waiter starts.
    started[0]?.ended();
    const next = await (waiting[0] as Promise<AuthenticationAttempt | ConnectError>);
    expect(next).not.toBeInstanceOf(ConnectError);
    expect(await settled(waiting[1] as Promise<unknown>)).toBe(false);
    // Another address is not held by this one's attempts.
    expect(t.attempt("203.0.113.6")).not.toBeInstanceOf(Promise);
  });

  it("refuses the waiting attempts with 429 and Retry-After once the ones ahead of them have failed 20 times", async () => {
    const { throttle: t } = throttle();
    const { started, waiting } = startMany(t, 30);
    for (const attempt of started.slice(1)) attempt.failed();
    // 19 failures spent and one attempt in flight, which holds the last: every waiter still waits.
    const [first, ...rest] = waiting as Promise<AuthenticationAttempt | ConnectError>[];
    expect(await settled(first as Promise<unknown>)).toBe(false);
    // It succeeds and gives the last failure back: one waiter starts, the others wait on it.
    started[0]?.ended();
    const admitted = (await first) as AuthenticationAttempt;
    expect(admitted).not.toBeInstanceOf(ConnectError);
    expect(await settled(rest[0] as Promise<unknown>)).toBe(false);
    admitted.failed();
    for (const refusal of await Promise.all(rest)) {
      expect(refusal).toBeInstanceOf(ConnectError);
      expect((refusal as ConnectError).metadata.get("retry-after")).toBe("3");
    }
    expect(t.attempt(address)).toBeInstanceOf(ConnectError);
  });

  it("counts an attempt once however often it is ended, and a failure after its end not at all", () => {
    const { throttle: t } = throttle();
    for (let i = 0; i < 40; i++) {
      const attempt = t.attempt(address) as AuthenticationAttempt;
      attempt.ended();
      attempt.ended();
      attempt.failed();
    }
    const { started, waiting } = startMany(t, 20);
    expect([started.length, waiting.length]).toEqual([20, 0]);
  });

  it("refills a failure every 3 s: a throttled address may try once more after it", () => {
    const { throttle: t, advance } = throttle();
    for (let i = 0; i < 20; i++) (t.attempt(address) as AuthenticationAttempt).failed();
    expect(t.attempt(address)).toBeInstanceOf(ConnectError);
    advance(2_999);
    expect(t.attempt(address)).toBeInstanceOf(ConnectError);
    advance(1);
    const attempt = t.attempt(address) as AuthenticationAttempt;
    expect(attempt).not.toBeInstanceOf(ConnectError);
    // That one failure is all the refill gave: the next attempt waits for it, and is refused when it fails.
    const next = t.attempt(address);
    expect(next).toBeInstanceOf(Promise);
    attempt.failed();
    return expect(next).resolves.toBeInstanceOf(ConnectError);
  });
});
