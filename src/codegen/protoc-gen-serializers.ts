import { createEcmaScriptPlugin, runNodeJs } from "@bufbuild/protoplugin";
import { printSerializersFile } from "./serializers/serializers-file.js";

interface Options {
  /** `service=<full name>`: the services whose answers get serialisers. */
  services: string[];
  /** `read=<full name>`: messages among those answers that are stored as protobuf JSON and read back. */
  read: string[];
  /** `json=<full name>`: messages among those answers whose JSON writer is exported, to write them alone. */
  json: string[];
  /** `stored=<full name>`: messages among those answers that a view may keep as their stored JSON text. */
  stored: string[];
}

/**
 * protoc plugin writing straight-line JSON and binary serialisers for the answers of the services named by
 * `service=` options and every message they reach (issue 13): the same text and bytes as protobuf-es's
 * reflective toJson/toBinary, which cost a large share of a log request; and, for the messages named by
 * `read=`, readers that build what fromJson builds from their stored JSON; for those named by `json=`, their
 * JSON writer exported, for what writes them one by one rather than inside an answer (D45's export lines,
 * D42's archive); for those named by `stored=`, a check of stored JSON and JSON writers that write a message
 * carrying its canonical text as that text (a log entry's cost, issue 53). Output goes beside the service's
 * own code, `<file>_serializers.ts`; test/generated-serializers.test.ts proves the equality.
 */
const plugin = createEcmaScriptPlugin<Options>({
  name: "protoc-gen-serializers",
  version: "v1",
  parseOptions(options) {
    const parsed: Options = { services: [], read: [], json: [], stored: [] };
    for (const { key, value } of options) {
      if (key === "service") parsed.services.push(value);
      else if (key === "read") parsed.read.push(value);
      else if (key === "json") parsed.json.push(value);
      else if (key === "stored") parsed.stored.push(value);
      else
        throw new Error(
          `unknown option ${key}; the plugin takes service=, read=, json= and stored=, each with a full name`,
        );
    }
    return parsed;
  },
  generateTs(schema) {
    // buf runs the plugin once per input (buf.gen.yaml); only the one holding a named service writes a file.
    const services = schema.files.flatMap((file) => file.services);
    for (const name of schema.options.services) {
      const service = services.find((s) => s.typeName === name);
      if (!service) continue;
      const file = schema.generateFile(`${service.file.name}_serializers.ts`);
      printSerializersFile(file, service, schema.options);
    }
  },
});

runNodeJs(plugin);
