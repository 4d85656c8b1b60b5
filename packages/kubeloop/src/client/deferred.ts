/**
 * Deferred decoding of watch events, for caches (informers) that hold far more objects than
 * anyone reads: an event's object is checked to be valid JSON and its `metadata.name`,
 * `namespace` and `resourceVersion` are read without building it; its text (without
 * `metadata.managedFields`, when they are to be dropped) is kept, and the object is built the
 * first time someone asks for it.
 *
 * Why: building every object of a 10,000-object watch-list costs about 40 ms of `JSON.parse`
 * plus the garbage collections its survivors cause, and the cache of a controller-runtime-style
 * client (`manager.cache`) is mostly never read. Memory is about what the decoded object would
 * take: its text without managedFields, and about 150 bytes of bookkeeping (`bench/informer`).
 *
 * The scan is WebAssembly (`wasm/scan.ts`, AssemblyScript): in JavaScript it ran unoptimized
 * for the first 2 MB of a watch-list, in a fresh process — V8 compiled its one large function
 * late — and cost a 10,000-object informer 46–66 ms where WebAssembly takes about 20.
 *
 * Nothing invalid is deferred: a line that is not a well-formed watch event takes the eager
 * path ({@link decodeWatchLine}), which reports it exactly as before.
 */
import type { ApiError } from '../api/status.js';
import { SCAN_WASM } from './scan-wasm.js';
import type { KubeObject } from './types.js';
import { decodeWatchLine, eagerLineDecoder, type LineDecoder, type WatchEvent } from './watch.js';

/** The shared bytes of the objects of one scanned slice of a received batch. */
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
  /** `metadata.resourceVersion`, once read. */
  private rv: string | undefined;

  constructor(
    readonly name: string,
    /** `''` for cluster-scoped objects. */
    readonly namespace: string,
    private readonly pack: Pack,
    private readonly start: number,
    private readonly end: number,
    /** Where the resourceVersion's text is in the pack (-1: none), when not given as `rv`. */
    private readonly rvFrom: number,
    private readonly rvTo: number,
    rv?: string,
  ) {
    this.rv = rv;
  }

  /**
   * `metadata.resourceVersion` (`''` when absent), read from the kept text when first asked:
   * the objects of a first list are never asked (a watcher compares versions on relists only).
   */
  get resourceVersion(): string {
    this.rv ??= this.rvFrom < 0 ? '' : this.pack.bytes.toString('utf8', this.rvFrom, this.rvTo);
    return this.rv;
  }

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

/** The event of a deferred object: its resourceVersion is the object's, read when asked. */
class DeferredEvent {
  constructor(
    readonly type: 'ADDED' | 'MODIFIED' | 'DELETED',
    readonly object: DeferredObject,
  ) {}

