/**
 * Server-side field validation (`fieldValidation=Strict|Warn|Ignore`): unknown and duplicate
 * fields in a request body, reported in kube-apiserver's words.
 *
 * kube-apiserver finds them while decoding: built-in kinds through sigs.k8s.io/json's strict
 * mode (errors in document order, deduplicated, at most 100), custom resources through pruning
 * against their structural schema (paths sorted). Both name a field by its path from the root,
 * keys joined with `.` and list indices as `[i]`: `unknown field "spec.containers[0].foo"`,
 * `duplicate field "spec.replicas"`.
 *
 * A Strict request fails with 400 BadRequest, whose message is {@link strictDecodingMessage} of
 * all the errors (prefixed for create and update by {@link cannotBeHandledMessage}); a Warn
 * request succeeds with one `Warning` header per error, its text the error itself.
 *
 * @example
 * ```ts
 * const errors = [...findDuplicateFields(rawBody), ...findUnknownFields(obj, view)];
 * if (errors.length && directive === 'Strict')
 *   throw ApiError.badRequest(cannotBeHandledMessage('Deployment', 'v1', errors));
 * ```
 */
import { canonicalQuantity } from 'kubeloop/api';
import { CLOSED, type SchemaNode, type SchemaView } from './schema-view.js';

/** sigs.k8s.io/json stops collecting strict errors after this many. */
const MAX_STRICT_ERRORS = 100;

/**
 * The unknown fields of `obj`, as `unknown field "<path>"` messages: keys `schema` does not
 * declare (and that no `additionalProperties` or `x-kubernetes-preserve-unknown-fields`
 * allows). Built-in kinds report in document order, custom resources in sorted order.
 */
export function findUnknownFields(obj: unknown, schema: SchemaView): string[] {
  return unknownFields(obj, schema, false);
}

/**
 * Removes from `obj`, in place, the fields {@link findUnknownFields} reports, and returns the
 * same messages: what kube-apiserver does to unknown fields when it does not reject them
 * (`fieldValidation=Warn|Ignore`): decoding into a Go struct drops them, and so does pruning a
 * custom resource. For built-in kinds it also does the rest of that round trip: empty
 * `omitempty` lists and maps are dropped and quantities re-rendered canonically.
 */
export function pruneUnknownFields(obj: unknown, schema: SchemaView): string[] {
  return unknownFields(obj, schema, true);
}

function unknownFields(obj: unknown, schema: SchemaView, prune: boolean): string[] {
  const walker = new UnknownFieldWalker(schema.structural, schema.objectMeta, prune);
  walker.walk(obj, schema.root);
  let paths = walker.found;
  // Pruning reports its paths sorted; ObjectMeta coercion then appends the metadata ones.
  if (schema.structural) paths = [...paths.sort(), ...walker.foundInMetadata];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    const message = `unknown field ${goQuote(path)}`;
    if (seen.has(message)) continue;
    seen.add(message);
    out.push(message);
    if (!schema.structural && out.length >= MAX_STRICT_ERRORS) break;
  }
  return out;
}

class UnknownFieldWalker {
  /** Path segments to the current value: `spec`, `.template`, `[0]`… */
  private readonly segments: string[] = [];
  readonly found: string[] = [];
  readonly foundInMetadata: string[] = [];
  private inMetadata = 0;

  constructor(
    private readonly structural: boolean,
    private readonly objectMeta: SchemaNode | undefined,
    private readonly prune: boolean,
  ) {}

