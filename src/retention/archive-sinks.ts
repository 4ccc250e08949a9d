import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { pathToFileURL } from "node:url";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { ArchiveTarget, FileArchiveTarget, S3ArchiveTarget } from "../config/archive-settings.js";

/** An object's size and SHA-256 (lowercase hex): what D42 verifies an archive by. */
export interface ObjectMeasure {
  bytes: number;
  sha256: string;
}

/**
 * Where archive objects go (D42): a local folder or an S3-compatible bucket. Keys are relative
 * (`<workspaceId>/<yyyy-mm-dd>.ndjson.gz`); writing a key again replaces its object, under the same name.
 */
export interface ArchiveSink {
  /** The object's address, for the catalogue and the operator: file:///… or s3://bucket/key. */
  urlOf(key: string): string;
  /** Writes `body` whole as the object at `key`; rejects, leaving no object of it under `key` new, on any error. */
  write(key: string, body: Readable, signal?: AbortSignal): Promise<void>;
  /** Reads the stored object back and measures it. */
  readBack(key: string): Promise<ObjectMeasure>;
}

export function archiveSink(target: ArchiveTarget): ArchiveSink {
  return target.kind === "file" ? new FileArchiveSink(target) : new S3ArchiveSink(target);
}

/**
 * A pass-through that measures what flows: `measure()` once the stream has ended. The archive hashes
 * the bytes as it writes them, so verifying needs only the read back.
 */
export function measuringStream(): Transform & { measure(): ObjectMeasure } {
  const hash = createHash("sha256");
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  let digest: string | undefined;
  return Object.assign(stream, {
    measure: () => {
      digest ??= hash.digest("hex");
      return { bytes, sha256: digest };
    },
  });
}

async function measureAll(body: AsyncIterable<Uint8Array>): Promise<ObjectMeasure> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of body) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { bytes, sha256: hash.digest("hex") };
}

/**
 * Objects as files under a folder. A file is written under a fixed temporary name beside it, flushed to
 * disk and renamed into place, so the name holds a whole object or none: a run interrupted at any point
 * leaves at most `<name>.partial`, which the next run of the same day overwrites.
 */
class FileArchiveSink implements ArchiveSink {
  constructor(private readonly target: FileArchiveTarget) {}

  urlOf(key: string): string {
    return pathToFileURL(this.pathOf(key)).href;
  }

  async write(key: string, body: Readable, signal?: AbortSignal): Promise<void> {
    const file = this.pathOf(key);
    const partial = `${file}.partial`;
    await mkdir(path.dirname(file), { recursive: true });
    try {
      await pipeline(body, createWriteStream(partial, { flush: true }), { signal });
      await rename(partial, file);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    // The rename itself is on disk only once the folder is.
    const folder = await open(path.dirname(file), "r");
    try {
      await folder.sync();
    } finally {
      await folder.close();
    }
  }

  /** Read into one buffer again and again: a stream's fresh chunk per read piled up outside the heap. */
  async readBack(key: string): Promise<ObjectMeasure> {
    const file = await open(this.pathOf(key), "r");
    try {
      const hash = createHash("sha256");
      const buffer = Buffer.allocUnsafe(readBackBytes);
      let bytes = 0;
      for (;;) {
        const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) return { bytes, sha256: hash.digest("hex") };
        hash.update(buffer.subarray(0, bytesRead));
        bytes += bytesRead;
      }
    } finally {
      await file.close();
    }
  }

  private pathOf(key: string): string {
    return path.join(this.target.directory, ...key.split("/"));
  }
}

const readBackBytes = 1024 * 1024;

/**
 * Objects in an S3-compatible bucket under the target's prefix, uploaded as a stream in parts (a
 * multipart upload, which S3 shows under the key only once completed, and aborts on an error). Parts are
 * small and few in flight, so memory stays flat whatever the day's size. The SDK's own checksums are
 * asked only where an operation requires them: some S3-compatible stores refuse the newer ones, and the
 * read back verifies the object end to end anyway.
 */
class S3ArchiveSink implements ArchiveSink {
  private readonly client: S3Client;

  constructor(private readonly target: S3ArchiveTarget) {
    this.client = new S3Client({
      region: target.region,
      endpoint: target.endpoint,
      // S3-compatible stores serve buckets under the path; AWS's own serves both.
      forcePathStyle: target.endpoint !== undefined,
      credentials: target.credentials,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  urlOf(key: string): string {
    return `s3://${this.target.bucket}/${this.objectKey(key)}`;
  }

  async write(key: string, body: Readable, signal?: AbortSignal): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.target.bucket,
        Key: this.objectKey(key),
        Body: body,
        ContentType: "application/gzip",
      },
      partSize: s3PartBytes,
      queueSize: 2,
      leavePartsOnError: false,
    });
    const abort = () => void upload.abort();
    signal?.addEventListener("abort", abort, { once: true });
    try {
      signal?.throwIfAborted();
      await upload.done();
      signal?.throwIfAborted();
    } catch (error) {
      throw s3Failure(`writing ${this.urlOf(key)}`, error, this.target);
    } finally {
      signal?.removeEventListener("abort", abort);
    }
  }

  async readBack(key: string): Promise<ObjectMeasure> {
    try {
      const { Body } = await this.client.send(
        new GetObjectCommand({ Bucket: this.target.bucket, Key: this.objectKey(key) }),
      );
      if (!(Body instanceof Readable)) throw new Error("the object has no body");
      return await measureAll(Body);
    } catch (error) {
      throw s3Failure(`reading back ${this.urlOf(key)}`, error, this.target);
    }
  }

  private objectKey(key: string): string {
    return this.target.prefix === "" ? key : `${this.target.prefix}/${key}`;
  }
}

/** S3's smallest part but the last: memory per upload is about this times the parts in flight. */
const s3PartBytes = 5 * 1024 * 1024;

/**
 * An S3 error as an error of our own: its name and message only. The SDK's error carries the store's
 * answer, whose fields can name the access key and the request's signing material; none of it may reach a
 * log line, an API answer or Temporal's history, so it is neither kept as the cause nor copied.
 */
function s3Failure(what: string, error: unknown, target: S3ArchiveTarget): Error {
  const { name, message } = error instanceof Error ? error : { name: "Error", message: String(error) };
  let safe = `${name}: ${message}`;
  const { accessKeyId, secretAccessKey, sessionToken } = target.credentials ?? {};
  for (const secret of [accessKeyId, secretAccessKey, sessionToken]) {
    if (secret) safe = safe.replaceAll(secret, "[redacted]");
  }
  return new ArchiveStoreError(`archive ${what} failed: ${safe}`);
}

export class ArchiveStoreError extends Error {
  override name = "ArchiveStoreError";
}