  get resourceVersion(): string {
    return this.object.resourceVersion;
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

const TYPES = [undefined, 'ADDED', 'MODIFIED', 'DELETED'] as const;

/** What is used of WebAssembly (a global of Node that @types/node does not declare). */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
};

/** The exports of the scan's module (wasm/scan.ts). */
interface ScanExports {
  memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  REC: { readonly value: number };
  area(): number;
  scan(from: number, end: number, out: number, mode: number): number;
  lastPackedEnd(): number;
  lastStoppedAt(): number;
}

/**
 * The scan's module, compiled once; its instance is shared by every decoder (decoding is
 * synchronous), made on first use and let go after a line that grew its memory much.
 */
let scanModule: object | null | undefined;
let scanner: ScanExports | undefined;
/**
 * The namespace of the last record whose namespace the scan kept: the scan reports repeats
 * within one of its calls (they do not span calls, of whatever decoder).
 */
let lastNamespace = '';

function instance(): ScanExports | undefined {
  if (scanner) return scanner;
  if (scanModule === undefined) {
    try {
      scanModule = new WebAssembly.Module(Buffer.from(SCAN_WASM, 'base64'));
    } catch {
      scanModule = null; // no WebAssembly here (--jitless): objects are decoded at once
    }
  }
  if (!scanModule) return undefined;
  scanner = new WebAssembly.Instance(scanModule, {}).exports as unknown as ScanExports;
  lastNamespace = '';
  return scanner;
}

/** Lines are scanned in slices of about this many bytes (a longer line, whole). */
const SLICE_BYTES = 64 * 1024;
/** A memory grown past this (by a long line) is let go with its instance. */
const KEEP_MEMORY_BYTES = 1 << 20;
/** The fields of a record (see wasm/scan.ts `scan`). */
const TYPE = 0;
const START = 1;
const END = 2;
const NAME_A = 3;
const NAME_B = 4;
const NS_A = 5;
const NS_B = 6;
const RV_A = 7;
const RV_B = 8;
const FLAGS = 9;
const NAME_ESCAPED = 1;
const NS_ESCAPED = 2;
const RV_ESCAPED = 4;
const NS_REPEATED = 8;

/** A string token's text `out[a, b)` (quotes excluded), unescaped when it has escapes. */
const text = (out: Buffer, a: number, b: number, escaped: boolean): string =>
  escaped ? (JSON.parse(out.toString('utf8', a - 1, b + 1)) as string) : out.toString('utf8', a, b);

/**
 * A line decoder that defers ADDED, MODIFIED and DELETED objects: their events carry
 * {@link DeferredObject}s typed as `T`, for a consumer that knows to decode them. Other events
 * and any line the scan does not accept are decoded at once, as {@link decodeWatchLine} does.
 * Where WebAssembly is not available, every line is.
 */
export function deferredLineDecoder<T extends KubeObject>(o: DeferredDecoding): LineDecoder<T> {
  return scanningDecoder<T>(o, false);
}

/**
 * The eager decoder of a consumer that drops `metadata.managedFields`: the scan cuts them out
 * of each object's text before `JSON.parse` builds it (one parse for the objects of a slice),
 * so they are never built. They are often the largest part of an object: an informer with a
 * handler (a controller's) decodes a 10,000-object watch-list with about a third less work.
 * Events and errors are those of {@link eagerLineDecoder}, managedFields aside.
 */
export function managedFieldsCuttingDecoder<T extends KubeObject>(): LineDecoder<T> {
  return scanningDecoder<T>({ dropManagedFields: true, finish: (obj) => obj }, true);
}

/** `scan` modes (wasm/scan.ts). */
const DROP = 1;
const SEPARATE = 2;

/** A decoder over the scan: deferred objects, or (`parse`) objects built at once. */
function scanningDecoder<T extends KubeObject>(o: DeferredDecoding, parse: boolean): LineDecoder<T> {
  const mode = (o.dropManagedFields ? DROP : 0) | (parse ? SEPARATE : 0);
  // Made while the watch's connection opens (the turn after it is asked for), rather than
  // when its first bytes arrive.
  setImmediate(instance);

  /** Decodes the complete lines `bytes` into `events`; returns a server ERROR event's error. */
  const slice = (x: ScanExports, bytes: Buffer, events: WatchEvent<T>[]): ApiError | undefined => {
    const n = bytes.length;
    const area = x.area();
    const recAt = (area + n + 8) & ~7;
    const rec = x.REC.value;
    // At most one record per 40 bytes: no deferrable event is shorter.
    const need = recAt + (Math.ceil(n / 40) + 2) * rec * 4;
    if (need > x.memory.buffer.byteLength)
      x.memory.grow(Math.ceil((need - x.memory.buffer.byteLength) / 65536));
    const mem = new Uint8Array(x.memory.buffer);
    mem.set(bytes, area);
    mem[area + n] = 0; // the scan's sentinel
    const end = area + n;
    let from = area;
    while (from < end) {
      const count = x.scan(from, end, recAt, mode);
      const packedEnd = count > 0 ? x.lastPackedEnd() : from;
      const r = new Int32Array(x.memory.buffer, recAt, count * rec);
      if (count > 0 && parse) {
        // The kept texts, each followed by a comma: one array for JSON.parse (without the last).
        const joined = Buffer.from(x.memory.buffer, from, packedEnd - 1 - from).toString('utf8');
        const objects = JSON.parse(`[${joined}]`) as T[];
        for (let k = 0; k < count; k++) {
          const object = objects[k]!;
          const rv = object.metadata?.resourceVersion;
          events.push({
            type: TYPES[r[k * rec + TYPE]!]!,
            object,
            resourceVersion: typeof rv === 'string' ? rv : '',
          });
        }
      } else if (count > 0) {
        // The kept texts of the objects, packed: their batch's buffer holds nothing else.
        const out = Buffer.allocUnsafeSlow(packedEnd - from);
        out.set(mem.subarray(from, packedEnd));
        const pack: Pack = { bytes: out, finish: o.finish };
        for (let k = 0, i = 0; k < count; k++, i += rec) {
          const flags = r[i + FLAGS]!;
          const name = text(out, r[i + NAME_A]! - from, r[i + NAME_B]! - from, (flags & NAME_ESCAPED) !== 0);
          let namespace = '';
          if (r[i + NS_A]! >= 0) {
            if (flags & NS_REPEATED) namespace = lastNamespace;
            else {
              namespace = text(out, r[i + NS_A]! - from, r[i + NS_B]! - from, (flags & NS_ESCAPED) !== 0);
              if (!(flags & NS_ESCAPED)) lastNamespace = namespace;
            }
          }
          const rvFrom = r[i + RV_A]! - from;
          const rvTo = r[i + RV_B]! - from;
          const obj = new DeferredObject(
            name,
            namespace,
            pack,
            r[i + START]! - from,
            r[i + END]! - from,
            r[i + RV_A]! >= 0 ? rvFrom : -1,
            rvTo,
            flags & RV_ESCAPED ? text(out, rvFrom, rvTo, true) : undefined,
          );
          events.push(new DeferredEvent(TYPES[r[i + TYPE]!]!, obj) as unknown as WatchEvent<T>);
        }
      }
      const stop = x.lastStoppedAt();
      if (stop >= end) break;
      // A line the scan leaves to JSON.parse: read from `bytes`, which the scan never rewrites.
      const lineStart = stop - area;
      let to = bytes.indexOf(10, lineStart);
      if (to < 0) to = n;
      from = area + to + 1;
      const line = bytes.toString('utf8', lineStart, to).trim();
      if (line === '') continue;
      try {
        events.push(decodeWatchLine<T>(line));
      } catch (err) {
        return err as ApiError;
      }
    }
    return undefined;
  };

  return (bytes) => {
    const x = instance();
    if (!x) return eagerLineDecoder<T>(bytes);
    const events: WatchEvent<T>[] = [];
    try {
      for (let s = 0; s < bytes.length; ) {
        let to = Math.min(s + SLICE_BYTES, bytes.length);
        if (to < bytes.length) {
          const nl = bytes.lastIndexOf(10, to - 1);
          if (nl >= s) to = nl + 1;
          else {
            const next = bytes.indexOf(10, to);
            to = next < 0 ? bytes.length : next + 1;
          }
        }
        const error = slice(x, bytes.subarray(s, to), events);
        if (error) return { events, error };
        s = to;
      }
    } finally {
      if (x.memory.buffer.byteLength > KEEP_MEMORY_BYTES) scanner = undefined;
    }
    return { events };
  };
}
