import { execFile } from "node:child_process";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowsService } from "../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { ConfigError } from "../src/config/config.js";
import { resolveReferences } from "../src/engine/references.js";
import { decryptSecret, encryptSecret, loadMasterKey, masterKeyFile } from "../src/security/secrets.js";
import { openStore } from "../src/store/store.js";
import { restWithKey, rpcError } from "./support/api-server.js";
import { createAccount, startFlowlog, type TestAccount, type TestFlowlog } from "./support/flowlog.js";

/** Values no response, error, log line or database page may ever contain (D24). */
const secrets = {
  token: "sk-live-4f9c2a7e-token-value",
  replaced: "sk-live-second-value-88d1",
  password: "hunter2-correct-horse-battery",
};

let flowlog: TestFlowlog;
let alice: TestAccount;
let bob: TestAccount;
const output: string[] = [];
const restoreOutput: (() => void)[] = [];

beforeAll(async () => {
  // Everything the process prints while the API handles secrets, including the server's own log.
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      output.push(String(chunk));
      return write(chunk, ...rest);
    }) as typeof stream.write;
    restoreOutput.push(() => {
      stream.write = write;
    });
  }
  flowlog = await startFlowlog();
  alice = await createAccount(flowlog.store);
  bob = await createAccount(flowlog.store);
});
afterAll(async () => {
  for (const restore of restoreOutput) restore();
  await flowlog.close();
});

const variablePath = (name: string, workspaceId = alice.workspaceId) =>
  `/api/v1/workspaces/${workspaceId}/environment/${name}`;

/** A REST call with a key (Alice's unless another is given) and a JSON body when there is one. */
const call = (method: string, path: string, body?: unknown, key: string | null = alice.key) =>
  restWithKey(flowlog.server.url, key, method, path, body);

function expectNoSecretIn(text: string) {
  for (const value of Object.values(secrets)) expect(text).not.toContain(value);
}

