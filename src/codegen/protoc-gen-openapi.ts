import { create, createFileRegistry, type DescService, type FileRegistry } from "@bufbuild/protobuf";
import {
  type CodeGeneratorRequest,
  CodeGeneratorResponse_Feature,
  CodeGeneratorResponseSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { type Plugin, runNodeJs } from "@bufbuild/protoplugin";
import { buildOpenApiDocument } from "./openapi/document.js";
import { SchemaCatalog } from "./openapi/json-schema.js";

/** The document's name under the plugin's `out` directory (buf.gen.yaml). */
const OPENAPI_FILE_NAME = "flowlog.openapi.json";

/**
 * protoc plugin writing the OpenAPI 3.1 document of the REST surface (D2). It reads the routes
 * through the gateway's own module, so the document describes exactly what is served. Inputs
 * without google.api.http rules (reflection, google/rpc) produce no file.
 */
const plugin: Plugin = {
  name: "protoc-gen-openapi",
  version: "v1",
  run(request) {
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: request.protoFile }));
    const catalog = new SchemaCatalog(registry.getExtension("google.api.field_behavior"));
    const document = buildOpenApiDocument(servicesToGenerate(request, registry), catalog);
    const file = document
      ? [{ name: OPENAPI_FILE_NAME, content: `${JSON.stringify(document, null, 2)}\n` }]
      : [];
    return create(CodeGeneratorResponseSchema, {
      supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
      file,
    });
  },
};

function servicesToGenerate(request: CodeGeneratorRequest, registry: FileRegistry): DescService[] {
  return request.fileToGenerate.flatMap((name) => {
    const file = registry.getFile(name);
    if (!file) throw new Error(`the request lacks the descriptor of ${name}`);
    return file.services;
  });
}

runNodeJs(plugin);
