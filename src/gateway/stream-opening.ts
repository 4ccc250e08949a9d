import type { Message } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import type { JsonStream } from "../rpc/json-stream.js";

/** A stream that opened: its messages, the first already read. */
export interface OpenedStream {
  messages: AsyncIterator<Message>;
  first: IteratorResult<Message>;
}

/**
 * The opening of a server stream answered on REST (D44's events, D45's download): its first message is
 * awaited before anything is written, so a stream refused at its opening is answered as any REST refusal,
 * a problem with its status (undefined then). The stream's headers are copied either way.
 */
export async function openStream(
  stream: JsonStream,
  writeProblem: (error: ConnectError) => void,
  copyHeaders: (header: Headers) => void,
): Promise<OpenedStream | undefined> {
  const messages = stream.messages[Symbol.asyncIterator]();
  try {
    const first = await messages.next();
    copyHeaders(stream.header);
    return { messages, first };
  } catch (error) {
    copyHeaders(stream.header);
    writeProblem(ConnectError.from(error));
    return undefined;
  }
}
