import { setTimeout as sleep } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { GetLogRequestSchema, LogsService } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { callEnded } from "../src/rpc/call-ended.js";
import { invokeUnary, type OnClientGone, unaryContext } from "../src/rpc/unary-context.js";

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

  it("a deadline beyond what a timer holds is kept as a deadline, not cut to a millisecond", async () => {
    const warnings: Error[] = [];
    const warned = (warning: Error) => warnings.push(warning);
    process.on("warning", warned);
    try {
      // 99999999H in grpc-timeout; Node would fire such a timer after 1 ms, with a TimeoutOverflowWarning.
      const { context, abort } = unaryContext(spec, { ...init, timeoutMs: 99_999_999 * 3_600_000 });
      await sleep(30);
      expect(context.signal.aborted).toBe(false);
      expect(context.timeoutMs()).toBeGreaterThan(2 ** 31);
      abort(callEnded);
      expect(warnings.map((w) => w.name)).toEqual([]);
    } finally {
      process.off("warning", warned);
    }
  });

  it("is not aborted while the call runs", () => {
    const { context } = unaryContext(spec, { ...init, timeoutMs: 60_000 });
    expect(context.signal.aborted).toBe(false);
    expect(context.timeoutMs()).toBeGreaterThan(59_000);
  });
});

describe("invokeUnary: an implementation behind the interceptors, as Connect's invoker runs it", () => {
  it("passes what an interceptor changed to the implementation, and takes back the headers it answers with", async () => {
    const seen: { header?: string | null; workspace?: unknown; signal?: AbortSignal } = {};
    const impl = (request: { id: string }, context: HandlerContext) => {
      seen.header = context.requestHeader.get("x-added");
      seen.signal = context.signal;
      context.responseHeader.set("x-from-impl", request.id);
      return { data: { id: request.id } };
    };
    const withImpl = { ...spec, impl } as unknown as MethodImplSpec & { kind: "unary" };
    const interceptor: Interceptor = (next) => async (request) => {
      const header = new Headers(request.header);
      header.set("x-added", "by the interceptor");
      const response = await next({ ...request, header });
      const answered = new Headers(response.header);
      answered.set("x-interceptor", "yes");
      return { ...response, header: answered };
    };
    const { context, abort } = unaryContext(withImpl, init);
    const answer = await invokeUnary(withImpl, context, create(GetLogRequestSchema, { id: "log_1" }), [
      interceptor,
    ]);
    expect(answer.$typeName).toBe("flowlog.logs.v1.GetLogResponse");
    expect(seen.header).toBe("by the interceptor");
    expect(context.responseHeader.get("x-interceptor")).toBe("yes");
    expect(context.responseHeader.get("x-from-impl")).toBe("log_1");
    // The signal the implementation read is the call's: it ends with the call.
    expect(seen.signal?.aborted).toBe(false);
    abort(callEnded);
    expect(seen.signal?.aborted).toBe(true);
  });

  it("runs the interceptors in the router's order: the first one given is the outermost", async () => {
    const order: string[] = [];
    const named =
      (name: string): Interceptor =>
      (next) =>
      async (request) => {
        order.push(`${name} in`);
        const response = await next(request);
        order.push(`${name} out`);
        return response;
      };
    const withImpl = {
      ...spec,
      impl: () => {
        order.push("implementation");
        return {};
      },
    } as unknown as MethodImplSpec & { kind: "unary" };
    const { context } = unaryContext(withImpl, init);
    await invokeUnary(withImpl, context, create(GetLogRequestSchema, { id: "log_1" }), [
      named("first"),
      named("second"),
    ]);
    expect(order).toEqual(["first in", "second in", "implementation", "second out", "first out"]);
  });
});
