/**
 * A gRPC or gRPC-Web message in its envelope, uncompressed: a flags byte (none), four of length
 * (big-endian), the message. The bench's requests and the bare gRPC floor's answers are framed by it.
 */
export function enveloped(message: Uint8Array): Buffer {
  const body = Buffer.alloc(5 + message.byteLength);
  body.writeUInt32BE(message.byteLength, 1);
  body.set(message, 5);
  return body;
}
