import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from "@aws-sdk/client-s3";
import { type GoBinary, resolveGoBinary } from "../../src/tools/go-binary.js";
import { freePort } from "../../src/util/free-port.js";

/** MinIO, an S3-compatible object store, built from its Go module like the Temporal CLI (D42's tests). */
export const minio: GoBinary = {
  name: "minio",
  module: "github.com/minio/minio",
  version: "v0.0.0-20260212201848-7aac2a2c5b7c",
  withoutGo: "Install minio, or Go to let the tests build it.",
  buildTime: "about three minutes on two idle cores",
};

export function resolveMinio(): Promise<string> {
  return resolveGoBinary(minio);
}

/** A real S3-compatible server on loopback, with its own empty data folder, and a client of it. */
export interface S3TestServer {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  createBucket(name: string): Promise<void>;
  /** The object an s3://bucket/key URL names. */
  read(url: string): Promise<Buffer>;
  /** The names of the objects under `prefix`, less the prefix, sorted. */
  names(bucket: string, prefix: string): Promise<string[]>;
  /** The keys of multipart uploads begun and neither completed nor aborted. */
  unfinishedUploads(bucket: string): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startS3Server(): Promise<S3TestServer> {
  const binary = await resolveMinio();
  const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-s3-"));
  const port = await freePort();
  const credentials = {
    accessKeyId: "flowlog-test-access",
    secretAccessKey: "flowlog-test-secret-0123456789",
  };
  const child = spawn(binary, ["server", dataDir, "--address", `127.0.0.1:${port}`, "--quiet"], {
    env: {
      ...process.env,
      MINIO_ROOT_USER: credentials.accessKeyId,
      MINIO_ROOT_PASSWORD: credentials.secretAccessKey,
      MINIO_BROWSER: "off",
      MINIO_UPDATE: "off",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await untilLive(`${endpoint}/minio/health/live`, child);
  } catch (error) {
    await stop();
    throw error;
  }
  const client = new S3Client({ region: "us-east-1", endpoint, forcePathStyle: true, credentials });
  return {
    endpoint,
    credentials,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    async read(url) {
      const { host: bucket, pathname } = new URL(url);
      const { Body } = await client.send(new GetObjectCommand({ Bucket: bucket, Key: pathname.slice(1) }));
      if (!(Body instanceof Readable)) throw new Error(`no body for ${url}`);
      const chunks: Buffer[] = [];
      for await (const chunk of Body) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    async names(bucket, prefix) {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      return (listed.Contents ?? []).map((object) => (object.Key ?? "").slice(prefix.length)).sort();
    },
    async unfinishedUploads(bucket) {
      const listed = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
      return (listed.Uploads ?? []).map((upload) => upload.Key ?? "");
    },
    async stop() {
      client.destroy();
      await stop();
    },
  };
}

async function untilLive(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the S3 server exited (${child.exitCode}) before it served`);
    const live = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (live) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the S3 server did not serve ${url} within 60 s`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
