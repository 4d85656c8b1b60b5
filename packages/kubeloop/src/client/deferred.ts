/**
 * Deferred decoding of watch events, for caches (informers) that hold far more objects than
 * anyone reads: an event's object is checked to be valid JSON and its `metadata.name`,
 * `namespace` and `resourceVersion` are read without building it; its text (without
 * `metadata.managedFields`, when they are to be dropped) is kept, and the object is built the
 * first time someone asks for it.
 *
 * Why: building every object of a 10,000-object watch-list costs about 40 ms of `JSON.parse`
 * plus the garbage collections its survivors cause, and the cache of a controller-runtime-style
 * client (`manager.cache`) is mostly never read. Once compiled, the scan costs about a third of
 * a parse (in a fresh process, before the JIT has compiled it, nearer to a parse). Memory is
 * about what the decoded object would take: its text without managedFields, and about 150 bytes
 * of bookkeeping (`bench/informer`).
 *
 * Nothing invalid is deferred: a line that is not a well-formed watch event takes the eager
 * path ({@link decodeWatchLine}), which reports it exactly as before.
 */
import type { ApiError } from '../api/status.js';
import type { KubeObject } from './types.js';
import { decodeWatchLine, type LineDecoder, type WatchEvent } from './watch.js';

/** The shared bytes of the objects of one received batch. */
interface Pack {
  bytes: Buffer;
  /** Turns a freshly parsed object into what the consumer wants (transform, freeze…). */
  readonly finish: (obj: KubeObject) => KubeObject;
}

/**
 * An object received but not yet decoded: its identity, and where its JSON text is. Only the
 * runtime's informers see it; {@link DeferredObject.decode} builds the object.
 */
export class DeferredObject {
  constructor(
    readonly name: string,
    /** `''` for cluster-scoped objects. */
    readonly namespace: string,
    readonly resourceVersion: string,
    private readonly pack: Pack,
    private readonly start: number,
    private readonly end: number,
  ) {}

  /** `namespace/name`, or `name` for cluster-scoped objects. */
  get key(): string {
    return this.namespace ? `${this.namespace}/${this.name}` : this.name;
  }

  /** Bytes of JSON kept for this object. */
  get size(): number {
    return this.end - this.start;
  }

  /** Builds the object (a new one at each call). */
  decode<T extends KubeObject>(): T {
    const text = this.pack.bytes.toString('utf8', this.start, this.end);
    return this.pack.finish(JSON.parse(text)) as T;
  }
}

/** Whether `obj` is a {@link DeferredObject} (typed as an object only to travel the watcher). */
export const isDeferred = (obj: unknown): obj is DeferredObject => obj instanceof DeferredObject;

/** Options of {@link deferredLineDecoder}. */
export interface DeferredDecoding {
  /** Leave `metadata.managedFields` out of the kept text (and so of the decoded objects). */
  dropManagedFields: boolean;
  /** Applied to each object when it is decoded. */
  finish: (obj: KubeObject) => KubeObject;
}

const TYPE_PREFIX = Buffer.from('{"type":"', 'latin1');
/** The rest of the prefix of each deferred event type, by the type's first letter. */
const PREFIX_REST = new Map(
  (['ADDED', 'MODIFIED', 'DELETED'] as const).map((type) => [
    type.charCodeAt(0),
    { type, rest: Buffer.from(`${type.slice(1)}","object":`, 'latin1') },
  ]),
);

/** Whether `b` holds `word` at `at`. */
function bytesAt(b: Buffer, at: number, word: Buffer): boolean {
  if (at + word.length > b.length) return false;
  for (let k = 0; k < word.length; k++) if (b[at + k] !== word[k]) return false;
  return true;
}

/**
 * A line decoder that defers ADDED, MODIFIED and DELETED objects: their events carry
 * {@link DeferredObject}s typed as `T`, for a consumer that knows to decode them. Other events
 * and any line the scan does not accept are decoded at once, as {@link decodeWatchLine} does.
 */
