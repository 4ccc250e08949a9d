import {
  create,
  type DescMessage,
  type DescMethod,
  type DescMethodUnary,
  type DescService,
  type MessageShape,
} from "@bufbuild/protobuf";
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
 * json-unary.ts), with the meaning Connect's `createHandlerContext` gives one: a signal that aborts
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
  const { requestSignal, timeoutMs } = init;
  const context = new UnaryHandlerContext(
    spec,
    init,
    timeoutMs === undefined ? undefined : Date.now() + timeoutMs,
  );
  // The closures made per call are arguments or results, never bound to a name (below).
  const unfollow = requestSignal && followed(requestSignal, context);
  init.onClientGone?.((reason) => context.end(reason));
  const timer = timeoutMs === undefined ? undefined : deadlineTimer(timeoutMs, context);
  return {
    context,
    abort(reason) {
      clearTimeout(timer);
      unfollow?.();
      context.end(reason);
    },
  };
}

/*
 * Closures made per call: tsx (which ran flowlog in production until the build step of issue 50, and still
 * runs the tests) compiles with esbuild's `keepNames`, which gives every function bound to a name
 * (`const f = () => ...`, a nested `function f`, `{ f: () => ... }`) its name by `Object.defineProperty`
 * each time the function is made, about a microsecond; those were 4.6 % of a one-entry answer's CPU in a
 * profile (issue 13). The build (scripts/build.mjs) keeps no names, so this shape no longer pays in
 * production; it stays because it costs nothing and keeps the tests' profile the same.
 */

/** Ends the call when `signal` aborts, or now if it has; the function returned stops following it. */
function followed(signal: AbortSignal, context: UnaryHandlerContext): () => void {
  if (signal.aborted) {
    context.end(signal.reason);
    return () => {};
  }
  const follow = endOnAbort(signal, context);
  signal.addEventListener("abort", follow, { once: true });
  return () => signal.removeEventListener("abort", follow);
}

function endOnAbort(signal: AbortSignal, context: UnaryHandlerContext): () => void {
  return () => context.end(signal.reason);
}

/**
 * Ends the call with `deadline_exceeded` when the client's deadline passes. Node fires a longer timer
 * after 1 ms, with a warning on stderr: a client's `grpc-timeout: 99999999H` would have cut its call at
 * once. A deadline beyond some 24 days is as good as none.
 */
function deadlineTimer(timeoutMs: number, context: UnaryHandlerContext): NodeJS.Timeout | undefined {
  if (timeoutMs <= 0) context.end(deadlinePassed());
  else if (timeoutMs <= maxTimerMs) return setTimeout(() => context.end(deadlinePassed()), timeoutMs);
  return undefined;
}

function deadlinePassed(): ConnectError {
  return new ConnectError("the operation timed out", Code.DeadlineExceeded);
}

/*
 * The objects a call makes that have a getter (the context, the context an implementation is given, the
 * request the interceptors see, the one port's request in node-exchange.ts) are classes, never object
 * literals with `get`. V8 keeps what defines an object's own getter (its hidden class and accessor pair)
 * in the old generation, and from there the getter, and all it closes over, stays alive through every
 * collection of the young generation until the next full one. With such literals, each request's call
 * context and what it held were copied and then promoted: about 800 KB per young collection under the
 * gateway bench's one-entry load, each collection taking about 3 ms instead of under 1 (issue 13;
 * `test/gc-promotion.test.ts`). A class's getter is defined once, on its prototype. A spread copies own
 * properties only: a spread of one of these objects has no `signal`.
 */

/** A unary call's context: the signal made on first read, the call's end remembered until then. */
class UnaryHandlerContext implements HandlerContext {
  readonly method: DescMethod;
  readonly service: DescService;
  readonly requestMethod: string;
  readonly requestHeader: Headers;
  readonly responseHeader: Headers;
  readonly responseTrailer: Headers;
  readonly protocolName: string;
  readonly values: ContextValues;
  readonly url: string;
  /** Read as a detached function by some callers, as Connect's own context allows. */
  readonly timeoutMs: () => number | undefined;
  #controller: AbortController | undefined;
  /** The first reason the call ended for, while no signal has been made. */
  #ended: { reason: unknown } | undefined;

