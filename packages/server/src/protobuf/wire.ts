/**
 * The protobuf wire format, read defensively: every length is checked against the bytes that are left, so a
 * truncated or hostile body fails with a {@link ProtoWireError} instead of reading past its end, and nothing
 * allocates more than the input it was given. Errors use gogo-protobuf's wording, which is what a real
 * kube-apiserver answers.
 */

/** Wire types (the low three bits of a field key). */
export const WireType = {
  Varint: 0,
  Fixed64: 1,
  Bytes: 2,
  StartGroup: 3,
  EndGroup: 4,
  Fixed32: 5,
} as const;

/** A malformed protobuf body. The decoder turns it into a 400 BadRequest. */
export class ProtoWireError extends Error {
  override name = 'ProtoWireError';
}

/** A varint split into its low and high 32 bits, so that 64-bit values need no BigInt on the common path. */
export interface Varint {
  lo: number;
  hi: number;
}

/** One field as it appears on the wire; `bytes` is a view into the input, not a copy. */
export type WireField =
  | { no: number; wt: typeof WireType.Varint; varint: Varint }
  | {
      no: number;
      wt: typeof WireType.Fixed64 | typeof WireType.Fixed32 | typeof WireType.Bytes;
      bytes: Buffer;
    };

/** Reads the fields of one message, in order. */
export class ProtoReader {
  private pos = 0;

  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  /** Reads a varint of at most ten bytes (gogo rejects longer ones as an integer overflow). */
  varint(): Varint {
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) throw new ProtoWireError('unexpected EOF');
      const b = this.buf[this.pos++]!;
      const bits = b & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= (bits & 0x0f) << 28;
        hi |= bits >> 4;
      } else hi |= bits << (7 * i - 32);
      if (b < 0x80) return { lo: lo >>> 0, hi: hi >>> 0 };
    }
    throw new ProtoWireError('proto: integer overflow');
  }

  private take(n: number): Buffer {
    if (n > this.buf.length - this.pos) throw new ProtoWireError('unexpected EOF');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** The next field, or undefined at the end of the message. */
  next(): WireField | undefined {
    if (this.done) return undefined;
    const key = this.varint();
    // Field numbers are at most 2^29-1; a key with high bits set is garbage.
    if (key.hi !== 0) throw new ProtoWireError('proto: integer overflow');
    const no = key.lo >>> 3;
    const wt = key.lo & 7;
    if (no === 0) throw new ProtoWireError(`proto: illegal tag 0 (wire type ${wt})`);
    switch (wt) {
      case WireType.Varint:
        return { no, wt, varint: this.varint() };
      case WireType.Fixed64:
        return { no, wt, bytes: this.take(8) };
      case WireType.Fixed32:
        return { no, wt, bytes: this.take(4) };
      case WireType.Bytes: {
        const len = this.varint();
        if (len.hi !== 0 || len.lo > 0x7fffffff)
          throw new ProtoWireError('proto: negative length found during unmarshaling');
        return { no, wt, bytes: this.take(len.lo) };
      }
      case WireType.StartGroup:
      case WireType.EndGroup:
        // Kubernetes types never use groups; gogo would skip them in unknown fields, but nothing sends them.
        throw new ProtoWireError(`proto: illegal wireType ${wt} (groups are not supported)`);
      default:
        throw new ProtoWireError(`proto: illegal wireType ${wt}`);
    }
  }
}

/** Every field of a message (views into `buf`). */
export function readFields(buf: Buffer): WireField[] {
  const r = new ProtoReader(buf);
  const out: WireField[] = [];
  for (let f = r.next(); f; f = r.next()) out.push(f);
  return out;
}

/** The varints of a packed repeated field. */
export function readPackedVarints(buf: Buffer): Varint[] {
  const r = new ProtoReader(buf);
  const out: Varint[] = [];
  while (!r.done) out.push(r.varint());
  return out;
}

const TWO32 = 2 ** 32;

/** Go's `int32(v)`: the low 32 bits, signed. */
export const toInt32 = (v: Varint): number => v.lo | 0;
/** Go's `uint32(v)`. */
export const toUint32 = (v: Varint): number => v.lo;
/** Go's `int64(v)` as a JS number (exact up to 2^53, like any JSON number the server parses). */
export const toInt64 = (v: Varint): number =>
  v.hi >= 0x80000000 ? (v.hi - TWO32) * TWO32 + v.lo : v.hi * TWO32 + v.lo;
/** Go's `uint64(v)` as a JS number. */
export const toUint64 = (v: Varint): number => v.hi * TWO32 + v.lo;
/** Zigzag-decoded sint32. */
export const toSint32 = (v: Varint): number => (v.lo >>> 1) ^ -(v.lo & 1);
/** Zigzag-decoded sint64. */
export const toSint64 = (v: Varint): number => {
  const u = (BigInt(v.hi) << 32n) | BigInt(v.lo);
  return Number((u >> 1n) ^ -(u & 1n));
};
/** Go's `bool(v != 0)`. */
export const toBool = (v: Varint): boolean => v.lo !== 0 || v.hi !== 0;

/** Writes protobuf fields, for the encoder. Parts are joined once at the end. */
export class ProtoWriter {
  private readonly parts: Buffer[] = [];
  private scratch: number[] = [];

  private flush(): void {
    if (this.scratch.length > 0) {
      this.parts.push(Buffer.from(this.scratch));
      this.scratch = [];
    }
  }

  /** A varint from a JS number; negative numbers are written as 64-bit two's complement (ten bytes). */
  varint(value: number | bigint): this {
    let v =
      typeof value === 'bigint' ? BigInt.asUintN(64, value) : BigInt.asUintN(64, BigInt(Math.trunc(value)));
    while (v >= 0x80n) {
      this.scratch.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.scratch.push(Number(v));
    return this;
  }

  key(no: number, wt: number): this {
    return this.varint(no * 8 + wt);
  }

  raw(bytes: Uint8Array): this {
    this.flush();
    this.parts.push(Buffer.from(bytes));
    return this;
  }

  /** A length-delimited field. */
  bytes(no: number, bytes: Uint8Array): this {
    return this.key(no, WireType.Bytes).varint(bytes.length).raw(bytes);
  }

  finish(): Buffer {
    this.flush();
    return Buffer.concat(this.parts);
  }
}