export function deferredLineDecoder<T extends KubeObject>(o: DeferredDecoding): LineDecoder<T> {
  const scan = new Scan();
  return (bytes) => {
    const events: WatchEvent<T>[] = [];
    const pack: Pack = { bytes: EMPTY, finish: o.finish };
    // The kept texts are moved to the front of `bytes` as lines are scanned (what was read is
    // never overwritten: kept texts are never longer than what they come from), then copied
    // out: the batch's buffer holds nothing else of what was received.
    let packed = 0;
    let from = 0;
    const n = bytes.length;
    const done = () => {
      const out = Buffer.allocUnsafeSlow(packed);
      bytes.copy(out, 0, 0, packed);
      pack.bytes = out;
    };
    while (from < n) {
      const lineStart = from;
      let type: 'ADDED' | 'MODIFIED' | 'DELETED' | undefined;
      let objStart = 0;
      if (bytesAt(bytes, lineStart, TYPE_PREFIX)) {
        const at = lineStart + TYPE_PREFIX.length;
        const p = PREFIX_REST.get(bytes[at] as number);
        if (p && bytesAt(bytes, at + 1, p.rest)) {
          type = p.type;
          objStart = at + 1 + p.rest.length;
        }
      }
      // The scan finds the line's end itself: searching for each newline first was a native
      // call per line, a tenth of the whole decoding.
      const lineEnd = type === undefined ? -1 : scan.event(bytes, objStart, n);
      if (type !== undefined && lineEnd >= 0) {
        from = lineEnd + 1;
        const start = packed;
        if (o.dropManagedFields && scan.cutStart >= 0) {
          bytes.copyWithin(packed, objStart, scan.cutStart);
          packed += scan.cutStart - objStart;
          bytes.copyWithin(packed, scan.cutEnd, scan.objEnd);
          packed += scan.objEnd - scan.cutEnd;
        } else {
          bytes.copyWithin(packed, objStart, scan.objEnd);
          packed += scan.objEnd - objStart;
        }
        const obj = new DeferredObject(scan.name, scan.namespace, scan.resourceVersion, pack, start, packed);
        events.push({ type, object: obj as unknown as T, resourceVersion: scan.resourceVersion });
        continue;
      }
      let to = bytes.indexOf(10, lineStart);
      if (to < 0) to = n;
      from = to + 1;
      const line = bytes.toString('utf8', lineStart, to).trim();
      if (line === '') continue;
      try {
        events.push(decodeWatchLine<T>(line));
      } catch (err) {
        done();
        return { events, error: err as ApiError };
      }
    }
    done();
    return { events };
  };
}

const EMPTY = Buffer.alloc(0);

// Character codes.
const QUOTE = 34;
const BACKSLASH = 92;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;
const COLON = 58;
const COMMA = 44;
const MINUS = 45;
const PLUS = 43;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const NEWLINE = 10;

const OBJECT = 1;
const ARRAY = 2;
/** Deeper documents are left to `JSON.parse`. */
const MAX_DEPTH = 256;

// What a key names, at the levels the scan follows.
const OTHER = 0;
const METADATA = 1;
const NAME = 2;
const NAMESPACE = 3;
const RESOURCE_VERSION = 4;
const MANAGED_FIELDS = 5;

/** Bytes that stand for themselves in a JSON string: all but `"`, `\` and control characters. */
const PLAIN = new Uint8Array(256).fill(1);
for (let c = 0; c < 0x20; c++) PLAIN[c] = 0;
PLAIN[QUOTE] = 0;
PLAIN[BACKSLASH] = 0;

/** JSON's spaces but the newline: a line holds none, and the scan runs until the one that ends it. */
const isSpace = (c: number | undefined) => c === 32 || c === 9 || c === 13;
const isDigit = (c: number | undefined) => c !== undefined && c >= ZERO && c <= NINE;
const isHex = (c: number | undefined) =>
  c !== undefined && ((c >= ZERO && c <= NINE) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102));

/** Whether the string token `s[a, b)` (quotes excluded) is exactly `word`. */
const tokenIs = (s: Buffer, a: number, b: number, word: Buffer) =>
  b - a === word.length && bytesAt(s, a, word);

const WORDS = {
  metadata: Buffer.from('metadata'),
  name: Buffer.from('name'),
  namespace: Buffer.from('namespace'),
  managedFields: Buffer.from('managedFields'),
  resourceVersion: Buffer.from('resourceVersion'),
  true: Buffer.from('true'),
  false: Buffer.from('false'),
  null: Buffer.from('null'),
};

/**
 * A validating scan of one JSON object that reads `metadata.name`, `.namespace`,
 * `.resourceVersion` and locates `.managedFields`. It accepts exactly what `JSON.parse`
 * accepts, except that it gives up (returns false, for the eager path to decide) on what it
 * does not handle: duplicate keys it tracks, a `metadata` that is not an object or has no
 * name, nesting deeper than {@link MAX_DEPTH}.
 */
class Scan {
  name = '';
  namespace = '';
  resourceVersion = '';
  /** Where the object's text ends. */
  objEnd = 0;
  /** The range to remove to drop managedFields (with one adjacent comma); -1 when absent. */
  cutStart = -1;
  cutEnd = -1;
  /** Set by {@link string} when the token has escapes. */
  private escaped = false;
  private readonly stack = new Uint8Array(MAX_DEPTH + 1);