  walk(value: unknown, node: SchemaNode): void {
    if (node.opaque || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      const items = node.items ?? (this.structural ? CLOSED : undefined);
      if (!items) return;
      for (let i = 0; i < value.length; i++) {
        this.segments.push(`[${i}]`);
        this.walk(value[i], items);
        this.segments.pop();
      }
      return;
    }
    // Go decodes a JSON object into a struct or a map; a scalar or slice type is a type error,
    // not a strict one. Pruning, on the other hand, looks into every object.
    if (!this.structural && !node.props && !node.additional) return;
    const { props, additional, open } = node;
    for (const key in value) {
      const child = props?.get(key) ?? additional;
      if (child) {
        const meta = child === this.objectMeta;
        if (meta) this.inMetadata++;
        this.segments.push(this.segments.length === 0 ? key : `.${key}`);
        const v = (value as Record<string, unknown>)[key];
        this.walk(v, child);
        this.segments.pop();
        if (meta) this.inMetadata--;
        // Decoding into the Go struct drops an empty `omitempty` list or map as well, and
        // re-renders quantities.
        if (this.prune && node.omitEmpty?.has(key) && isEmptyCollection(v)) {
          delete (value as Record<string, unknown>)[key];
        } else if (this.prune && child.quantity && (typeof v === 'string' || typeof v === 'number')) {
          const text = canonicalQuantity(v);
          if (text !== undefined) (value as Record<string, unknown>)[key] = text;
        }
      } else if (!open) {
        const path = this.segments.length === 0 ? key : `${this.segments.join('')}.${key}`;
        (this.inMetadata > 0 ? this.foundInMetadata : this.found).push(path);
        // Deleting the key being visited is safe within for…in.
        if (this.prune) delete (value as Record<string, unknown>)[key];
      }
    }
  }
}

function isEmptyCollection(v: unknown): boolean {
  if (Array.isArray(v)) return v.length === 0;
  return v !== null && typeof v === 'object' && Object.keys(v).length === 0;
}

/** Keys of one object looked up by a scan of its slice of `seen` up to this many, then in a Set. */
const SCAN_KEYS = 16;

/**
 * The keys that appear more than once in the same object of a raw JSON text, as
 * `duplicate field "<path>"` messages in document order (JSON.parse silently keeps the last).
 * One pass over the text, with no value built; the text is expected to be valid JSON (parse it
 * first: on malformed input the result is unspecified but the function does not throw).
 *
 * Every write's body passes here, so the pass allocates little: three stacks, no closure; the
 * keys of the open objects share one stack (a small object's keys are compared in place, a Set
 * is made only for a large one), and a path is put together only for a duplicate.
 */
export function findDuplicateFields(rawJson: string): string[] {
  const out: string[] = [];
  let seenMessages: Set<string> | undefined;
  // Two numbers per open container: the next index (arrays) or -1 (objects), and where its
  // keys start in `seen`.
  const frames: number[] = [];
  // How each open container is reached from its parent: a key, an index ('' for the root).
  const segs: (string | number)[] = [];
  /** The keys of the open objects so far, outermost first. */
  const seen: string[] = [];
  /** By depth: the Set of an open object's keys, once it has more than SCAN_KEYS. */
  let sets: (Set<string> | undefined)[] | undefined;
  let pendingKey: string | undefined;
  const n = rawJson.length;
  let i = 0;

  while (i < n) {
    const c = rawJson.charCodeAt(i);
    switch (c) {
      case 0x7b /* { */:
      case 0x5b /* [ */:
        segs.push(nextSegment(frames, segs.length, pendingKey));
        pendingKey = undefined;
        frames.push(c === 0x7b ? -1 : 0, seen.length);
        i++;
        break;
      case 0x7d /* } */:
      case 0x5d /* ] */:
        if (segs.length > 0) {
          seen.length = frames[frames.length - 1]!;
          frames.length -= 2;
          segs.pop();
          if (sets && sets.length > segs.length) sets.length = segs.length;
        }
        i++;
        break;
      case 0x22 /* " */:
        {
          const end = stringEnd(rawJson, i);
          const top = segs.length - 1;
          if (top >= 0 && frames[2 * top]! < 0 && pendingKey === undefined && isKeyPosition(rawJson, end)) {
            const key = decodeString(rawJson, i, end);
            const first = frames[2 * top + 1]!;
            const set = sets?.[top];
            let duplicate = false;
            if (set) duplicate = set.has(key);
            else
              for (let j = first; j < seen.length; j++) {
                if (seen[j] === key) {
                  duplicate = true;
                  break;
                }
              }
            if (duplicate) {
              if (out.length < MAX_STRICT_ERRORS) {
                const message = `duplicate field ${goQuote(pathOf(segs, key))}`;
                seenMessages ??= new Set();
                if (!seenMessages.has(message)) {
                  seenMessages.add(message);
                  out.push(message);
                }
              }
            } else {
              seen.push(key);
              if (set) set.add(key);
              else if (seen.length - first > SCAN_KEYS) {
                sets ??= [];
                sets[top] = new Set(seen.slice(first));
              }
            }
            pendingKey = key;
          } else {
            // A string value: consumes the pending key or an array slot.
            nextSegment(frames, segs.length, pendingKey);
            pendingKey = undefined;
          }
          i = end;
          break;
        }
      case 0x20:
      case 0x09:
      case 0x0a:
      case 0x0d:
      case 0x2c /* , */:
      case 0x3a /* : */:
        i++;
        break;
      default: {
        // A number or a literal (true, false, null): skip to the next delimiter.
        nextSegment(frames, segs.length, pendingKey);
        pendingKey = undefined;
        i++;
        while (i < n) {
          const d = rawJson.charCodeAt(i);
          if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09)
            break;
          i++;
        }
      }
    }
  }
  return out;
}

