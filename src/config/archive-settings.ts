import path from "node:path";
import { fileURLToPath } from "node:url";

/** Where D42's archive writes: a local folder, or a bucket and key prefix on an S3-compatible store. */
export type ArchiveTarget = FileArchiveTarget | S3ArchiveTarget;

export interface FileArchiveTarget {
  kind: "file";
  /** An absolute path. */
  directory: string;
}

export interface S3ArchiveTarget {
  kind: "s3";
  bucket: string;
  /** The key prefix, without slashes at either end; "" for the bucket's root. */
  prefix: string;
  /** FLOWLOG_ARCHIVE_S3_ENDPOINT: an S3-compatible store's URL; unset, AWS's own for the region. */
  endpoint: string | undefined;
  region: string;
  /**
   * AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN); unset, the SDK's own chain
   * (a profile, an instance role). Secrets: never logged, never in an error.
   */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
}

/** The archive's target, or the problems that stop the start, each naming its variable (D4). */
export type ArchiveSettings = { target: ArchiveTarget | undefined; problems: [] } | { problems: string[] };

/** The region the SDK needs to sign with when none is set: S3-compatible stores take any. */
const defaultRegion = "us-east-1";

/**
 * FLOWLOG_ARCHIVE_URL (`file:///path` or `s3://bucket/prefix`), FLOWLOG_ARCHIVE_S3_ENDPOINT and the
 * standard AWS variables (D42). The AWS variables are looked at only when the archive goes to S3: other
 * tools of the machine may set them for their own use. Values are never echoed: a URL may carry a secret.
 */
export function archiveSettings(env: NodeJS.ProcessEnv): ArchiveSettings {
  const url = nonEmpty(env.FLOWLOG_ARCHIVE_URL);
  const endpoint = nonEmpty(env.FLOWLOG_ARCHIVE_S3_ENDPOINT);
  const problems: string[] = [];
  const problem = (variable: string, message: string) => problems.push(`${variable}: ${message}`);
  if (url === undefined) {
    if (endpoint !== undefined)
      problem("FLOWLOG_ARCHIVE_S3_ENDPOINT", "is used only with an s3:// FLOWLOG_ARCHIVE_URL");
    return problems.length ? { problems } : { target: undefined, problems: [] };
  }
  const location = archiveLocation(url, problem);
  let target: ArchiveTarget | undefined = location?.kind === "file" ? location : undefined;
  if (location?.kind === "file" && endpoint !== undefined)
    problem("FLOWLOG_ARCHIVE_S3_ENDPOINT", "is used only with an s3:// FLOWLOG_ARCHIVE_URL");
  if (location?.kind === "s3") {
    if (endpoint !== undefined && !isHttpUrl(endpoint))
      problem("FLOWLOG_ARCHIVE_S3_ENDPOINT", "must be an http(s) URL, e.g. http://127.0.0.1:9000");
    const region = nonEmpty(env.AWS_REGION) ?? defaultRegion;
    target = { ...location, endpoint, region, credentials: awsCredentials(env, problem) };
  }
  return problems.length || target === undefined ? { problems } : { target, problems: [] };
}

type ArchiveLocation = FileArchiveTarget | Pick<S3ArchiveTarget, "kind" | "bucket" | "prefix">;

function archiveLocation(
  text: string,
  problem: (variable: string, message: string) => void,
): ArchiveLocation | undefined {
  const expected = "must be file:///path or s3://bucket/prefix";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    problem("FLOWLOG_ARCHIVE_URL", expected);
    return undefined;
  }
  if (url.protocol === "file:") {
    if (url.host !== "" || url.search !== "" || url.hash !== "") {
      problem("FLOWLOG_ARCHIVE_URL", "a file URL names a local folder: file:///path, no host or query");
      return undefined;
    }
    return { kind: "file", directory: path.resolve(fileURLToPath(url)) };
  }
  if (url.protocol === "s3:") {
    // S3's rules for bucket names: 3 to 63 lowercase letters, digits, dots and hyphens.
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(url.hostname) || url.port !== "") {
      problem("FLOWLOG_ARCHIVE_URL", "s3://bucket/prefix needs a bucket name of 3 to 63 a-z, 0-9, . and -");
      return undefined;
    }
    if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
      problem(
        "FLOWLOG_ARCHIVE_URL",
        "s3://bucket/prefix takes no credentials or query: use the AWS variables",
      );
      return undefined;
    }
    const prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, "");
    return { kind: "s3", bucket: url.hostname, prefix };
  }
  problem("FLOWLOG_ARCHIVE_URL", expected);
  return undefined;
}

function awsCredentials(
  env: NodeJS.ProcessEnv,
  problem: (variable: string, message: string) => void,
): S3ArchiveTarget["credentials"] {
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
  if (accessKeyId === undefined && secretAccessKey === undefined) return undefined;
  if (accessKeyId === undefined) problem("AWS_ACCESS_KEY_ID", "must be set with AWS_SECRET_ACCESS_KEY");
  if (secretAccessKey === undefined) problem("AWS_SECRET_ACCESS_KEY", "must be set with AWS_ACCESS_KEY_ID");
  if (accessKeyId === undefined || secretAccessKey === undefined) return undefined;
  return sessionToken === undefined
    ? { accessKeyId, secretAccessKey }
    : { accessKeyId, secretAccessKey, sessionToken };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (
      (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === ""
    );
  } catch {
    return false;
  }
}