  /**
   * Scans the object of a watch event: `text[start, end)` holds the line after its
   * `{"type":…,"object":` prefix, up to a newline or `end`: the object then `}`. Returns where
   * the line ends (its newline, or `end`), or -1.
   */
  event(text: Buffer, start: number, end: number): number {
    const after = this.object(text, start, end);
    if (after < 0) return -1;
    let i = after;
    while (i < end && isSpace(text[i])) i++;
    if (i >= end || text[i] !== RBRACE) return -1;
    i++;
    while (i < end && isSpace(text[i])) i++;
    return i === end || text[i] === NEWLINE ? i : -1;
  }

  /** Scans the object at `start` (after spaces); returns where it ends, or -1. */
  private object(s: Buffer, start: number, end: number): number {
    this.name = '';
    this.namespace = '';
    this.resourceVersion = '';
    this.cutStart = -1;
    this.cutEnd = -1;
    let seen = 0; // a bit per tracked key: a duplicate goes the eager way (JSON.parse keeps the last)
    let i = start;
    while (i < end && isSpace(s[i])) i++;
    if (s[i] !== LBRACE) return -1;
    const stack = this.stack;
    let depth = 0;
    let inMeta = false;
    let key1 = OTHER;
    let key2 = OTHER;
    /** Where the current key of metadata starts: its quote, or the comma before it. */
    let key2Start = 0;
    let key2Comma = false;
    /** A key comes first (after `{`, or a comma in an object); `commaAt`: that comma, or -1. */
    let needKey = false;
    let commaAt = -1;

    // A value starts at `i`; loop until the root object closes.
    for (;;) {
      if (needKey) {
        needKey = false;
        i = this.key(s, i, end);
        if (i < 0) return -1;
        const tracked = depth === 1 || (depth === 2 && inMeta);
        if (tracked) {
          // An escaped key here could spell a tracked one: JSON.parse decides.
          if (this.escaped) return -1;
          const k = this.keyKind(s, depth);
          if (depth === 1) key1 = k;
          else key2 = k;
          if (k !== OTHER) {
            const bit = 1 << k;
            if (seen & bit) return -1;
            seen |= bit;
            if (depth === 2) {
              key2Comma = commaAt >= 0;
              key2Start = key2Comma ? commaAt : this.keyA - 1;
            }
          }
        }
      }
      let c = s[i];
      // name, namespace and resourceVersion are strings; anything else is for JSON.parse to take.
      if (depth === 2 && inMeta && key2 >= NAME && key2 <= RESOURCE_VERSION && c !== QUOTE) return -1;
      if (c === LBRACE || c === LBRACKET) {
        if (depth === MAX_DEPTH) return -1;
        const isObject = c === LBRACE;
        stack[++depth] = isObject ? OBJECT : ARRAY;
        if (depth === 2 && key1 === METADATA) {
          if (!isObject) return -1;
          inMeta = true;
          key2 = OTHER;
        }
        i++;
        while (i < end && isSpace(s[i])) i++;
        c = s[i];
        if (isObject) {
          if (c !== RBRACE) {
            needKey = true;
            commaAt = -1;
            continue;
          }
        } else if (c !== RBRACKET) continue; // the array's first value
        // An empty container: closed below.
      } else if (c === QUOTE) {
        const a = i + 1;
        i = this.string(s, i, end);
        if (i < 0) return -1;
        if (depth === 2 && inMeta && key2 >= NAME && key2 <= RESOURCE_VERSION) {
          if (key2 === NAMESPACE && !this.escaped && this.sameAsLastNamespace(s, a, i - 1)) {
            this.namespace = this.lastNamespace;
          } else {
            const raw = this.escaped
              ? (JSON.parse(s.toString('utf8', a - 1, i)) as string)
              : s.toString('utf8', a, i - 1);
            if (key2 === NAME) this.name = raw;
            else if (key2 === NAMESPACE) {
              this.namespace = raw;
              this.lastNamespace = raw;
              // A copy: the received bytes are rewritten as the batch is packed.
              this.lastNamespaceBytes = Buffer.from(s.subarray(a, i - 1));
            } else this.resourceVersion = raw;
          }
        }
      } else if (c === MINUS || isDigit(c)) {
        i = number(s, i, end);
        if (i < 0) return -1;
      } else if (c === 116 /* t */ && bytesAt(s, i, WORDS.true)) i += 4;
      else if (c === 102 /* f */ && bytesAt(s, i, WORDS.false)) i += 5;
      else if (c === 110 /* n */ && bytesAt(s, i, WORDS.null)) i += 4;
      else return -1;

      // After a value: a comma and the next value, or closing brackets.
      for (;;) {
        if (depth === 2 && inMeta && key2 === MANAGED_FIELDS && this.cutEnd < 0) {
          // managedFields' value ends here; as the first key of metadata, with the comma after it.
          this.cutStart = key2Start;
          this.cutEnd = i;
          if (!key2Comma) {
            let j = i;
            while (j < end && isSpace(s[j])) j++;
            if (s[j] === COMMA) this.cutEnd = j + 1;
          }
        }
        while (i < end && isSpace(s[i])) i++;
        c = s[i];
        if (c === COMMA) {
          const comma = i;
          i++;
          while (i < end && isSpace(s[i])) i++;
          if (stack[depth] === OBJECT) {
            needKey = true;
            commaAt = comma;
          }
          break;
        }
        if (c !== (stack[depth] === OBJECT ? RBRACE : RBRACKET)) return -1;
        i++;
        if (depth === 2 && inMeta) {
          inMeta = false;
          key1 = OTHER;
        }
        depth--;
        if (depth === 0) {
          this.objEnd = i;
          return seen & (1 << NAME) ? i : -1;
        }
      }
    }
  }

