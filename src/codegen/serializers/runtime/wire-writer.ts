import type { JsonValue, UnknownField } from "@bufbuild/protobuf";

/** Wire types of the protobuf binary format (the encoding spec's numbers) that the serialisers write. */
export const WireType = { Varint: 0, Bit64: 1, LengthDelimited: 2 } as const;

/**
 * Strings this short are written byte by byte when they are ASCII: a call into `Buffer#write` costs more
 * than the loop below it up to about 24 to 28 characters (measured on the bench machine). That takes in
 * every id (19 and 20 characters) and timestamp (24) of a log entry, some 500 strings of a 100-entry page.
 */
const shortString = 24;

/**
 * Protobuf binary into one growing buffer, for the serialisers protoc-gen-serializers generates into gen/.
 * It writes exactly the bytes protobuf-es's `toBinary` writes and refuses what it refuses (a uint32 out of
 * range), without its per-message chunk lists: a nested message reserves one byte for its length and is
 * moved along in the rare case the length needs more.
 */
export class WireWriter {
  private bytes = Buffer.allocUnsafe(512);
  private view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  private pos = 0;

  /** The bytes written: a view of the buffer, which this writer never touches again. */
  finish(): Uint8Array {
    return this.bytes.subarray(0, this.pos);
  }

  tag(fieldNumber: number, wireType: number): void {
    this.varint32(((fieldNumber << 3) | wireType) >>> 0);
  }

  uint32(value: number): void {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff)
      throw new Error(`invalid uint32: ${value}`);
    this.varint32(value);
  }

  int32(value: number): void {
    if (!Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) {
      throw new Error(`invalid int32: ${value}`);
    }
    if (value >= 0) {
      this.varint32(value);
      return;
    }
    // A negative int32 is sign-extended to ten bytes, as protobuf-es writes it.
    this.reserve(10);
    let rest = value;
    for (let i = 0; i < 9; i++) {
      this.bytes[this.pos++] = (rest & 0x7f) | 0x80;
      rest >>= 7;
    }
    this.bytes[this.pos++] = 1;
  }

  bool(value: boolean): void {
    this.reserve(1);
    this.bytes[this.pos++] = value ? 1 : 0;
  }

  double(value: number): void {
    this.reserve(8);
    this.view.setFloat64(this.pos, value, true);
    this.pos += 8;
  }

  /** UTF-8, lone surrogates as U+FFFD (as TextEncoder, which protobuf-es uses). */
  string(value: string): void {
    const start = this.startLength(value.length * 3);
    if (value.length <= shortString && this.writeAscii(value)) {
      this.endLength(start);
      return;
    }
    this.pos = start + 1 + this.bytes.write(value, start + 1);
    this.endLength(start);
  }

  /** Starts field `fieldNumber` holding a message; returns where its length goes, for `join`. */
  fork(fieldNumber: number): number {
    this.tag(fieldNumber, WireType.LengthDelimited);
    return this.startLength(0);
  }

  join(start: number): void {
    this.endLength(start);
  }

  /**
   * The fields of a google.protobuf.Value that holds `json`, plain JSON as StoredValue keeps it: what the
   * Value built from it is written as, a Struct's entries and a ListValue's items as their messages.
   */
  jsonValue(json: JsonValue): void {
    switch (typeof json) {
      case "number":
        this.tag(2, WireType.Bit64);
        this.double(json);
        return;
      case "string":
        this.tag(3, WireType.LengthDelimited);
        this.string(json);
        return;
      case "boolean":
        this.tag(4, WireType.Varint);
        this.bool(json);
        return;
      default:
        break;
    }
    if (json === null) {
      // NullValue.NULL_VALUE, written since it is its oneof's case.
      this.tag(1, WireType.Varint);
      this.int32(0);
      return;
    }
    if (Array.isArray(json)) {
      const list = this.fork(6);
      for (const item of json) {
        const at = this.fork(1);
        this.jsonValue(item);
        this.join(at);
      }
      this.join(list);
      return;
    }
    const struct = this.fork(5);
    for (const key of Object.keys(json)) {
      const entry = this.fork(1);
      this.tag(1, WireType.LengthDelimited);
      this.string(key);
      const at = this.fork(2);
      this.jsonValue(json[key] as JsonValue);
      this.join(at);
      this.join(entry);
    }
    this.join(struct);
  }

  /** Fields a message carries from a decoder that did not know them, written after its own. */
  unknown(fields: readonly UnknownField[]): void {
    for (const { no, wireType, data } of fields) {
      this.tag(no, wireType);
      this.reserve(data.length);
      this.bytes.set(data, this.pos);
      this.pos += data.length;
    }
  }

  private varint32(value: number): void {
    this.reserve(5);
    let rest = value;
    while (rest > 0x7f) {
      this.bytes[this.pos++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.bytes[this.pos++] = rest;
  }

  /** Reserves one byte for a length and room for `contentBytes` after it; returns the length's offset. */
  private startLength(contentBytes: number): number {
    this.reserve(contentBytes + 1);
    return this.pos++;
  }

  /** Writes the length of what follows `start`, moving it along when the length takes more than a byte. */
  private endLength(start: number): void {
    const length = this.pos - start - 1;
    if (length < 0x80) {
      this.bytes[start] = length;
      return;
    }
    const lengthBytes = varintSize(length);
    this.reserve(lengthBytes - 1);
    this.bytes.copyWithin(start + lengthBytes, start + 1, this.pos);
    this.pos += lengthBytes - 1;
    let rest = length;
    let at = start;
    while (rest > 0x7f) {
      this.bytes[at++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.bytes[at] = rest;
  }

  /** Copies `value` when it is all ASCII; otherwise writes nothing and answers false. */
  private writeAscii(value: string): boolean {
    const at = this.pos;
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code > 0x7f) return false;
      this.bytes[at + i] = code;
    }
    this.pos = at + value.length;
    return true;
  }

  private reserve(count: number): void {
    if (this.pos + count <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.pos + count));
    this.bytes.copy(grown, 0, 0, this.pos);
    this.bytes = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
  }
}

function varintSize(value: number): number {
  let size = 1;
  for (let rest = value >>> 7; rest > 0; rest >>>= 7) size++;
  return size;
}

/** The bytes `write` (a generated serialiser) makes of `message`. */
export function wireBytes<T>(write: (writer: WireWriter, message: T) => void, message: T): Uint8Array {
  const writer = new WireWriter();
  write(writer, message);
  return writer.finish();
}
