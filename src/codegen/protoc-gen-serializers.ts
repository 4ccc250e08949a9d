import { createEcmaScriptPlugin, runNodeJs } from "@bufbuild/protoplugin";
import { printSerializersFile } from "./serializers/serializers-file.js";

/**
 * protoc plugin writing straight-line JSON and binary serialisers for the answers of the services named by
 * `service=<full name>` options and every message they reach (issue 13): the same text and bytes as
 * protobuf-es's reflective toJson/toBinary, which cost a large share of a log request. Output goes beside
 * the service's own code, `<file>_serializers.ts`; test/generated-serializers.test.ts proves the equality.
 */
const plugin = createEcmaScriptPlugin<{ services: string[] }>({
  name: "protoc-gen-serializers",
  version: "v1",
  parseOptions(options) {
    return {
      services: options.map(({ key, value }) => {
        if (key !== "service") throw new Error(`unknown option ${key}; the plugin takes service=<full name>`);
        return value;
      }),
    };
  },
  generateTs(schema) {
    // buf runs the plugin once per input (buf.gen.yaml); only the one holding a named service writes a file.
    const services = schema.files.flatMap((file) => file.services);
    for (const name of schema.options.services) {
      const service = services.find((s) => s.typeName === name);
      if (service) printSerializersFile(schema.generateFile(`${service.file.name}_serializers.ts`), service);
    }
  },
});

runNodeJs(plugin);
