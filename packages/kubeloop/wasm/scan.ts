// The scan of the deferred watch decoder (`src/client/deferred.ts`), in AssemblyScript,
// compiled to WebAssembly by `npm run build:wasm` into `src/client/scan-wasm.ts`.
//
// Why WebAssembly: the same scan in JavaScript ran unoptimized for the first 2 MB of a
// watch-list (V8 compiled its large function late, in 11 ms of background work), half of an
// informer's sync of 10,000 objects. WebAssembly is compiled before it runs.
//
// It checks that each object is exactly what JSON.parse accepts, reads metadata.name,
// .namespace and .resourceVersion, and locates metadata.managedFields; it leaves to the
// caller's eager path what it does not handle: escaped or duplicate keys where it reads them, a
// metadata that is not an object or has no name, a tracked value that is not a string, nesting
// deeper than MAX_DEPTH.
//
// Memory, from `base()`: a nesting stack (MAX_DEPTH + 1 bytes), the last namespace read in
// this call of `scan` (a u32 length, then up to 256 bytes), then the caller's `area()`: input
// bytes, a 0 after them, and records.

const MAX_DEPTH: i32 = 256;
const QUOTE: u32 = 34;
const BACKSLASH: u32 = 92;
const LBRACE: u32 = 123;
const RBRACE: u32 = 125;
const LBRACKET: u32 = 91;
const RBRACKET: u32 = 93;
const COLON: u32 = 58;
const COMMA: u32 = 44;
const MINUS: u32 = 45;
const PLUS: u32 = 43;
const DOT: u32 = 46;
const ZERO: u32 = 48;
const NEWLINE: u32 = 10;

const OTHER: i32 = 0;
const NAME: i32 = 1;
const NAMESPACE: i32 = 2;
const RESOURCE_VERSION: i32 = 3;
const MANAGED_FIELDS: i32 = 4;

/** Record fields (i32 each). */
export const REC: i32 = 10;

