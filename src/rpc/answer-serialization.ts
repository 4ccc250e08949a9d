import {
  type BinaryWriteOptions,
  type DescMessage,
  type JsonWriteOptions,
  type Message,
  toBinary,
} from "@bufbuild/protobuf";
import { answerSerializers } from "../../gen/flowlog/logs/v1/logs_service_serializers.js";
import { toJsonWithPresence } from "../codegen/serializers/runtime/presence.js";

/**
 * How answers are written on every protocol (REST bodies are the Connect JSON bytes), given to the Connect
 * router. Implicit values are always written (D7: totalDurationMs 0, cost.total 0 and isExceeded false are
 * facts, not omissions), except the parts a view marks as not asked for (D30). `writeJson` and `writeBinary`
 * are our connect-es patch's hooks (patches/README.md).
 */
export const answerSerialization = {
  jsonOptions: { alwaysEmitImplicit: true, writeJson } as Partial<JsonWriteOptions>,
  binaryOptions: { writeBinary } as Partial<BinaryWriteOptions>,
};

/**
 * The log read API's answers have serialisers generated from their descriptors (protoc-gen-serializers):
 * straight-line code that writes what protobuf-es's reflection writes, a large share of a log request's
 * time less (issue 13). They implement exactly the options above; every other answer goes to reflection.
 */
function writeJson(schema: DescMessage, message: Message, options: Partial<JsonWriteOptions>): string {
  const generated = answerSerializers.get(schema.typeName);
  return generated ? generated.json(message) : JSON.stringify(toJsonWithPresence(schema, message, options));
}

function writeBinary(
  schema: DescMessage,
  message: Message,
  options: Partial<BinaryWriteOptions>,
): Uint8Array {
  const generated = answerSerializers.get(schema.typeName);
  return generated ? generated.binary(message) : toBinary(schema, message, options);
}
