/**
 * SPDY/3 header blocks: their serialisation, and the per-direction zlib streams primed with the
 * SPDY/3 dictionary that compress them (outgoing blocks as deflate stored blocks, see `spdy.ts`).
 */
import { createInflate, type Inflate, constants as zconst } from 'node:zlib';

/** Header names (lower case, as SPDY requires) to their values; several values travel NUL-joined. */
export type SpdyHeaders = Record<string, string[]>;

/** A malformed frame or header block: the session answers it with GOAWAY PROTOCOL_ERROR. */
export class SpdyProtocolError extends Error {
  override readonly name = 'SpdyProtocolError';
}

// The SPDY/3 header compression dictionary (§2.6.10.1): 65 length-prefixed words, then text.
// biome-ignore format: a word list reads best packed
const DICTIONARY_WORDS = [
  'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset',
  'accept-encoding', 'accept-language', 'accept-ranges', 'age', 'allow', 'authorization',
  'cache-control', 'connection', 'content-base', 'content-encoding', 'content-language',
  'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date',
  'etag', 'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match',
  'if-range', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'pragma',
  'proxy-authenticate', 'proxy-authorization', 'range', 'referer', 'retry-after', 'server', 'te',
  'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
  'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public',
  'set-cookie', 'keep-alive', 'origin',
];
const DICTIONARY_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request' +
  '401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented' +
  '503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 ' +
  'Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,' +
  'application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=' +
  'gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** The 1423-byte zlib dictionary of SPDY/3 header blocks. */
export const SPDY_DICTIONARY: Buffer = Buffer.concat([
  ...DICTIONARY_WORDS.flatMap((w) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(w.length);
    return [len, Buffer.from(w, 'latin1')];
  }),
  Buffer.from(DICTIONARY_TAIL, 'latin1'),
]);

/** Adler-32 (RFC 1950), the id by which a zlib stream names its preset dictionary. */
export function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length; ) {
    // 5552 bytes is the most that can be summed before the 32-bit sums must be reduced.
    const end = Math.min(i + 5552, data.length);
    for (; i < end; i++) {
      a += data[i] as number;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Serialises a header block (before compression): count, then length-prefixed names and values. */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [u32(entries.length)];
  for (const [name, values] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(values.join('\0'), 'utf8');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

/** Parses an uncompressed header block; names must be lower case and unique (SPDY/3 §2.6.10). */
export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = {};
  let off = 0;
  const need = (n: number) => {
    if (off + n > block.length) throw new SpdyProtocolError('truncated header block');
  };
  need(4);
  const count = block.readUInt32BE(off);
  off += 4;
  for (let i = 0; i < count; i++) {
    need(4);
    const nl = block.readUInt32BE(off);
    off += 4;
    need(nl);
    const name = block.toString('utf8', off, off + nl);
    off += nl;
    need(4);
    const vl = block.readUInt32BE(off);
    off += 4;
    need(vl);
    const value = block.toString('utf8', off, off + vl);
    off += vl;
    if (name.length === 0 || name !== name.toLowerCase())
      throw new SpdyProtocolError(`invalid header name ${JSON.stringify(name)}`);
    if (Object.hasOwn(headers, name)) throw new SpdyProtocolError(`duplicate header ${name}`);
    headers[name] = value.split('\0');
  }
  if (off !== block.length) throw new SpdyProtocolError('trailing bytes after header block');
  return headers;
}

/**
 * The sending half of header compression: one zlib stream for the whole connection, its first
 * block carrying the zlib header with the dictionary's id, every block ending byte-aligned so the
 * peer's inflater can hand it over at once. Stored (uncompressed) deflate blocks keep it synchronous.
 */
export class HeaderCompressor {
  private started = false;

  compress(block: Buffer): Buffer {
    const parts: Buffer[] = [];
    if (!this.started) {
      this.started = true;
      // CMF 0x78 (deflate, 32 KiB window), FLG 0xBB (FDICT set, check bits), then DICTID.
      parts.push(Buffer.from([0x78, 0xbb]), u32(adler32(SPDY_DICTIONARY)));
    }
    for (let off = 0; off < block.length; off += 0xffff) {
      const chunk = block.subarray(off, off + 0xffff);
      parts.push(storedBlockHeader(chunk.length), chunk);
    }
    // An empty stored block ends the block as zlib's Z_SYNC_FLUSH does. Go's inflater hands data
    // over only at such a flush point; without it, it reads on for the next deflate block, past
    // this frame's payload, and spdystream fails the frame ("compressed payload size was incorrect").
    parts.push(storedBlockHeader(0));
    return Buffer.concat(parts);
  }
}

/** The receiving half of header compression: one inflater for the connection, flushed per block. */
export class HeaderDecompressor {
  private readonly z: Inflate;
  private out: Buffer[] = [];
  private size = 0;
  private error: Error | undefined;

  /** @param maxBlockBytes the largest inflated header block accepted (a guard against zip bombs). */
  constructor(private readonly maxBlockBytes = 1 << 20) {
    this.z = createInflate({ dictionary: SPDY_DICTIONARY, flush: zconst.Z_SYNC_FLUSH });
    this.z.on('data', (b: Buffer) => this.collect(b));
    this.z.on('error', (err) => {
      this.error = err;
    });
  }

  private collect(b: Buffer): void {
    this.out.push(b);
    this.size += b.length;
  }

  /** Inflates one compressed header block. Calls must not overlap. */
  decompress(block: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const fail = (err: Error) => {
        this.error = err;
        reject(new SpdyProtocolError(`header decompression failed: ${err.message}`));
      };
      if (this.error) {
        fail(this.error);
        return;
      }
      // A corrupt stream errors (and destroys the inflater) without calling the write callback.
      this.z.once('error', fail);
      this.z.write(block, (err) => {
        this.z.off('error', fail);
        if (err) {
          fail(err);
          return;
        }
        // Output produced by this write is pushed before its callback; read() takes any that a
        // paused stream kept buffered.
        for (let b = this.z.read() as Buffer | null; b !== null; b = this.z.read() as Buffer | null)
          this.collect(b);
        const out = Buffer.concat(this.out);
        const size = this.size;
        this.out = [];
        this.size = 0;
        if (size > this.maxBlockBytes) reject(new SpdyProtocolError('header block too large'));
        else resolve(out);
      });
    });
  }

  close(): void {
    this.z.destroy();
  }
}

/** A stored deflate block's header: BFINAL 0, BTYPE 00, padding to the byte, LEN and NLEN. */
function storedBlockHeader(len: number): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt16LE(len, 1);
  head.writeUInt16LE(~len & 0xffff, 3);
  return head;
}

/** A big-endian 32-bit word. */
export function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}