  constructor(spec: MethodImplSpec, init: UnaryContextInit, deadline: number | undefined) {
    this.method = spec.method;
    this.service = spec.method.parent;
    this.requestMethod = init.requestMethod;
    this.requestHeader = init.requestHeader;
    this.responseHeader = new Headers(init.responseHeader);
    this.responseTrailer = new Headers(init.responseTrailer);
    this.protocolName = init.protocolName;
    this.values = init.contextValues ?? createContextValues();
    this.url = init.url;
    this.timeoutMs = () => (deadline === undefined ? undefined : deadline - Date.now());
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#ended) this.#controller.abort(this.#ended.reason);
    }
    return this.#controller.signal;
  }

  end(reason: unknown): void {
    if (this.#controller) this.#controller.abort(reason);
    else this.#ended ??= { reason };
  }
}

/** The context an implementation is given: the call's, with the request the interceptors passed on. */
class ImplementationContext implements HandlerContext {
  readonly method: DescMethod;
  readonly service: DescService;
  readonly timeoutMs: () => number | undefined;
  readonly requestMethod: string;
  readonly url: string;
  readonly requestHeader: Headers;
  readonly responseHeader: Headers;
  readonly responseTrailer: Headers;
  readonly protocolName: string;
  readonly values: ContextValues;
  readonly #request: UnaryRequest;
  readonly #context: HandlerContext;

  constructor(context: HandlerContext, request: UnaryRequest) {
    this.method = context.method;
    this.service = request.service;
    this.timeoutMs = context.timeoutMs;
    this.requestMethod = context.requestMethod;
    this.url = context.url;
    this.requestHeader = request.header;
    this.responseHeader = context.responseHeader;
    this.responseTrailer = context.responseTrailer;
    this.protocolName = context.protocolName;
    this.values = request.contextValues;
    this.#request = request;
    this.#context = context;
  }

  /**
   * The signal of the request the interceptors passed on; the call's when that request has none: an
   * interceptor that passes on a spread of the request it was given (`next({ ...request, header })`)
   * leaves out the getter of its class.
   */
  get signal(): AbortSignal {
    return (this.#request.signal as AbortSignal | undefined) ?? this.#context.signal;
  }
}

/**
 * The request the interceptors see, its signal the call's, made only when read. An interceptor that
 * passes on a spread of it passes no signal; the implementation then reads the call's.
 */
class InterceptedRequest<I extends DescMessage, O extends DescMessage> implements UnaryRequest<I, O> {
  readonly stream = false;
  readonly method: DescMethodUnary<I, O>;
  readonly service: DescService;
  readonly requestMethod: string;
  readonly url: string;
  readonly header: Headers;
  readonly contextValues: ContextValues;
  readonly #context: HandlerContext;

  constructor(
    spec: MethodImplSpec<I, O>,
    context: HandlerContext,
    readonly message: MessageShape<I>,
  ) {
    this.method = spec.method as DescMethodUnary<I, O>;
    this.service = spec.method.parent;
    this.requestMethod = context.requestMethod;
    this.url = context.url;
    this.header = context.requestHeader;
    this.contextValues = context.values;
    this.#context = context;
  }

  get signal(): AbortSignal {
    return this.#context.signal;
  }
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
  // Interceptors see any request and answer; this chain carries unary ones of this method only. The
  // first interceptor is outermost: the chain is built from the last, without copying the list.
  const next = (interceptors ?? []).reduceRight(
    (inner, interceptor) => interceptor(inner),
    implementation(spec, context) as unknown as Parameters<Interceptor>[0],
  );
  const { message, header, trailer } = (await next(
    new InterceptedRequest(spec, context, input) as unknown as UnaryRequest,
  )) as UnaryResponse<I, O>;
  copyHeaders(header, context.responseHeader);
  copyHeaders(trailer, context.responseTrailer);
  return message;
}

/** The innermost step of the chain: the implementation, given the request the interceptors passed on. */
function implementation<I extends DescMessage, O extends DescMessage>(
  spec: MethodImplSpec<I, O> & { kind: "unary" },
  context: HandlerContext,
): (req: UnaryRequest<I, O>) => Promise<UnaryResponse<I, O>> {
  return async (req) => ({
    stream: false,
    message: create(
      spec.method.output,
      await spec.impl(req.message, new ImplementationContext(context, req)),
    ),
    method: spec.method,
    service: spec.method.parent,
    header: context.responseHeader,
    trailer: context.responseTrailer,
  });
}

/** An interceptor's own answer headers replace the call's, as Connect copies them. */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const key of [...to.keys()]) to.delete(key);
  for (const [key, value] of from) to.set(key, value);
}