/**
 * The segment naming the value that starts now in the innermost of `depth` open containers
 * (see {@link findDuplicateFields}): the pending key in an object, the next index (taken) in an
 * array, '' at the root.
 */
function nextSegment(frames: number[], depth: number, pendingKey: string | undefined): string | number {
  if (depth === 0) return '';
  const at = 2 * (depth - 1);
  const index = frames[at]!;
  if (index < 0) return pendingKey ?? '';
  frames[at] = index + 1;
  return index;
}

/** The path of `key` in the innermost open object, as the duplicate messages write it. */
function pathOf(segs: readonly (string | number)[], key: string): string {
  let path = '';
  for (let d = 1; d < segs.length; d++) {
    const seg = segs[d]!;
    if (typeof seg === 'number') path += `[${seg}]`;
    else path += d === 1 ? seg : `.${seg}`;
  }
  return path + (segs.length === 1 ? key : `.${key}`);
}

/** Index just past the closing quote of the string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i += 2;
    else if (c === 0x22) return i + 1;
    else i++;
  }
  return n;
}

/** Whether the string ending at `end` is an object key (the next token is `:`). */
function isKeyPosition(text: string, end: number): boolean {
  const n = text.length;
  for (let i = end; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a) return true;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return false;
}

/** The value of the JSON string literal `text[start, end)` (quotes included). */
function decodeString(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end - 1);
  if (raw.indexOf('\\') < 0) return raw;
  try {
    return JSON.parse(text.slice(start, end)) as string;
  } catch {
    return raw;
  }
}

/**
 * Go's `strconv.Quote`, which kube-apiserver's `%q` uses for field paths: printable characters
 * as they are, `"` and `\` escaped, control characters as `\n`, `\t`… or `\xNN`, other
 * non-printable ones as `\uNNNN`.
 */
export function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if ((code >= 0x80 && code < 0xa0) || code === 0xad)
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    // Go's JSON decoder turns a lone surrogate into U+FFFD, which Quote prints as it is.
    else if (code >= 0xd800 && code < 0xe000) out += '\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

/**
 * The text of kube-apiserver's strict decoding error (`runtime.NewStrictDecodingError`), the
 * 400 message of a Strict PATCH: `strict decoding error: unknown field "spec.foo", …`.
 */
export function strictDecodingMessage(errors: readonly string[]): string {
  return `strict decoding error: ${errors.join(', ')}`;
}

/**
 * The 400 message of a Strict create or update whose body has unknown or duplicate fields:
 * `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: …`.
 */
export function cannotBeHandledMessage(kind: string, version: string, errors: readonly string[]): string {
  return `${kind} in version ${goQuote(version)} cannot be handled as a ${kind}: ${strictDecodingMessage(errors)}`;
}
