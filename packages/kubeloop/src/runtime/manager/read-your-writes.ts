/**
 * Read-your-writes between the manager's client and its cache.
 *
 * The problem (controller-runtime issues #1464, #1622, #3320): a reconcile writes an object,
 * the write changes it, the reconcile is requeued at once — and reads the *old* version from
 * the informer cache, which has not seen the watch event yet. It then acts on stale state:
 * recreates a child it just made, writes a status computed from old data, or hits conflicts.
 *
 * The design: every write made through the manager's client (create, update, patch, apply,
 * their status variants, delete) records an *expectation* — "the cache must hold this object
 * at resourceVersion ≥ R" (or "must no longer hold it" after a delete that removed it). A read
 * through the manager's cache — including the read of the primary object before each
 * reconcile — first waits until the cache meets the expectation of the object read (list: of
 * every object of the kind in scope). Informer events wake the waiters; a met expectation is
 * forgotten. Should the cache not catch up within `readYourWritesTimeoutMs` (a broken watch),
 * the read goes to the server, which is always current, and the expectation is dropped.
 *
 * resourceVersions are compared as integers when both are decimal (every real API server and
 * the local control plane); an opaque one is only met by an equal version or a later event.
 */
import type { KubeObject } from '../../client/types.js';

interface Expectation {
  /** The version written, or `undefined` when the object was deleted. */
  readonly rv: string | undefined;
  /** Set by the first informer event after the write, for opaque versions. */
  seenEvent: boolean;
}

/** @internal identity of an object across kinds. */
export interface ObjectRef {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

const DECIMAL = /^\d+$/;

/** Whether resourceVersion `have` is at least `want`. */
export function atLeast(have: string | undefined, want: string): boolean {
  if (have === undefined) return false;
  if (DECIMAL.test(have) && DECIMAL.test(want)) return BigInt(have) >= BigInt(want);
  return have === want;
}

const refKey = (r: ObjectRef) => `${r.group}\u0000${r.kind}\u0000${r.namespace}\u0000${r.name}`;
const kindKey = (group: string, kind: string) => `${group}\u0000${kind}\u0000`;

/**
 * The expectations of one manager: what its client wrote that its cache must reflect.
 *
 * @example
 * ```ts
 * tracker.written({ group: 'apps', kind: 'Deployment', namespace: 'a', name: 'web' }, '42');
 * await tracker.wait(ref, () => informer.store.get('web', 'a'), 10_000);
 * ```
 */
export class WriteTracker {
  private readonly expectations = new Map<string, Expectation>();
  private waiters = new Set<() => void>();

  /** Records a write that left the object at `resourceVersion`. */
  written(ref: ObjectRef, resourceVersion: string): void {
    const key = refKey(ref);
    const prev = this.expectations.get(key);
    // Two writes whose answers arrive out of order: keep the newer expectation.
    if (prev?.rv !== undefined && atLeast(prev.rv, resourceVersion) && prev.rv !== resourceVersion) return;
    this.expectations.set(key, { rv: resourceVersion, seenEvent: false });
  }

  /** Records a delete that removed the object. */
  deleted(ref: ObjectRef): void {
    this.expectations.set(refKey(ref), { rv: undefined, seenEvent: false });
  }

  /** Number of expectations not met yet. */
  get pending(): number {
    return this.expectations.size;
  }

  /**
   * Tells the tracker the cache changed (an informer event; `deleted` for a deletion); wakes
   * the waiters.
   */
  changed(obj?: KubeObject, ref?: ObjectRef, deleted = false): void {
    if (ref) {
      const key = refKey(ref);
      const e = this.expectations.get(key);
      const rv = obj?.metadata?.resourceVersion;
      if (e && rv !== undefined) {
        e.seenEvent = true;
        // Deleted at or after the version written (e.g. by the write that removed the last
        // finalizer): the cache is right not to hold it any more.
        if (deleted && e.rv !== undefined && (atLeast(rv, e.rv) || !DECIMAL.test(e.rv))) {
          this.expectations.set(key, { rv: undefined, seenEvent: true });
        }
      }
    }
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const w of waiters) w();
  }

  /** Whether the cached state of `ref` meets its expectation (forgets a met one). */
  met(ref: ObjectRef, cached: KubeObject | undefined): boolean {
    const key = refKey(ref);
    const e = this.expectations.get(key);
    if (!e) return true;
    const ok =
      e.rv === undefined
        ? cached === undefined
        : atLeast(cached?.metadata?.resourceVersion, e.rv) ||
          (!DECIMAL.test(e.rv) && e.seenEvent && cached !== undefined);
    if (ok) this.expectations.delete(key);
    return ok;
  }

  /** Drops the expectation of `ref` (after reading the server instead). */
  forget(ref: ObjectRef): void {
    this.expectations.delete(refKey(ref));
  }

  /** The objects of a kind (in `namespace`, or all when `''`) with expectations. */
  refsOf(group: string, kind: string, namespace: string): ObjectRef[] {
    const prefix = kindKey(group, kind);
    const out: ObjectRef[] = [];
    for (const key of this.expectations.keys()) {
      if (!key.startsWith(prefix)) continue;
      const [, , ns = '', name = ''] = key.split('\u0000');
      if (namespace === '' || ns === namespace) out.push({ group, kind, namespace: ns, name });
    }
    return out;
  }

  /**
   * Waits until `read()` meets the expectation of `ref`; `false` when `timeoutMs` passed or
   * `signal` aborted first.
   */
  wait(
    ref: ObjectRef,
    read: () => KubeObject | undefined,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<boolean> {
    if (this.met(ref, read())) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(check);
        resolve(ok);
      };
      const check = () => {
        if (this.met(ref, read())) finish(true);
        else this.waiters.add(check);
      };
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(false), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(check);
    });
  }
}
