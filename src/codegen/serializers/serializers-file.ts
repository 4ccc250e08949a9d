import type { DescField, DescMessage, DescService } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import { printBinaryFromJson, printBinaryWriter } from "./binary-writer.js";
import { printFromJson, printIsCanonical, printIsCanonicalStored, printJsonReader } from "./json-reader.js";
import { hasJsonForm, printJsonWriter } from "./json-writer.js";
import { type WriterNames, writerNames } from "./names.js";
import { answerTypes, reachableMessages } from "./reachable.js";
import { type Runtime, runtimeImports } from "./runtime-imports.js";

/**
 * Prints the serialisers of `service`'s answers: `answerSerializers` by type name, then a JSON and a binary
 * writer for each message the answers reach. The messages named in `read` (stored as protobuf JSON) also get
 * an exported `<message>FromJson` and `isCanonical<Message>List`, and they and the messages they reach a
 * reader, a canonical check (`isCanonical<Message>`) and a binary writer from canonical JSON
 * (`write<Message>FromJson`). A list of them that a message keeps as its stored text (storedListJson) is
 * written as that text in JSON and from its JSON in binary. The messages named in `json` have their JSON
 * writer (`<message>Json`) exported. The messages named in `stored` may be kept whole as their stored text
 * (storedMessageJson), which their JSON writer then writes as it is; they get an exported check of that
 * text's JSON (`isCanonical<Message>Json`), and they and the messages they reach a canonical check.
 */
export function printSerializersFile(
  f: GeneratedFile,
  service: DescService,
  { read, json, stored }: { read: readonly string[]; json: readonly string[]; stored: readonly string[] },
): void {
  const answers = answerTypes([service]);
  const messages = reachableMessages(answers);
  const named = (typeName: string) => {
    const message = messages.find((m) => m.typeName === typeName);
    if (!message) throw new Error(`${typeName} is not among the messages ${service.typeName} answers with`);
    return message;
  };
  const readRoots = read.map(named);
  const exportedJson = json.map(named);
  const storedRoots = stored.map(named);
  const ownMessages = (roots: DescMessage[]) =>
    reachableMessages(roots).filter((m) => !m.typeName.startsWith("google.protobuf."));
  const readMessages = ownMessages(readRoots);
  const checkedMessages = ownMessages([...readRoots, ...storedRoots]);
  const runtime = runtimeImports(f);
  const wanted = {
    json: (message: DescMessage) => !hasJsonForm(message),
    reader: (message: DescMessage) => readMessages.includes(message),
    canonical: (message: DescMessage) => checkedMessages.includes(message),
    fromJson: (message: DescMessage) => readRoots.includes(message),
  };
  const names = writerNames(messages, Object.keys(runtime), wanted);
  f.preamble(service.file);
  printAnswerSerializers(f, service, answers, runtime, names);
  for (const message of readRoots) {
    printFromJson(f, message, runtime, names);
    printIsCanonicalStored(f, message, runtime, names, { list: true });
  }
  for (const message of storedRoots) printIsCanonicalStored(f, message, runtime, names, { list: false });
  // A list of a read message, in a message that is not read itself, may be kept as its stored text.
  const storedList = (field: DescField) =>
    field.fieldKind === "list" &&
    field.listKind === "message" &&
    readRoots.includes(field.message) &&
    !readMessages.includes(field.parent);
  for (const message of messages) {
    if (wanted.json(message))
      printJsonWriter(f, message, runtime, names, storedList, {
        exported: exportedJson.includes(message),
        stored: storedRoots.includes(message),
      });
    printBinaryWriter(f, message, runtime, names, storedList);
    if (wanted.canonical(message)) printIsCanonical(f, message, runtime, names);
    if (wanted.reader(message)) {
      printJsonReader(f, message, runtime, names);
      printBinaryFromJson(f, message, runtime, names);
    }
  }
}

function printAnswerSerializers(
  f: GeneratedFile,
  service: DescService,
  answers: DescMessage[],
  runtime: Runtime,
  names: WriterNames,
): void {
  f.print(f.jsDoc("How an answer is written: JSON text and protobuf binary."));
  f.print(f.export("interface", "AnswerSerializers"), " {");
  f.print`  json(message: ${runtime.Message}): string;`;
  f.print`  binary(message: ${runtime.Message}): Uint8Array;`;
  f.print("}");
  f.print();
  f.print(
    f.jsDoc(
      `The serialisers of the answers of ${service.typeName}, by type name. Each writes what protobuf-es's ` +
        "toJson (with alwaysEmitImplicit, less the D30 marks of src/codegen/serializers/runtime/presence.ts) and toBinary write.",
    ),
  );
  f.print(f.export("const", "answerSerializers"), ": ReadonlyMap<string, AnswerSerializers> = new Map([");
  for (const answer of answers) {
    const shape = f.importShape(answer);
    f.print`  [${JSON.stringify(answer.typeName)}, {`;
    f.print`    json: (m) => ${names.json(answer)}(m as ${shape}),`;
    f.print`    binary: (m) => ${runtime.wireBytes}(${names.binary(answer)}, m as ${shape}),`;
    f.print("  }],");
  }
  f.print("]);");
  f.print();
}
