import { setTimeout as sleep } from "node:timers/promises";
import { Code, ConnectError, type MethodImplSpec } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { LogsService } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { callEnded } from "../src/server/call-ended.js";
import { type OnClientGone, unaryContext } from "../src/server/unary-context.js";

/*
 * Issue 13: a unary call's signal is made only when its implementation reads it. These cases read it
 * after the call's end, the client's leaving or the deadline, and check that it tells what a signal made at
 * the start would have told (the one-port tests read it during the call, over every protocol).
 */

const spec = {
  kind: "unary",
  method: LogsService.method.getLog,
  impl: () => ({}),
} as unknown as MethodImplSpec;
const init = {
  protocolName: "connect",
  requestMethod: "POST",
  url: "http://localhost/",
  requestHeader: new Headers(),
};

/** A call whose client-gone hook the test fires itself, as the REST gateway does on the response's close. */
function callWithHook() {
  let leave!: (reason?: unknown) => void;
  const onClientGone: OnClientGone = (cancel) => {
    leave = cancel;
  };
  return { call: unaryContext(spec, { ...init, onClientGone }), leave: (reason: unknown) => leave(reason) };
}

describe("a unary call's signal (unary-context.ts)", () => {
  it("read after the call ended, starts out aborted with the end's reason", () => {
    const { context, abort } = unaryContext(spec, init);
    abort(callEnded);
    expect(context.signal.aborted).toBe(true);
    expect(context.signal.reason).toBe(callEnded);
  });

  it("read after the client left, is aborted with the leaving's reason; the call's later end changes nothing", () => {
    const { call, leave } = callWithHook();
    const gone = new ConnectError("client left", Code.Canceled);
    leave(gone);
    call.abort(callEnded);
    expect(call.context.signal.reason).toBe(gone);
  });

  it("follows the request's signal, whether it aborted before the call started or during it", () => {
    const before = new AbortController();
    before.abort("before");
    expect(unaryContext(spec, { ...init, requestSignal: before.signal }).context.signal.reason).toBe(
      "before",
    );
    const during = new AbortController();
    const { context } = unaryContext(spec, { ...init, requestSignal: during.signal });
    during.abort("during");
    expect(context.signal.reason).toBe("during");
  });

  it("read after the client's deadline passed, is aborted with deadline_exceeded", async () => {
    const { context, abort } = unaryContext(spec, { ...init, timeoutMs: 20 });
    await sleep(60);
    expect(context.signal.aborted).toBe(true);
    expect((context.signal.reason as ConnectError).code).toBe(Code.DeadlineExceeded);
    abort(callEnded);
    expect((context.signal.reason as ConnectError).code).toBe(Code.DeadlineExceeded);
  });

  it("read during the call, is aborted at its end, and its listeners hear it once", () => {
    const { call, leave } = callWithHook();
    const heard: unknown[] = [];
    call.context.signal.addEventListener("abort", () => heard.push(call.context.signal.reason));
    expect(call.context.signal.aborted).toBe(false);
    leave("gone");
    call.abort(callEnded);
    expect(heard).toEqual(["gone"]);
    expect(call.context.signal).toBe(call.context.signal);
  });

  it("is not aborted while the call runs", () => {
    const { context } = unaryContext(spec, { ...init, timeoutMs: 60_000 });
    expect(context.signal.aborted).toBe(false);
    expect(context.timeoutMs()).toBeGreaterThan(59_000);
  });
});
