import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import { type HttpRoute, listHttpRoutes, matchRoutes } from "../src/gateway/http-rules.js";
import { buildRequestJson } from "../src/gateway/request-json.js";

const repoRoot = path.resolve(import.meta.dirname, "..");

// A proto written for this test and compiled by the real buf, so the rules are read from real
// descriptors the way the server reads ours.
const testProto = `syntax = "proto3";
package ruletest.v1;
import "google/api/annotations.proto";
service ThingService {
  rpc GetThing(GetThingRequest) returns (Thing) {
    option (google.api.http) = {
      get: "/v1/{name=shelves/*/things/*}"
      additional_bindings { get: "/v1/things/{name}" }
    };
  }
  rpc PublishThing(PublishThingRequest) returns (Thing) {
    option (google.api.http) = { post: "/v1/{thing.name=shelves/*/things/*}:publish" body: "note" };
  }
  rpc ListFiles(ListFilesRequest) returns (Thing) {
    option (google.api.http) = { get: "/v1/files/{path=**}" };
  }
  rpc Plain(Thing) returns (Thing);
}
message Thing { string name = 1; int64 size = 2; }
message GetThingRequest { string name = 1; int64 max_size = 2; repeated int32 tags = 3; Kind kind = 4; }
message PublishThingRequest { Thing thing = 1; Note note = 2; bool dry_run = 3; }
message Note { string text = 1; }
message ListFilesRequest { string path = 1; }
enum Kind { KIND_UNSPECIFIED = 0; KIND_BOOK = 1; }
`;

let routes: HttpRoute[];

beforeAll(() => {
  const dir = mkdtempSync(path.join(tmpdir(), "flowlog-rules-"));
  // Only the two google/api files the annotation needs, linked from the npm package.
  mkdirSync(path.join(dir, "deps/google/api"), { recursive: true });
  for (const file of ["annotations.proto", "http.proto"]) {
    const source = path.join(repoRoot, "node_modules/google-proto-files/google/api", file);
    symlinkSync(source, path.join(dir, "deps/google/api", file));
  }
  mkdirSync(path.join(dir, "src"));
  writeFileSync(path.join(dir, "src/ruletest.proto"), testProto);
  writeFileSync(path.join(dir, "buf.yaml"), "version: v2\nmodules:\n  - path: src\n  - path: deps\n");
  const image = execFileSync(
    path.join(repoRoot, "node_modules/.bin/buf"),
    ["build", "--as-file-descriptor-set", "--path", "src/ruletest.proto", "-o", "-#format=binpb"],
    { cwd: dir },
  );
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, image));
  const service = registry.getService("ruletest.v1.ThingService");
  if (!service) throw new Error("ThingService missing from the test image");
  routes = listHttpRoutes([service]);
}, 60_000);

function match(httpPath: string, httpMethod = "GET") {
  return matchRoutes(routes, httpPath).find((m) => m.route.httpMethod === httpMethod);
}