  /**
   * The last namespace read, and its bytes: objects of a collection mostly share a few
   * namespaces, so they share one string.
   */
  private lastNamespace = '';
  private lastNamespaceBytes: Buffer = Buffer.alloc(0);

  private sameAsLastNamespace(s: Buffer, a: number, b: number): boolean {
    const last = this.lastNamespaceBytes;
    if (b - a !== last.length || b === a) return false;
    for (let k = 0; k < last.length; k++) if (s[a + k] !== last[k]) return false;
    return true;
  }

  /** The last key's token (quotes excluded). */
  private keyA = 0;
  private keyB = 0;

  /** Reads a key and its colon at `i` (a quote expected); returns where its value starts, or -1. */
  private key(s: Buffer, i: number, end: number): number {
    if (s[i] !== QUOTE) return -1;
    this.keyA = i + 1;
    i = this.string(s, i, end);
    if (i < 0) return -1;
    this.keyB = i - 1;
    while (i < end && isSpace(s[i])) i++;
    if (s[i] !== COLON) return -1;
    i++;
    while (i < end && isSpace(s[i])) i++;
    return i;
  }

  /** What the last key names, at depth 1 (the object) or 2 (its metadata). */
  private keyKind(s: Buffer, depth: number): number {
    const a = this.keyA;
    const b = this.keyB;
    if (depth === 1) return tokenIs(s, a, b, WORDS.metadata) ? METADATA : OTHER;
    switch (b - a) {
      case 4:
        return tokenIs(s, a, b, WORDS.name) ? NAME : OTHER;
      case 9:
        return tokenIs(s, a, b, WORDS.namespace) ? NAMESPACE : OTHER;
      case 13:
        return tokenIs(s, a, b, WORDS.managedFields) ? MANAGED_FIELDS : OTHER;
      case 15:
        return tokenIs(s, a, b, WORDS.resourceVersion) ? RESOURCE_VERSION : OTHER;
      default:
        return OTHER;
    }
  }

  /** Skips the string token at `i` (a quote); returns the index after it, or -1. */
  private string(s: Buffer, i: number, end: number): number {
    this.escaped = false;
    i++;
    for (;;) {
      // The common case in a tight loop; a line's end (a newline, or past the buffer) stops it.
      while (PLAIN[s[i] as number] === 1) i++;
      if (i >= end) return -1;
      const c = s[i] as number;
      if (c === QUOTE) return i + 1;
      if (c === BACKSLASH) {
        this.escaped = true;
        const e = s[i + 1];
        if (e === 117 /* u */) {
          if (!isHex(s[i + 2]) || !isHex(s[i + 3]) || !isHex(s[i + 4]) || !isHex(s[i + 5])) return -1;
          i += 6;
        } else if (
          e === QUOTE ||
          e === BACKSLASH ||
          e === 47 /* / */ ||
          e === 98 /* b */ ||
          e === 102 /* f */ ||
          e === 110 /* n */ ||
          e === 114 /* r */ ||
          e === 116 /* t */
        )
          i += 2;
        else return -1;
      } else return -1; // a control character
    }
  }
}

/** Skips the number at `i`; returns the index after it, or -1 when it is not JSON's grammar. */
function number(s: Buffer, i: number, end: number): number {
  if (s[i] === MINUS) i++;
  let c = s[i];
  if (c === ZERO) i++;
  else if (isDigit(c) && c !== ZERO) {
    i++;
    while (i < end && isDigit(s[i])) i++;
  } else return -1;
  c = s[i];
  if (c === DOT) {
    i++;
    if (!isDigit(s[i])) return -1;
    while (i < end && isDigit(s[i])) i++;
    c = s[i];
  }
  if (c === 101 /* e */ || c === 69 /* E */) {
    i++;
    c = s[i];
    if (c === PLUS || c === MINUS) i++;
    if (!isDigit(s[i])) return -1;
    while (i < end && isDigit(s[i])) i++;
  }
  return i > end ? -1 : i;
}