describe("workspace environment variables over the API (D14, D24)", () => {
  it("a set value comes back as its name and update time, never as the value", async () => {
    const response = await call("PUT", variablePath("API_TOKEN"), { value: secrets.token });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      variable: { name: "API_TOKEN", updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*\.\d{3}Z$/) },
    });
    expectNoSecretIn(response.text);
  });

  it("lists names and update times only", async () => {
    await call("PUT", variablePath("DB_PASSWORD"), { value: secrets.password });
    const response = await call("GET", `/api/v1/workspaces/${alice.workspaceId}/environment`);
    expect(response.status).toBe(200);
    const { variables } = response.json as { variables: Record<string, unknown>[] };
    expect(variables.map((v) => v.name)).toEqual(["API_TOKEN", "DB_PASSWORD"]);
    for (const variable of variables) expect(Object.keys(variable)).toEqual(["name", "updatedAt"]);
    expectNoSecretIn(response.text);
  });

  it("the engine reads the plaintext, and {{NAME}} resolves to it", async () => {
    const env = await flowlog.store.environment.getDecrypted(alice.workspaceId);
    expect(env).toEqual({ API_TOKEN: secrets.token, DB_PASSWORD: secrets.password });
    expect(resolveReferences("Bearer {{API_TOKEN}}", { outputs: {}, env })).toBe(`Bearer ${secrets.token}`);
  });

  it("setting a variable again replaces its value and moves updatedAt", async () => {
    const [before] = await flowlog.store.environment.list(alice.workspaceId);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await call("PUT", variablePath("API_TOKEN"), { value: secrets.replaced });
    const [after] = await flowlog.store.environment.list(alice.workspaceId);
    expect(after?.createdAt).toBe(before?.createdAt);
    expect(after?.updatedAt).toBeGreaterThan(before?.updatedAt ?? 0);
    expect((await flowlog.store.environment.getDecrypted(alice.workspaceId)).API_TOKEN).toBe(
      secrets.replaced,
    );
  });

  it("the same RPCs over gRPC: no response message has a value field", async () => {
    const client = createClient(WorkflowsService, createGrpcTransport({ baseUrl: flowlog.server.url }));
    const headers = { "x-api-key": alice.key };
    const set = await client.setEnvironmentVariable(
      { workspaceId: alice.workspaceId, name: "GRPC_SECRET", value: secrets.password },
      { headers },
    );
    expect(Object.keys(set.variable ?? {})).not.toContain("value");
    const listed = await client.listEnvironmentVariables({ workspaceId: alice.workspaceId }, { headers });
    expect(listed.variables.map((v) => v.name)).toContain("GRPC_SECRET");
    await client.deleteEnvironmentVariable(
      { workspaceId: alice.workspaceId, name: "GRPC_SECRET" },
      { headers },
    );
    const again = await rpcError(() =>
      client.deleteEnvironmentVariable({ workspaceId: alice.workspaceId, name: "GRPC_SECRET" }, { headers }),
    );
    expect(again.code).toBe(Code.NotFound);
  });

  it("refuses bad names and oversized values without repeating the value", async () => {
    const badName = await call("PUT", variablePath("1TOKEN"), { value: secrets.token });
    expect(badName.status).toBe(400);
    expect(badName.json).toMatchObject({ errors: [{ field: "name" }] });
    expectNoSecretIn(badName.text);
    const huge = `${secrets.token}${"x".repeat(64 * 1024)}`;
    const tooBig = await call("PUT", variablePath("HUGE"), { value: huge });
    expect(tooBig.status).toBe(400);
    expect(tooBig.json).toMatchObject({
      errors: [{ field: "value", message: "value must be at most 65536 bytes" }],
    });
    expectNoSecretIn(tooBig.text);
    const missing = await call("PUT", variablePath("EMPTY"), {});
    expect(missing.json).toMatchObject({ errors: [{ field: "value", message: "value is required" }] });
  });

  it("another workspace is 403 on set, list and delete, and the refusal holds no value", async () => {
    const set = await call(
      "PUT",
      variablePath("STOLEN", alice.workspaceId),
      { value: secrets.token },
      bob.key,
    );
    expect(set.status).toBe(403);
    expectNoSecretIn(set.text);
    expect(
      (await call("GET", `/api/v1/workspaces/${alice.workspaceId}/environment`, undefined, bob.key)).status,
    ).toBe(403);
    expect((await call("DELETE", variablePath("API_TOKEN"), undefined, bob.key)).status).toBe(403);
    expect(await flowlog.store.environment.getDecrypted(bob.workspaceId)).toEqual({});
  });

  it("deletes a variable; a second delete is 404", async () => {
    await call("PUT", variablePath("TEMPORARY"), { value: "short-lived" });
    expect((await call("DELETE", variablePath("TEMPORARY"))).status).toBe(200);
    const again = await call("DELETE", variablePath("TEMPORARY"));
    expect(again.status).toBe(404);
    expect(again.json).toMatchObject({ detail: "environment variable TEMPORARY not found" });
  });

  it("no value reached the process output (the server's log included)", () => {
    expectNoSecretIn(output.join(""));
  });
});

