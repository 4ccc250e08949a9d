import type { DescField, DescMessage } from "@bufbuild/protobuf";

/** The names of the generated functions of each message: `logEntryJson` and `writeLogEntry`. */
export interface WriterNames {
  json(message: DescMessage): string;
  binary(message: DescMessage): string;
}

/** Names for `messages`, each distinct from the others and from `taken`; JSON writers for `withJson` only. */
export function writerNames(
  messages: readonly DescMessage[],
  taken: Iterable<string>,
  withJson: (message: DescMessage) => boolean,
): WriterNames {
  const used = new Set(taken);
  const json = new Map<string, string>();
  const binary = new Map<string, string>();
  const name = (names: Map<string, string>, message: DescMessage, chosen: string) => {
    if (used.has(chosen)) throw new Error(`${message.typeName}: the generated name ${chosen} is taken`);
    used.add(chosen);
    names.set(message.typeName, chosen);
  };
  for (const message of messages) {
    if (withJson(message))
      name(json, message, `${message.name[0]?.toLowerCase()}${message.name.slice(1)}Json`);
    name(binary, message, `write${message.name}`);
  }
  const lookUp = (names: Map<string, string>, message: DescMessage) => {
    const name = names.get(message.typeName);
    if (name === undefined) throw new Error(`${message.typeName} is not among the generated messages`);
    return name;
  };
  return { json: (message) => lookUp(json, message), binary: (message) => lookUp(binary, message) };
}

/**
 * The plugin writes the field kinds the answers use, each proven by the differential test
 * (test/generated-serializers.test.ts); anything else stops generation rather than guess.
 */
export function unsupported(field: DescField, what: string): Error {
  return new Error(
    `protoc-gen-serializers cannot write ${field.parent.typeName}.${field.name} (${what}) yet: ` +
      "teach src/codegen/serializers/ and extend test/generated-serializers.test.ts",
  );
}