const TYPE_PREFIX = memory.data<u8>([123, 34, 116, 121, 112, 101, 34, 58, 34]); // {"type":"
const ADDED_REST = memory.data<u8>([68, 68, 69, 68, 34, 44, 34, 111, 98, 106, 101, 99, 116, 34, 58]); // DDED","object":
const MODIFIED_REST = memory.data<u8>([79, 68, 73, 70, 73, 69, 68, 34, 44, 34, 111, 98, 106, 101, 99, 116, 34, 58]); // ODIFIED","object":
const DELETED_REST = memory.data<u8>([69, 76, 69, 84, 69, 68, 34, 44, 34, 111, 98, 106, 101, 99, 116, 34, 58]); // ELETED","object":
const W_METADATA = memory.data<u8>([109, 101, 116, 97, 100, 97, 116, 97]);
const W_NAME = memory.data<u8>([110, 97, 109, 101]);
const W_NAMESPACE = memory.data<u8>([110, 97, 109, 101, 115, 112, 97, 99, 101]);
const W_MANAGED = memory.data<u8>([109, 97, 110, 97, 103, 101, 100, 70, 105, 101, 108, 100, 115]);
const W_RV = memory.data<u8>([114, 101, 115, 111, 117, 114, 99, 101, 86, 101, 114, 115, 105, 111, 110]);
const W_TRUE = memory.data<u8>([116, 114, 117, 101]);
const W_FALSE = memory.data<u8>([102, 97, 108, 115, 101]);
const W_NULL = memory.data<u8>([110, 117, 108, 108]);
/** 1 for the bytes that stand for themselves in a JSON string. */
const PLAIN = memory.data<u8>([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);

/** Where the scan's own memory starts (after the module's static data). */
export function base(): i32 {
  return (<i32>__heap_base + 7) & ~7;
}

@inline function stackAt(): i32 {
  return base();
}
@inline function lastNsAt(): i32 {
  return base() + MAX_DEPTH + 8;
}
/** The caller's area: input and records. */
export function area(): i32 {
  return lastNsAt() + 4 + 256 + 8;
}

// Results of the last event scanned.
let objEnd: i32 = 0;
let cutStart: i32 = -1;
let cutEnd: i32 = -1;
let nameA: i32 = -1;
let nameB: i32 = -1;
let nsA: i32 = -1;
let nsB: i32 = -1;
let rvA: i32 = -1;
let rvB: i32 = -1;
/** bit 0: name escaped, 1: namespace escaped, 2: rv escaped, 3: namespace as the last one. */
let flags: i32 = 0;
let escaped: bool = false;

// Results of the last `scan`.
let packedEnd: i32 = 0;
let stoppedAt: i32 = 0;
export function lastPackedEnd(): i32 {
  return packedEnd;
}
export function lastStoppedAt(): i32 {
  return stoppedAt;
}

@inline function at(i: i32): u32 {
  return <u32>load<u8>(i);
}

@inline function bytesAt(i: i32, end: i32, word: usize, len: i32): bool {
  if (i + len > end) return false;
  for (let k = 0; k < len; k++) if (load<u8>(i + k) != load<u8>(<i32>word + k)) return false;
  return true;
}

@inline function isSpace(c: u32): bool {
  return c == 32 || c == 9 || c == 13;
}
@inline function isDigit(c: u32): bool {
  return c - ZERO < 10;
}
@inline function isHex(c: u32): bool {
  return c - ZERO < 10 || (c | 32) - 97 < 6;
}

/** Skips the string token after its opening quote at `i`; the index after it, or -1. */
function skipString(i: i32, end: i32): i32 {
  escaped = false;
  while (true) {
    // The caller puts a 0 (never plain) at `end`: no bound to check in the hot loop.
    while (load<u8>(PLAIN + <usize>load<u8>(i)) != 0) i++;
    if (i >= end) return -1;
    const c = at(i);
    if (c == QUOTE) return i + 1;
    if (c != BACKSLASH) return -1;
    escaped = true;
    if (i + 1 >= end) return -1;
    const e = at(i + 1);
    if (e == 117) {
      if (i + 5 >= end) return -1;
      if (!isHex(at(i + 2)) || !isHex(at(i + 3)) || !isHex(at(i + 4)) || !isHex(at(i + 5))) return -1;
      i += 6;
    } else if (e == QUOTE || e == BACKSLASH || e == 47 || e == 98 || e == 102 || e == 110 || e == 114 || e == 116) {
      i += 2;
    } else return -1;
  }
  return -1;
}

/** Skips the number at `i`; the index after it, or -1. */
function number(i: i32, end: i32): i32 {
  if (i < end && at(i) == MINUS) i++;
  if (i >= end) return -1;
  let c = at(i);
  if (c == ZERO) i++;
  else if (isDigit(c)) {
    i++;
    while (i < end && isDigit(at(i))) i++;
  } else return -1;
  if (i < end && at(i) == DOT) {
    i++;
    if (i >= end || !isDigit(at(i))) return -1;
    while (i < end && isDigit(at(i))) i++;
  }
  if (i < end && (at(i) == 101 || at(i) == 69)) {
    i++;
    if (i < end && (at(i) == PLUS || at(i) == MINUS)) i++;
    if (i >= end || !isDigit(at(i))) return -1;
    while (i < end && isDigit(at(i))) i++;
  }
  return i;
}

@inline function skipSpaces(i: i32, end: i32): i32 {
  while (i < end && isSpace(at(i))) i++;
  return i;
}

@inline function tokenIs(a: i32, b: i32, word: usize, len: i32): bool {
  return b - a == len && bytesAt(a, b, word, len);
}

function metadataKey(a: i32, b: i32): i32 {
  const n = b - a;
  if (n == 4) return tokenIs(a, b, W_NAME, 4) ? NAME : OTHER;
  if (n == 9) return tokenIs(a, b, W_NAMESPACE, 9) ? NAMESPACE : OTHER;
  if (n == 13) return tokenIs(a, b, W_MANAGED, 13) ? MANAGED_FIELDS : OTHER;
  if (n == 15) return tokenIs(a, b, W_RV, 15) ? RESOURCE_VERSION : OTHER;
  return OTHER;
}

/** Whether `[a, b)` holds the bytes of the last namespace read. */
function sameAsLastNamespace(a: i32, b: i32): bool {
  const p = lastNsAt();
  const len = <i32>load<u32>(p);
  if (b - a != len || len == 0) return false;
  for (let k = 0; k < len; k++) if (load<u8>(a + k) != load<u8>(p + 4 + k)) return false;
  return true;
}

/**
 * Scans the object at `start`: the same walk as the JavaScript scan's `object`. Returns where
 * it ends, or -1.
 */
function object(start: i32, end: i32): i32 {
  cutStart = -1;
  cutEnd = -1;
  nameA = -1;
  nameB = -1;
  nsA = -1;
  nsB = -1;
  rvA = -1;
  rvB = -1;
  flags = 0;
  let seen: i32 = 0;
  let i = skipSpaces(start, end);
  if (i >= end || at(i) != LBRACE) return -1;
  const stack = stackAt();
  let depth: i32 = 0;
  let inMeta = false;
  let key1: i32 = OTHER; // 1 when the current key of the root object is "metadata"
  let key2: i32 = OTHER;
  let key2Start: i32 = 0;
  let key2Comma = false;
  let needKey = false;
  let commaAt: i32 = -1;
  let keyA: i32 = 0;
  let keyB: i32 = 0;
  let metaSeen = false;

  while (true) {
    if (needKey) {
      needKey = false;
      if (i >= end || at(i) != QUOTE) return -1;
      keyA = i + 1;
      i = skipString(i + 1, end);
      if (i < 0) return -1;
      keyB = i - 1;
      i = skipSpaces(i, end);
      if (i >= end || at(i) != COLON) return -1;
      i = skipSpaces(i + 1, end);
      if (depth == 1) {
        // An escaped key here could spell a tracked one: JSON.parse decides.
        if (escaped) return -1;
        key1 = tokenIs(keyA, keyB, W_METADATA, 8) ? 1 : OTHER;
        if (key1 == 1) {
          if (metaSeen) return -1;
          metaSeen = true;
        }
      } else if (depth == 2 && inMeta) {
        if (escaped) return -1;
        key2 = metadataKey(keyA, keyB);
        if (key2 != OTHER) {
          const bit = 1 << key2;
          if (seen & bit) return -1;
          seen |= bit;
          key2Comma = commaAt >= 0;
          key2Start = key2Comma ? commaAt : keyA - 1;
        }
      }
    }
    if (i >= end) return -1;
    let c = at(i);
    const tracked = depth == 2 && inMeta && key2 >= NAME && key2 <= RESOURCE_VERSION;
    // name, namespace and resourceVersion are strings; anything else is for JSON.parse to take.
    if (tracked && c != QUOTE) return -1;
    if (c == LBRACE || c == LBRACKET) {
      if (depth == MAX_DEPTH) return -1;
      const isObject = c == LBRACE;
      depth++;
      store<u8>(stack + depth, isObject ? 1 : 2);
      if (depth == 2 && key1 == 1) {
        if (!isObject) return -1;
        inMeta = true;
        key2 = OTHER;
      }
      i = skipSpaces(i + 1, end);
      if (i >= end) return -1;
      c = at(i);
      if (isObject) {
        if (c != RBRACE) {
          needKey = true;
          commaAt = -1;
          continue;
        }
      } else if (c != RBRACKET) continue;
      // An empty container: closed below.
    } else if (c == QUOTE) {
      const a = i + 1;
      i = skipString(i + 1, end);
      if (i < 0) return -1;
      if (tracked) {
        const b = i - 1;
        if (key2 == NAME) {
          nameA = a;
          nameB = b;
          if (escaped) flags |= 1;
        } else if (key2 == NAMESPACE) {
          nsA = a;
          nsB = b;
          if (escaped) flags |= 2;
          else if (sameAsLastNamespace(a, b)) flags |= 8;
          else if (b - a <= 256) {
            const p = lastNsAt();
            store<u32>(p, b - a);
            memory.copy(p + 4, a, b - a);
          }
        } else {
          rvA = a;
          rvB = b;
          if (escaped) flags |= 4;
        }
      }
    } else if (c == MINUS || isDigit(c)) {
      i = number(i, end);
      if (i < 0) return -1;
    } else if (c == 116 && bytesAt(i, end, W_TRUE, 4)) i += 4;
    else if (c == 102 && bytesAt(i, end, W_FALSE, 5)) i += 5;
    else if (c == 110 && bytesAt(i, end, W_NULL, 4)) i += 4;
    else return -1;

    // After a value: a comma and the next value, or closing brackets.
    while (true) {
      if (depth == 2 && inMeta && key2 == MANAGED_FIELDS && cutEnd < 0) {
        cutStart = key2Start;
        cutEnd = i;
        if (!key2Comma) {
          const j = skipSpaces(i, end);
          if (j < end && at(j) == COMMA) cutEnd = j + 1;
        }
      }
      i = skipSpaces(i, end);
      if (i >= end) return -1;
      c = at(i);
      if (c == COMMA) {
        const comma = i;
        i = skipSpaces(i + 1, end);
        if (load<u8>(stack + depth) == 1) {
          needKey = true;
          commaAt = comma;
        }
        break;
      }
      if (c != (load<u8>(stack + depth) == 1 ? RBRACE : RBRACKET)) return -1;
      i++;
      if (depth == 2 && inMeta) {
        inMeta = false;
        key1 = OTHER;
      }
      depth--;
      if (depth == 0) {
        objEnd = i;
        return seen & (1 << NAME) ? i : -1;
      }
    }
  }
  return -1;
}

/** The line's end (its newline, or `end`) after the object at `start` and the event's `}`; or -1. */
function event(start: i32, end: i32): i32 {
  const after = object(start, end);
  if (after < 0) return -1;
  let i = skipSpaces(after, end);
  if (i >= end || at(i) != RBRACE) return -1;
  i = skipSpaces(i + 1, end);
  return i == end || at(i) == NEWLINE ? i : -1;
}

/** Where an offset of the object lands once it is packed at `to` (nothing of the cut is asked). */
@inline function moved(p: i32, objStart: i32, to: i32): i32 {
  if (p < 0) return -1;
  if (cutStart >= 0 && p >= cutEnd) return p - objStart - (cutEnd - cutStart) + to;
  return p - objStart + to;
}

/** `scan` mode: leave metadata.managedFields out of the kept texts. */
const DROP: i32 = 1;
/** `scan` mode: a comma after each kept text (for one JSON.parse of them all). */
const SEPARATE: i32 = 2;

/**
 * Scans the lines of `[from, end)` while they are deferrable events, moving each object's kept
 * text to the front (from `from` on) and writing a record per event at `out`. Stops at the end,
 * or at the first line to decode otherwise (`lastStoppedAt`). Returns the number of records.
 */
export function scan(from: i32, end: i32, out: i32, mode: i32): i32 {
  // Namespaces repeat within a call only: the caller's copy of the last one is the call's.
  store<u32>(lastNsAt(), 0);
  let packed = from;
  let count = 0;
  let lineStart = from;
  while (lineStart < end) {
    let type = 0;
    let objStart = 0;
    if (bytesAt(lineStart, end, TYPE_PREFIX, 9)) {
      const p = lineStart + 9;
      const c = at(p);
      if (c == 65 && bytesAt(p + 1, end, ADDED_REST, 15)) {
        type = 1;
        objStart = p + 16;
      } else if (c == 77 && bytesAt(p + 1, end, MODIFIED_REST, 18)) {
        type = 2;
        objStart = p + 19;
      } else if (c == 68 && bytesAt(p + 1, end, DELETED_REST, 17)) {
        type = 3;
        objStart = p + 18;
      }
    }
    if (type == 0) break;
    const lineEnd = event(objStart, end);
    if (lineEnd < 0) break;
    const to = packed;
    if (mode & DROP && cutStart >= 0) {
      memory.copy(packed, objStart, cutStart - objStart);
      packed += cutStart - objStart;
      memory.copy(packed, cutEnd, objEnd - cutEnd);
      packed += objEnd - cutEnd;
    } else {
      if (!(mode & DROP)) cutStart = -1;
      memory.copy(packed, objStart, objEnd - objStart);
      packed += objEnd - objStart;
    }
    const r = out + count * REC * 4;
    store<i32>(r, type);
    store<i32>(r + 4, to);
    store<i32>(r + 8, packed);
    // Never past what is read: a line is longer than its object by its event's prefix.
    if (mode & SEPARATE) store<u8>(packed++, <u8>COMMA);
    store<i32>(r + 12, moved(nameA, objStart, to));
    store<i32>(r + 16, moved(nameB, objStart, to));
    store<i32>(r + 20, moved(nsA, objStart, to));
    store<i32>(r + 24, moved(nsB, objStart, to));
    store<i32>(r + 28, moved(rvA, objStart, to));
    store<i32>(r + 32, moved(rvB, objStart, to));
    store<i32>(r + 36, flags);
    count++;
    lineStart = lineEnd + 1;
  }
  packedEnd = packed;
  stoppedAt = lineStart;
  return count;
}
