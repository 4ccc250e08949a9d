import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/config.js";

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("the configuration was accepted");
}

const secret = "s3cr3t-value-never-echoed";

describe("D42: the archive's target, FLOWLOG_ARCHIVE_URL with FLOWLOG_ARCHIVE_S3_ENDPOINT and the AWS variables", () => {
  it("is off by default, whatever AWS variables the machine has for other tools", () => {
    expect(loadConfig({}).archive).toBeUndefined();
    expect(loadConfig({ AWS_ACCESS_KEY_ID: "AKIA0000", AWS_REGION: "eu-west-1" }).archive).toBeUndefined();
  });

  it("file:///path names a local folder", () => {
    expect(loadConfig({ FLOWLOG_ARCHIVE_URL: "file:///var/lib/flowlog/archive/" }).archive).toEqual({
      kind: "file",
      directory: "/var/lib/flowlog/archive",
    });
  });

  it("s3://bucket/prefix names a bucket and a key prefix, with the endpoint, region and keys of the variables", () => {
    const config = loadConfig({
      FLOWLOG_ARCHIVE_URL: "s3://flowlog-archive/logs/eu/",
      FLOWLOG_ARCHIVE_S3_ENDPOINT: "http://127.0.0.1:9000",
      AWS_REGION: "eu-central-1",
      AWS_ACCESS_KEY_ID: "flowlog",
      AWS_SECRET_ACCESS_KEY: secret,
    });
    expect(config.archive).toEqual({
      kind: "s3",
      bucket: "flowlog-archive",
      prefix: "logs/eu",
      endpoint: "http://127.0.0.1:9000",
      region: "eu-central-1",
      credentials: { accessKeyId: "flowlog", secretAccessKey: secret },
    });
  });

  it("s3://bucket alone writes at the bucket's root; without keys the SDK's own chain finds them", () => {
    expect(loadConfig({ FLOWLOG_ARCHIVE_URL: "s3://flowlog-archive" }).archive).toEqual({
      kind: "s3",
      bucket: "flowlog-archive",
      prefix: "",
      endpoint: undefined,
      region: "us-east-1",
      credentials: undefined,
    });
  });

  it("a bad value stops the start, naming the variable and never echoing a value", () => {
    const cases: [NodeJS.ProcessEnv, RegExp][] = [
      [
        { FLOWLOG_ARCHIVE_URL: "/var/archive" },
        /^FLOWLOG_ARCHIVE_URL: must be file:\/\/\/path or s3:\/\/bucket\/prefix$/,
      ],
      [{ FLOWLOG_ARCHIVE_URL: "https://example.test/archive" }, /^FLOWLOG_ARCHIVE_URL: must be file/],
      [
        { FLOWLOG_ARCHIVE_URL: "file://host/archive" },
        /^FLOWLOG_ARCHIVE_URL: a file URL names a local folder/,
      ],
      [
        { FLOWLOG_ARCHIVE_URL: "s3://Bad_Bucket/x" },
        /^FLOWLOG_ARCHIVE_URL: s3:\/\/bucket\/prefix needs a bucket name/,
      ],
      [
        { FLOWLOG_ARCHIVE_URL: `s3://key:${secret}@bucket/x` },
        /^FLOWLOG_ARCHIVE_URL: .* use the AWS variables$/,
      ],
      [
        { FLOWLOG_ARCHIVE_URL: "s3://bucket/x", FLOWLOG_ARCHIVE_S3_ENDPOINT: `ftp://${secret}` },
        /^FLOWLOG_ARCHIVE_S3_ENDPOINT: must be an http\(s\) URL/,
      ],
      [
        { FLOWLOG_ARCHIVE_S3_ENDPOINT: "http://127.0.0.1:9000" },
        /^FLOWLOG_ARCHIVE_S3_ENDPOINT: is used only with/,
      ],
      [
        { FLOWLOG_ARCHIVE_URL: "file:///archive", FLOWLOG_ARCHIVE_S3_ENDPOINT: "http://127.0.0.1:9000" },
        /^FLOWLOG_ARCHIVE_S3_ENDPOINT: is used only with/,
      ],
      [
        { FLOWLOG_ARCHIVE_URL: "s3://bucket/x", AWS_SECRET_ACCESS_KEY: secret },
        /^AWS_ACCESS_KEY_ID: must be set with AWS_SECRET_ACCESS_KEY$/,
      ],
      [
        { FLOWLOG_ARCHIVE_URL: "s3://bucket/x", AWS_ACCESS_KEY_ID: secret },
        /^AWS_SECRET_ACCESS_KEY: must be set with AWS_ACCESS_KEY_ID$/,
      ],
    ];
    for (const [env, problem] of cases) {
      const problems = problemsOf(env);
      expect(problems, JSON.stringify(env)).toEqual([expect.stringMatching(problem)]);
      expect(problems.join("\n")).not.toContain(secret);
    }
  });

  it("its problems come with the other variables' in one round", () => {
    expect(problemsOf({ PORT: "http", FLOWLOG_ARCHIVE_URL: "nowhere" })).toEqual([
      expect.stringMatching(/^PORT: /),
      expect.stringMatching(/^FLOWLOG_ARCHIVE_URL: /),
    ]);
  });
});
