import http2 from "node:http2";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { type ApiServer, type ApiServerOptions, startApiServer } from "../../src/server/api-server.js";

/** The API server on a random loopback port, as tests use it. */
export function startTestApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  return startApiServer({ port: 0, host: "127.0.0.1" }, options);
}

/** Every RPC protocol the port speaks, each through a real connect-node transport over a socket. */
export function rpcTransports(baseUrl: string): Record<string, Transport> {
  return {
    "gRPC (HTTP/2 prior knowledge)": createGrpcTransport({ baseUrl }),
    "gRPC-Web (HTTP/1.1)": createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
    "Connect JSON (HTTP/1.1)": createConnectTransport({ baseUrl, httpVersion: "1.1" }),
    "Connect binary (HTTP/2)": createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true }),
  };
}

export function rpcClients<S extends DescService>(service: S, baseUrl: string): [string, Client<S>][] {
  return Object.entries(rpcTransports(baseUrl)).map(([name, transport]) => [
    name,
    createClient(service, transport),
  ]);
}

export interface RestResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: unknown;
}

/** A REST call over HTTP/1.1 (fetch) or cleartext HTTP/2 with prior knowledge. */
export async function rest(
  baseUrl: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; http2?: boolean } = {},
): Promise<RestResponse> {
  if (init.http2) return restOverHttp2(baseUrl, path, init);
  const response = await fetch(baseUrl + path, {
    method: init.method ?? "GET",
    headers: init.headers,
    body: init.body,
  });
  const text = await response.text();
  return { status: response.status, headers: Object.fromEntries(response.headers), text, json: parse(text) };
}

function restOverHttp2(
  baseUrl: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<RestResponse> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.on("error", reject);
    const request = session.request({ ":method": init.method ?? "GET", ":path": path, ...init.headers });
    const chunks: Buffer[] = [];
    let headers: Record<string, string> = {};
    let status = 0;
    request.on("response", (h) => {
      status = Number(h[":status"]);
      headers = Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v)]));
    });
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      session.close();
      const text = Buffer.concat(chunks).toString("utf8");
      resolve({ status, headers, text, json: parse(text) });
    });
    request.on("error", reject);
    request.end(init.body);
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The error an RPC is expected to fail with; a call that succeeds fails the test. */
export async function rpcError(call: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await call();
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the call succeeded");
}

/** The error a service call (not an RPC) is expected to be refused with. */
export async function refusal(call: () => unknown): Promise<ConnectError> {
  try {
    await call();
  } catch (error) {
    if (error instanceof ConnectError) return error;
    throw error;
  }
  throw new Error("the call was not refused");
}

/** A REST call as an API client makes it: the key (none when null) and a JSON body when there is one. */
export function restWithKey(
  baseUrl: string,
  key: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<RestResponse> {
  const headers: Record<string, string> = key === null ? {} : { "x-api-key": key };
  if (body !== undefined) headers["content-type"] = "application/json";
  return rest(baseUrl, path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A Connect client of one service that sends the key with every call. */
export function clientWithKey<S extends DescService>(service: S, baseUrl: string, key: string): Client<S> {
  const transport = createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    interceptors: [
      (next) => (request) => {
        request.header.set("x-api-key", key);
        return next(request);
      },
    ],
  });
  return createClient(service, transport);
}
