import type { DescFile, DescService, Registry } from "@bufbuild/protobuf";
import { create, createRegistry, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { Code } from "@connectrpc/connect";
import type {
  ServerReflectionRequest,
  ServerReflectionResponse,
} from "../../gen/grpc/reflection/v1/reflection_pb.js";
import {
  ErrorResponseSchema,
  ExtensionNumberResponseSchema,
  FileDescriptorResponseSchema,
  ListServiceResponseSchema,
  ServerReflection,
  ServerReflectionRequestSchema,
  ServerReflectionResponseSchema,
} from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";

/**
 * gRPC server reflection, v1 and v1alpha, so grpcurl, buf curl, Postman and language clients
 * discover the services without our .proto files. The descriptors are the ones embedded in the
 * generated code: the same source as everything else we serve (D2).
 */
export function registerReflection(router: ConnectRouter, services: DescService[]): void {
  const reflection = createReflection(services);
  router.service(ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) yield reflection.answer(request);
    },
  });
  // v1alpha messages are wire-compatible with v1; older clients (grpcurl before 1.8, Postman)
  // still ask the alpha service, so it answers through the same code.
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        const asV1 = fromBinary(
          ServerReflectionRequestSchema,
          toBinary(v1alpha.ServerReflectionRequestSchema, request),
        );
        const answer = reflection.answer(asV1);
        yield fromBinary(
          v1alpha.ServerReflectionResponseSchema,
          toBinary(ServerReflectionResponseSchema, answer),
        );
      }
    },
  });
}

function createReflection(services: DescService[]) {
  const served = [...services, ServerReflection, v1alpha.ServerReflection];
  const files = closure(served.map((s) => s.file));
  const catalog: Catalog = {
    registry: createRegistry(...files),
    files: new Map(files.map((f) => [f.name, f])),
    serviceNames: served.map((s) => s.typeName).sort(),
  };
  return {
    answer: (request: ServerReflectionRequest): ServerReflectionResponse =>
      create(ServerReflectionResponseSchema, {
        validHost: request.host,
        originalRequest: request,
        messageResponse: resolve(catalog, request),
      }),
  };
}

interface Catalog {
  registry: Registry;
  files: Map<string, DescFile>;
  serviceNames: string[];
}

type MessageResponse = ServerReflectionResponse["messageResponse"];

function resolve(
  { registry, files, serviceNames }: Catalog,
  request: ServerReflectionRequest,
): MessageResponse {
  const message = request.messageRequest;
  switch (message.case) {
    case "listServices": {
      const value = create(ListServiceResponseSchema, { service: serviceNames.map((name) => ({ name })) });
      return { case: "listServicesResponse", value };
    }
    case "fileByFilename":
      return fileResponse(files.get(message.value), `file ${message.value}`);
    case "fileContainingSymbol":
      return fileResponse(fileOfSymbol(registry, message.value), `symbol ${message.value}`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = message.value;
      const extension = [...registry].find(
        (d) =>
          d.kind === "extension" && d.extendee.typeName === containingType && d.number === extensionNumber,
      );
      return fileResponse(extension?.file, `extension ${extensionNumber} of ${containingType}`);
    }
    case "allExtensionNumbersOfType": {
      const numbers = [...registry]
        .filter((d) => d.kind === "extension" && d.extendee.typeName === message.value)
        .map((d) => (d.kind === "extension" ? d.number : 0));
      const value = create(ExtensionNumberResponseSchema, {
        baseTypeName: message.value,
        extensionNumber: numbers,
      });
      return { case: "allExtensionNumbersResponse", value };
    }
    default:
      return notFound("an empty request");
  }
}

function fileOfSymbol(registry: Registry, symbol: string): DescFile | undefined {
  const direct = registry.get(symbol);
  if (direct) return direct.file;
  // A method is named Service.Method; its file is the service's.
  const service = registry.getService(symbol.slice(0, symbol.lastIndexOf(".")));
  return service?.file;
}

/** The file and every file it imports, so a client can build the descriptors in one round. */
function fileResponse(file: DescFile | undefined, what: string): MessageResponse {
  if (!file) return notFound(what);
  const fileDescriptorProto = closure([file]).map((f) => toBinary(FileDescriptorProtoSchema, f.proto));
  return {
    case: "fileDescriptorResponse",
    value: create(FileDescriptorResponseSchema, { fileDescriptorProto }),
  };
}

function notFound(what: string): MessageResponse {
  const value = create(ErrorResponseSchema, { errorCode: Code.NotFound, errorMessage: `${what} not found` });
  return { case: "errorResponse", value };
}

function closure(files: DescFile[]): DescFile[] {
  const seen = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (seen.has(file.name)) return;
    seen.set(file.name, file);
    file.dependencies.forEach(visit);
  };
  files.forEach(visit);
  return [...seen.values()];
}
