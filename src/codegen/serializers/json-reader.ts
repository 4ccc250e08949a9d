import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import type { GeneratedFile, Printable } from "@bufbuild/protoplugin";
import { holdsJsonObject, singularPresence } from "./field-shape.js";
import { unsupported, type WriterNames } from "./names.js";
import type { Runtime } from "./runtime.js";

/**
 * Prints `<message>FromJson(json)`, exported: what `fromJson(schema, json)` returns, read by the generated
 * reader when the JSON is in canonical form and by `fromJson` otherwise.
 */
export function printFromJson(f: GeneratedFile, message: DescMessage, runtime: Runtime, names: WriterNames) {
  f.print(f.jsDoc(`\`fromJson(${message.name}Schema, json)\`, read without reflection when it can be.`));
  const shape = f.importShape(message);
  f.print`${f.export("function", names.fromJson(message))}(json: ${runtime.JsonValue}): ${shape} {`;
  f.print`  return ${names.reader(message)}(json, 1) ?? ${runtime.fromJson}(${f.importSchema(message)}, json);`;
  f.print("}");
  f.print();
}

/**
 * Prints `isCanonical<Message>List(text)`: whether `text` is exactly what the JSON writers write of the list
 * of messages it reads as, so that it may be written as it is (issue 13). Anything it cannot read is not.
 */
export function printIsCanonicalList(
  f: GeneratedFile,
  message: DescMessage,
  runtime: Runtime,
  names: WriterNames,
) {
  f.print(
    f.jsDoc(
      `Whether \`text\` is the JSON text the writers write of the list of ${message.typeName} it reads as.`,
    ),
  );
  f.print`${f.export("function", `isCanonical${message.name}List`)}(text: string): boolean {`;
  f.print`  let json: ${runtime.JsonValue};`;
  f.print("  try { json = JSON.parse(text); } catch { return false; }");
  f.print("  if (!Array.isArray(json)) return false;");
  f.print`  const items: ${f.importShape(message)}[] = [];`;
  f.print`  for (const item of json) { const read = ${names.reader(message)}(item, 1); if (read === undefined) return false; items.push(read); }`;
  f.print`  try { return ${runtime.jsonArrayOf}(items, ${names.json(message)}) === text; } catch { return false; }`;
  f.print("}");
  f.print();
}

/**
 * Prints `read<Message>(json, depth)`: the message `fromJson` builds from canonical protobuf JSON (JSON names,
 * each value of its field's own JSON type), or undefined for anything else. It starts from the zero message
 * `create` makes (implicit fields at their zero value, explicit ones absent) and sets each key's field.
 */
export function printJsonReader(
  f: GeneratedFile,
  message: DescMessage,
  runtime: Runtime,
  names: WriterNames,
) {
  const shape = f.importShape(message);
  f.print(
    f.jsDoc(`${message.typeName} from canonical protobuf JSON at \`fromJson\`'s depth, else undefined.`),
  );
  f.print`function ${names.reader(message)}(json: ${runtime.JsonValue} | undefined, depth: number): ${shape} | undefined {`;
  f.print`  if (!${runtime.isJsonObject}(json) || depth > ${runtime.maxDepth}) return undefined;`;
  f.print`  const m: ${shape} = { ${zeroMessage(message)} };`;
  f.print("  for (const key of Object.keys(json)) {");
  f.print("    const value = json[key];");
  f.print("    switch (key) {");
  for (const field of message.fields) {
    f.print`      case ${JSON.stringify(field.jsonName)}: ${readStatement(field, runtime, names)} break;`;
  }
  f.print("      default: return undefined;");
  f.print("    }");
  f.print("  }");
  f.print("  return m;");
  f.print("}");
  f.print();
}

function zeroMessage(message: DescMessage): string {
  const members = [`$typeName: "${message.typeName}"`];
  for (const field of message.fields) {
    const zero = zeroValue(field);
    if (zero !== undefined) members.push(`${field.localName}: ${zero}`);
  }
  return members.join(", ");
}

/** A field's value in a zero message; undefined for a field with explicit presence, which is absent. */
function zeroValue(field: DescField): string | undefined {
  if (field.oneof) throw unsupported(field, "a oneof member, in a reader");
  switch (field.fieldKind) {
    case "list":
      return "[]";
    case "message":
      return undefined;
    case "scalar":
      if (singularPresence(field) === "explicit") return undefined;
      return field.scalar === ScalarType.STRING ? '""' : "0";
    default:
      throw unsupported(field, `a ${field.fieldKind} field, in a reader`);
  }
}

/** Reads `value` into the field, or returns undefined from the reader when it is not canonical. */
function readStatement(field: DescField, runtime: Runtime, names: WriterNames): Printable {
  const target = `m.${field.localName}`;
  switch (field.fieldKind) {
    case "scalar":
      return [
        "if (!",
        scalarCheck(field, field.scalar, runtime),
        "(value)) return undefined; ",
        target,
        " = value;",
      ];
    case "message":
      return [
        "{ const read = ",
        messageRead(field, field.message, "value", runtime, names),
        "; if (read === undefined) return undefined; ",
        target,
        " = read; }",
      ];
    case "list":
      if (field.listKind !== "message") throw unsupported(field, "a list of scalars or enums, in a reader");
      return [
        "{ if (!Array.isArray(value)) return undefined; for (const item of value) { const read = ",
        messageRead(field, field.message, "item", runtime, names),
        "; if (read === undefined) return undefined; ",
        target,
        ".push(read); } }",
      ];
    default:
      throw unsupported(field, `a ${field.fieldKind} field, in a reader`);
  }
}

/** A message a field holds, one level deeper; google.protobuf.Value two (its message, then its JSON form). */
function messageRead(
  field: DescField,
  message: DescMessage,
  value: string,
  runtime: Runtime,
  names: WriterNames,
): Printable {
  if (holdsJsonObject(field)) throw unsupported(field, "google.protobuf.Struct, in a reader");
  if (message.typeName === "google.protobuf.Value") return [runtime.readValue, `(${value}, depth + 2)`];
  if (message.typeName.startsWith("google.protobuf."))
    throw unsupported(field, `${message.typeName}, in a reader`);
  return [names.reader(message), `(${value}, depth + 1)`];
}

function scalarCheck(field: DescField, scalar: ScalarType, runtime: Runtime): Printable {
  switch (scalar) {
    case ScalarType.STRING:
      return runtime.isWellFormedString;
    case ScalarType.UINT32:
      return runtime.isUint32;
    case ScalarType.DOUBLE:
      return runtime.isFiniteNumber;
    default:
      throw unsupported(field, `scalar type ${ScalarType[scalar]}, in a reader`);
  }
}