describe("encryption at rest (D24)", () => {
  it("the database holds no plaintext value", async () => {
    expect(await flowlog.holds("API_TOKEN")).toBe(true);
    for (const value of Object.values(secrets)) expect(await flowlog.holds(value)).toBe(false);
  });

  it("a ciphertext copied to another variable or workspace fails to decrypt, naming the variable only", async () => {
    await flowlog.store.environment.set(bob.workspaceId, "TOKEN", "bob's own", Date.now());
    // As someone with write access to the database would, copying one sealed value over another.
    const copy = (from: [string, string], to: [string, string]) =>
      flowlog.sql(
        `UPDATE environment_variables SET sealed_value =
           (SELECT sealed_value FROM environment_variables WHERE workspace_id = @fromWorkspace AND name = @fromName)
         WHERE workspace_id = @toWorkspace AND name = @toName`,
        { fromWorkspace: from[0], fromName: from[1], toWorkspace: to[0], toName: to[1] },
      );
    await copy([alice.workspaceId, "DB_PASSWORD"], [alice.workspaceId, "API_TOKEN"]);
    await expect(flowlog.store.environment.getDecrypted(alice.workspaceId)).rejects.toThrow(
      `secret environment/${alice.workspaceId}/API_TOKEN could not be decrypted`,
    );
    await copy([alice.workspaceId, "DB_PASSWORD"], [bob.workspaceId, "TOKEN"]);
    await expect(flowlog.store.environment.getDecrypted(bob.workspaceId)).rejects.toThrow(
      /could not be decrypted/,
    );
  });

  it("a secret sealed under one context or key opens under no other", () => {
    const key = loadMasterKey({ dataDir: flowlog.dataDir, masterKey: undefined });
    const sealed = encryptSecret(key, secrets.token, ["environment", "ws_a", "A"]);
    expect(decryptSecret(key, sealed, ["environment", "ws_a", "A"])).toBe(secrets.token);
    expect(() => decryptSecret(key, sealed, ["environment", "ws_a", "B"])).toThrow(/could not be decrypted/);
    // The parts of a context stay apart: ("ws_a", "A") is not ("ws_", "aA").
    expect(() => decryptSecret(key, sealed, ["environment", "ws_", "aA"])).toThrow(/could not be decrypted/);
    const otherKey = Buffer.alloc(32, 7);
    expect(() => decryptSecret(otherKey, sealed, ["environment", "ws_a", "A"])).toThrow(
      /could not be decrypted/,
    );
    // A fresh IV each time: the same value never seals to the same bytes.
    expect(encryptSecret(key, secrets.token, ["x"]).equals(encryptSecret(key, secrets.token, ["x"]))).toBe(
      false,
    );
  });
});

describe("the master key (D4)", () => {
  const freshDir = () => mkdtempSync(path.join(tmpdir(), "flowlog-key-"));

  it("is generated into the data dir on first start, readable by its owner only, and kept", () => {
    const dataDir = freshDir();
    const first = loadMasterKey({ dataDir, masterKey: undefined });
    expect(first).toHaveLength(32);
    expect(statSync(masterKeyFile(dataDir)).mode & 0o777).toBe(0o600);
    expect(loadMasterKey({ dataDir, masterKey: undefined }).equals(first)).toBe(true);
  });

  it("FLOWLOG_MASTER_KEY is read as base64 or hex, and wins over the file", () => {
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7));
    const dataDir = freshDir();
    for (const text of [bytes.toString("base64"), bytes.toString("base64url"), bytes.toString("hex")]) {
      expect(loadMasterKey({ dataDir, masterKey: text }).equals(bytes)).toBe(true);
    }
  });

  it("a key that is not 32 bytes stops the start with a message naming the variable, not the key", () => {
    for (const bad of [
      "too-short",
      Buffer.alloc(16).toString("hex"),
      `${Buffer.alloc(32).toString("hex")}00`,
    ]) {
      const error = (() => {
        try {
          loadMasterKey({ dataDir: freshDir(), masterKey: bad });
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual([
        "FLOWLOG_MASTER_KEY: must be a 32-byte key in base64 (44 characters) or hex (64 digits)",
      ]);
      expect((error as Error).message).not.toContain(bad);
    }
  });

  it("a store opened with another key cannot read the variables", async () => {
    const dataDir = freshDir();
    const first = openStore({ dataDir, masterKey: Buffer.alloc(32, 1).toString("hex") });
    const account = await createAccount(first);
    await first.environment.set(account.workspaceId, "TOKEN", secrets.token, Date.now());
    await first.close();
    const second = openStore({ dataDir, masterKey: Buffer.alloc(32, 2).toString("hex") });
    try {
      await expect(second.environment.getDecrypted(account.workspaceId)).rejects.toThrow(
        /could not be decrypted/,
      );
    } finally {
      await second.close();
    }
  });

  it("the flowlog command refuses a bad FLOWLOG_MASTER_KEY with exit code 2", async () => {
    const env = { ...process.env, FLOWLOG_DATA_DIR: freshDir(), FLOWLOG_MASTER_KEY: "not-a-key" };
    const error = await promisify(execFile)("node", ["bin/flowlog.js", "user", "list"], { env }).catch(
      (caught: { code: number; stderr: string }) => caught,
    );
    expect(error).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("FLOWLOG_MASTER_KEY: must be a 32-byte key"),
    });
  });
});
