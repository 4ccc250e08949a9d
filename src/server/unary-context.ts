import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextKey,
  createContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import type { UniversalServerRequest } from "@connectrpc/connect/protocol";

/** What a unary call's context is made of, as its protocol handler read it from the request. */
export interface UnaryContextInit {
  protocolName: string;
  requestMethod: string;
  url: string;
  requestHeader: Headers;
  /** Aborted when the client leaves; the call's signal follows it. */
  requestSignal?: AbortSignal | undefined;
  /**
   * Or, for a caller that learns of the client leaving by itself (the REST gateway and the one port's
   * request adapter, from the response's `close`): given the call's cancellation to run then, so no
   * signal is made only to be followed.
   */
  onClientGone?: OnClientGone | undefined;
  /** The client's deadline, from its timeout header; none when it sent none. */
  timeoutMs?: number | undefined;
  contextValues?: ContextValues | undefined;
  responseHeader?: Record<string, string>;
  responseTrailer?: Record<string, string>;
}

/** Registers a call's cancellation, to run if the client leaves before its answer is written. */
export type OnClientGone = (cancel: (reason?: unknown) => void) => void;

/**
 * Set by the one port's request adapter (node-exchange.ts): how a call on that request learns that its
 * client left, without the request's signal being made.
 */
export const clientGoneKey = createContextKey<OnClientGone | undefined>(undefined, {
  description: "client gone",
});

/** How a call learns that its client left: the adapter's hook when there is one, else the request's signal. */
export function clientLeaving(
  req: Pick<UniversalServerRequest, "signal" | "contextValues">,
): Pick<UnaryContextInit, "requestSignal" | "onClientGone"> {
  const onClientGone = req.contextValues?.get(clientGoneKey);
  return onClientGone ? { onClientGone } : { requestSignal: req.signal };
}

/** The context an implementation is given, and the call's end: `abort(reason)` ends its signal. */
export interface UnaryCallContext {
  context: HandlerContext;
  abort(reason: unknown): void;
}

/** The longest delay `setTimeout` keeps: 2^31 - 1 ms. */
const maxTimerMs = 2 ** 31 - 1;

/**
 * The `HandlerContext` of a unary call answered by one of flowlog's own handlers (grpc-unary.ts,
 * connect-unary.ts, json-unary.ts), with the meaning Connect's `createHandlerContext` gives one: a signal that aborts
 * when the client leaves, when the client's deadline passes (`deadline_exceeded`) and when the call ends,
 * and `timeoutMs()` counting down to that deadline. Built on one controller, listening to the request's
 * signal once, with a timer only for a deadline that was sent, and the request's headers as they are:
 * `createHandlerContext` makes three controllers (one for a deadline even when there is none), links them
 * with a listener each and copies the headers, about 20 µs per call of a busy server (issue 13).
 * Connect's `shutdownSignal` is not followed: flowlog's router sets none. The signal itself is made only
 * when something reads it: none of flowlog's services or interceptors does, and `invokeUnary` below does
 * not read it for them as Connect's invoker does (making it was 2.5 % of a one-entry request's CPU in a
 * profile). Until then the call's end is only remembered, and a signal made later starts out aborted with
 * that reason.
 */
export function unaryContext(spec: MethodImplSpec, init: UnaryContextInit): UnaryCallContext {
  let controller: AbortController | undefined;
  /** The first reason the call ended for, while no signal has been made. */
  let ended: { reason: unknown } | undefined;
  const end = (reason: unknown) => {
    if (controller) controller.abort(reason);
    else ended ??= { reason };
  };
  const { requestSignal, timeoutMs } = init;
  const follow = () => end(requestSignal?.reason);
  if (requestSignal?.aborted) follow();
  else requestSignal?.addEventListener("abort", follow, { once: true });
  init.onClientGone?.(end);
  let timer: NodeJS.Timeout | undefined;
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  if (timeoutMs !== undefined) {
    const expire = () => end(new ConnectError("the operation timed out", Code.DeadlineExceeded));
    if (timeoutMs <= 0) expire();
    // Node fires a longer timer after 1 ms, with a warning on stderr: a client's `grpc-timeout: 99999999H`
    // would have cut its call at once. A deadline beyond some 24 days is as good as none.
    else if (timeoutMs <= maxTimerMs) timer = setTimeout(expire, timeoutMs);
  }
  return {
    context: {
      method: spec.method,
      service: spec.method.parent,
      get signal() {
        if (!controller) {
          controller = new AbortController();
          if (ended) controller.abort(ended.reason);
        }
        return controller.signal;
      },
      timeoutMs: () => (deadline === undefined ? undefined : deadline - Date.now()),
      requestMethod: init.requestMethod,
      requestHeader: init.requestHeader,
      responseHeader: new Headers(init.responseHeader),
      responseTrailer: new Headers(init.responseTrailer),
      protocolName: init.protocolName,
      values: init.contextValues ?? createContextValues(),
      url: init.url,
    },
    abort(reason) {
      clearTimeout(timer);
      requestSignal?.removeEventListener("abort", follow);
      end(reason);
    },
  };
}

/**
 * Runs a unary implementation behind the interceptors, as Connect's `invokeUnaryImplementation` does, with
 * one difference: Connect copies the call's signal into the request and into the implementation's context
 * on every call, which makes it; here both read it only when asked (`get signal`), so a call whose
 * implementation and interceptors never look makes none (issue 13).
 */
export async function invokeUnary<I extends DescMessage, O extends DescMessage>(
  spec: MethodImplSpec<I, O> & { kind: "unary" },
  context: HandlerContext,
  input: MessageShape<I>,
  interceptors: Interceptor[] | undefined,
): Promise<MessageShape<O>> {
  const implement = async (req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> => {
    // Connect's merge of the call's context with the request the interceptors passed on.
    const merged: HandlerContext = {
      method: context.method,
      service: req.service,
      get signal() {
        return req.signal;
      },
      timeoutMs: context.timeoutMs,
      requestMethod: context.requestMethod,
      url: context.url,
      requestHeader: req.header,
      responseHeader: context.responseHeader,
      responseTrailer: context.responseTrailer,
      protocolName: context.protocolName,
      values: req.contextValues,
    };
    return {
      stream: false,
      message: create(spec.method.output, await spec.impl(req.message, merged)),
      method: spec.method,
      service: spec.method.parent,
      header: context.responseHeader,
      trailer: context.responseTrailer,
    };
  };
  // Interceptors see any request and answer; this chain carries unary ones of this method only. The
  // first interceptor is outermost: the chain is built from the last, without copying the list.
  const next = (interceptors ?? []).reduceRight(
    (inner, interceptor) => interceptor(inner),
    implement as unknown as Parameters<Interceptor>[0],
  );
  const { message, header, trailer } = (await next({
    stream: false,
    message: input,
    method: spec.method,
    service: spec.method.parent,
    requestMethod: context.requestMethod,
    url: context.url,
    get signal() {
      return context.signal;
    },
    header: context.requestHeader,
    contextValues: context.values,
  } as UnaryRequest<I, O>)) as UnaryResponse<I, O>;
  copyHeaders(header, context.responseHeader);
  copyHeaders(trailer, context.responseTrailer);
  return message;
}

/** An interceptor's own answer headers replace the call's, as Connect copies them. */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const key of [...to.keys()]) to.delete(key);
  for (const [key, value] of from) to.set(key, value);
}