describe("google.api.http path templates", () => {
  it("turns every binding, additional ones included, into a route; unannotated RPCs get none", () => {
    expect(routes.map((r) => `${r.httpMethod} ${r.template}`)).toEqual([
      "GET /v1/{name=shelves/*/things/*}",
      "GET /v1/things/{name}",
      "POST /v1/{thing.name=shelves/*/things/*}:publish",
      "GET /v1/files/{path=**}",
    ]);
  });

  it("captures a multi-segment variable and names it for OpenAPI", () => {
    const found = match("/v1/shelves/s1/things/t1");
    expect(found?.route.template).toBe("/v1/{name=shelves/*/things/*}");
    expect(found?.pathValues).toEqual(["shelves/s1/things/t1"]);
    expect(found?.route.pattern.openApiPath).toBe("/v1/{name}");
    expect(match("/v1/shelves/s1/things")).toBeUndefined();
  });

  it("matches a custom verb and fills a nested field from the path and a named body field", () => {
    const found = match("/v1/shelves/s1/things/t1:publish", "POST");
    if (!found) throw new Error("no route matched");
    expect(found.route.pattern.openApiPath).toBe("/v1/{thing.name}:publish");
    const built = buildRequestJson(found.route, {
      pathValues: found.pathValues,
      query: new URLSearchParams("dryRun=true"),
      body: { text: "hello" },
    });
    expect(built).toEqual({
      ok: true,
      json: { note: { text: "hello" }, thing: { name: "shelves/s1/things/t1" }, dryRun: true },
    });
  });

  it("lets ** span slashes", () => {
    expect(match("/v1/files/a/b/c.txt")?.pathValues).toEqual(["a/b/c.txt"]);
  });

  it("starts each route's literal prefix at the root and ends it before the first variable or wildcard", () => {
    expect(routes.map((r) => r.pattern.literalPrefix)).toEqual(["/v1/", "/v1/things/", "/v1/", "/v1/files/"]);
  });

  it("matches exactly the routes whose regexp matches: the literal prefix only skips the others", () => {
    const paths = [
      "/v1/shelves/s1/things/t1",
      "/v1/things/t1",
      "/v1/shelves/s1/things/t1:publish",
      "/v1/files/a/b",
      "/v1/files",
      "/v1/thing/t1",
      "/v2/things/t1",
      "/v1/things/",
    ];
    for (const httpPath of paths) {
      const everyRegexp = routes.filter((r) => r.pattern.regexp.test(httpPath));
      const matched = matchRoutes(routes, httpPath).map((m) => m.route);
      expect(new Set(matched), httpPath).toEqual(new Set(everyRegexp));
    }
  });

  it("prefers the template with a custom verb when a wildcard would also match", () => {
    const [first] = matchRoutes(routes, "/v1/shelves/s1/things/t1:publish");
    expect(first?.route.template).toBe("/v1/{thing.name=shelves/*/things/*}:publish");
  });
});

describe("typed conversion of query parameters", () => {
  const getThing = () => routes[1] as HttpRoute;

  it("sends 64-bit integers as strings, enums by name or number, lists from commas", () => {
    const built = buildRequestJson(getThing(), {
      pathValues: ["t1"],
      query: new URLSearchParams("maxSize=9007199254740993&tags=1,2&tags=3&kind=1"),
      body: undefined,
    });
    expect(built).toEqual({
      ok: true,
      json: { name: "t1", maxSize: "9007199254740993", tags: [1, 2, 3], kind: "KIND_BOOK" },
    });
  });

  it("accepts the proto field name as well as the JSON name", () => {
    const built = buildRequestJson(getThing(), {
      pathValues: ["t1"],
      query: new URLSearchParams("max_size=5"),
      body: undefined,
    });
    expect(built).toEqual({ ok: true, json: { name: "t1", maxSize: "5" } });
  });

  it("names each parameter that does not convert", () => {
    const built = buildRequestJson(getThing(), {
      pathValues: ["t1"],
      query: new URLSearchParams("maxSize=1e3&tags=1,x&kind=KIND_FILM"),
      body: undefined,
    });
    expect(built).toEqual({
      ok: false,
      violations: [
        { field: "maxSize", message: "maxSize must be an integer" },
        { field: "tags", message: "tags must be an integer" },
        { field: "kind", message: "kind must be one of KIND_UNSPECIFIED, KIND_BOOK" },
      ],
    });
  });

  it("refuses a 32-bit integer out of range and a single-valued parameter given twice", () => {
    const built = buildRequestJson(getThing(), {
      pathValues: ["t1"],
      query: new URLSearchParams("tags=2147483648&kind=1&kind=0"),
      body: undefined,
    });
    expect(built).toEqual({
      ok: false,
      violations: [
        { field: "tags", message: "tags must be an integer from -2147483648 to 2147483647" },
        { field: "kind", message: "kind must be given once" },
      ],
    });
  });
});
