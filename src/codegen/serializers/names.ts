import type { DescField, DescMessage } from "@bufbuild/protobuf";

/**
 * The names of the generated functions of each message: `logEntryJson` and `writeLogEntry`, and for the
 * messages read back from JSON `readTraceSpan`, `isCanonicalTraceSpan`, `writeTraceSpanFromJson` and the
 * exported `traceSpanFromJson`; for those kept as their stored text, `isCanonicalCost`.
 */
export interface WriterNames {
  json(message: DescMessage): string;
  binary(message: DescMessage): string;
  reader(message: DescMessage): string;
  fromJson(message: DescMessage): string;
  /** `isCanonical<Message>`, for the messages read back from JSON or kept as their stored text. */
  canonical(message: DescMessage): string;
  /** `write<Message>FromJson`, for the messages read back from JSON. */
  binaryFromJson(message: DescMessage): string;
}

/** Which messages get which functions; every message gets a binary writer. */
export interface NamedFunctions {
  json(message: DescMessage): boolean;
  reader(message: DescMessage): boolean;
  canonical(message: DescMessage): boolean;
  fromJson(message: DescMessage): boolean;
}

/** Names for `messages`, each distinct from the others and from `taken`. */
export function writerNames(
  messages: readonly DescMessage[],
  taken: Iterable<string>,
  wanted: NamedFunctions,
): WriterNames {
  const used = new Set(taken);
  const names = {
    json: new Map(),
    binary: new Map(),
    reader: new Map(),
    fromJson: new Map(),
    canonical: new Map(),
    binaryFromJson: new Map(),
  };
  const name = (kind: keyof typeof names, message: DescMessage, chosen: string) => {
    if (used.has(chosen)) throw new Error(`${message.typeName}: the generated name ${chosen} is taken`);
    used.add(chosen);
    names[kind].set(message.typeName, chosen);
  };
  for (const message of messages) {
    const lower = `${message.name[0]?.toLowerCase()}${message.name.slice(1)}`;
    if (wanted.json(message)) name("json", message, `${lower}Json`);
    name("binary", message, `write${message.name}`);
    if (wanted.reader(message)) {
      name("reader", message, `read${message.name}`);
      name("binaryFromJson", message, `write${message.name}FromJson`);
    }
    if (wanted.canonical(message)) name("canonical", message, `isCanonical${message.name}`);
    if (wanted.fromJson(message)) name("fromJson", message, `${lower}FromJson`);
  }
  const lookUp = (kind: keyof typeof names) => (message: DescMessage) => {
    const found: string | undefined = names[kind].get(message.typeName);
    if (found === undefined) throw new Error(`${message.typeName} has no generated ${kind} function`);
    return found;
  };
  return {
    json: lookUp("json"),
    binary: lookUp("binary"),
    reader: lookUp("reader"),
    fromJson: lookUp("fromJson"),
    canonical: lookUp("canonical"),
    binaryFromJson: lookUp("binaryFromJson"),
  };
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
