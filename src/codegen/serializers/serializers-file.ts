import type { DescMessage, DescService } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import { printBinaryWriter } from "./binary-writer.js";
import { hasJsonForm, printJsonWriter } from "./json-writer.js";
import { type WriterNames, writerNames } from "./names.js";
import { answerTypes, reachableMessages } from "./reachable.js";
import { type Runtime, runtimeImports } from "./runtime.js";

/**
 * Prints the serialisers of `service`'s answers: `answerSerializers` by type name, then a JSON and a binary
 * writer for each message the answers reach.
 */
export function printSerializersFile(f: GeneratedFile, service: DescService): void {
  const answers = answerTypes([service]);
  const messages = reachableMessages(answers);
  const runtime = runtimeImports(f);
  const withJson = (message: DescMessage) => !hasJsonForm(message);
  const names = writerNames(messages, Object.keys(runtime), withJson);
  f.preamble(service.file);
  printAnswerSerializers(f, service, answers, runtime, names);
  for (const message of messages) {
    if (withJson(message)) printJsonWriter(f, message, runtime, names);
    printBinaryWriter(f, message, runtime, names);
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
  f.print("  json(message: ", runtime.Message, "): string;");
  f.print("  binary(message: ", runtime.Message, "): Uint8Array;");
  f.print("}");
  f.print();
  f.print(
    f.jsDoc(
      `The serialisers of the answers of ${service.typeName}, by type name. Each writes what protobuf-es's ` +
        "toJson (with alwaysEmitImplicit, less the D30 marks of src/util/presence.ts) and toBinary write.",
    ),
  );
  f.print(f.export("const", "answerSerializers"), ": ReadonlyMap<string, AnswerSerializers> = new Map([");
  for (const answer of answers) {
    const shape = f.importShape(answer);
    f.print(`  ["${answer.typeName}", {`);
    f.print("    json: (m) => ", names.json(answer), "(m as ", shape, "),");
    f.print("    binary: (m) => ", runtime.wireBytes, "(", names.binary(answer), ", m as ", shape, "),");
    f.print("  }],");
  }
  f.print("]);");
  f.print();
}
