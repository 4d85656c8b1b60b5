/**
 * The storage contract of the local control plane: a key/value store of Kubernetes objects
 * with one global, monotonically increasing revision (the `resourceVersion`), like etcd.
 */

/** A plain JSON object as stored: a Kubernetes object with `metadata`. */
export type KubeObject = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, unknown>;
};

/** An object as the store holds it: immutable, with its revision and its encoded JSON. */
export interface StoredObject {
  readonly key: string;
  /** Deeply frozen; `metadata.resourceVersion` equals `String(revision)`. */
  readonly object: Readonly<KubeObject>;
  /** The revision of the write that produced this state (etcd's mod revision). */
  readonly revision: number;
  /** `JSON.stringify(object)`, computed once and shared by every reader and watcher. */
  readonly json: string;
}

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change. For DELETED, `object` is the last state with the deletion's revision. */
export interface StoreEvent {
  readonly type: StoreEventType;
  readonly revision: number;
  readonly key: string;
  readonly object: StoredObject;
  /** The state before this change (absent for ADDED). */
  readonly prev?: StoredObject;
}

export type Unsubscribe = () => void;

/** Options of {@link Store.list}. */
export interface ListOptions {
  /** Only keys strictly greater than this one (pagination). */
  after?: string;
  /** At most this many items; the result says whether more remain. */
  limit?: number;
  /** Read the state as of this revision (must be within the retained history), default: now. */
  atRevision?: number;
  /** Keeps an item only when it returns true (selectors); `limit` counts kept items. */
  filter?: (obj: StoredObject) => boolean;
}

export interface ListResult {
  items: StoredObject[];
  /** The revision this list is consistent at. */
  revision: number;
  /** Set when `limit` cut the list short: the last key returned. */
  continueAfter?: string;
}
