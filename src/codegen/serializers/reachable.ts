import type { DescField, DescMessage, DescService } from "@bufbuild/protobuf";

/** The answer types of `services`: what the server serialises. */
export function answerTypes(services: readonly DescService[]): DescMessage[] {
  return unique(services.flatMap((service) => service.methods.map((method) => method.output)));
}

/** `roots` and every message their fields hold, at any depth, each once, in the order first met. */
export function reachableMessages(roots: readonly DescMessage[]): DescMessage[] {
  const found = new Map<string, DescMessage>();
  const visit = (message: DescMessage) => {
    if (found.has(message.typeName)) return;
    found.set(message.typeName, message);
    for (const field of message.fields) {
      const held = heldMessage(field);
      if (held) visit(held);
    }
  };
  for (const root of roots) visit(root);
  return [...found.values()];
}

/** The message a field holds: itself, its list's items or its map's values. */
export function heldMessage(field: DescField): DescMessage | undefined {
  switch (field.fieldKind) {
    case "message":
      return field.message;
    case "list":
      return field.listKind === "message" ? field.message : undefined;
    case "map":
      return field.mapKind === "message" ? field.message : undefined;
    default:
      return undefined;
  }
}

/** Fields in field-number order, the order protobuf-es writes them in both JSON and binary. */
export function fieldsByNumber(message: DescMessage): DescField[] {
  return [...message.fields].sort((a, b) => a.number - b.number);
}

function unique(messages: DescMessage[]): DescMessage[] {
  return [...new Map(messages.map((message) => [message.typeName, message])).values()];
}
