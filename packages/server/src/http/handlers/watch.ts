/**
 * GET with `watch` (`watch`): the watch stream of a collection or one object, fed by the store's
 * fan-out of changes.
 */
import { ApiError, fieldErrors, type StatusCause } from 'kubeloop/api';
import { presentAll, presentAs } from '../../apiextensions/conversion.js';
import type { ListParams, RestStorage } from '../../registry/rest.js';
import { parseResourceVersion } from '../../registry/rest.js';
import { apiVersionOf, type ResourceType, storageOf } from '../../registry/types.js';
import { collectionPrefix, StorageError } from '../../storage/store.js';
import type { StoredObject, StoreEvent } from '../../storage/types.js';
import { lazyModule } from '../../util/lazy-module.js';
import type { Representation } from '../negotiation.js';
import { includeObject, listParams, parseInt64, queryBool } from '../params.js';
import { isWebSocketRequest } from '../streaming/upgrade.js';
import { type IncludeObject, partialObjectMetadata, table } from '../table.js';
import type { HandlerScope, ResourceRequest } from './scope.js';
import { httpWatchSink, type WatchSink } from './watch-sink.js';

/** The WebSocket watch stream: loaded with the first watch over a WebSocket. */
const websocketWatch = lazyModule(() => import('./watch-websocket.js'));

/** Serves a watch request: its options from the query, then {@link serveWatch}. */
export function watch(s: HandlerScope, r: ResourceRequest): void | Promise<void> {
  const { req, query } = r;
  const p: WatchParams = {
    ...listParams(query),
    allowWatchBookmarks: queryBool(query, 'allowWatchBookmarks') === true,
  };
  const timeout = query.get('timeoutSeconds');
  // A negative timeout is read as kube-apiserver reads it: a watch that ends at once.
  if (timeout !== null) p.timeoutSeconds = parseInt64(timeout);
  const sie = queryBool(query, 'sendInitialEvents');
  if (sie !== undefined) p.sendInitialEvents = sie;
  if (r.name) {
    p.fieldSelector = [...(p.fieldSelector ?? []), { field: 'metadata.name', operator: '=', value: r.name }];
  }
  const start = (sink: WatchSink) =>
    serveWatch(s.rest, r.t, r.namespace, p, sink, {
      bookmarkIntervalMs: s.bookmarkIntervalMs,
      maxBufferedBytes: 64 * 1024 * 1024,
      representation: r.media.representation,
      includeObject: includeObject(query),
      track: (close) => (s.exemptFromFaults?.(req) ? () => undefined : s.faults.trackWatch(r.info, close)),
    });
  // kube-apiserver serves a watch over a WebSocket too (golang.org/x/net/websocket).
  const upgrade = r.upgrade;
  if (!upgrade || !isWebSocketRequest(req)) return start(httpWatchSink(r.res));
  const overWebSocket = () => start(new (websocketWatch.get().WebSocketWatchSink)(req, upgrade));
  const loading = websocketWatch.load();
  return loading ? loading.then(overWebSocket) : overWebSocket();
}

export interface WatchParams extends ListParams {
  allowWatchBookmarks: boolean;
  timeoutSeconds?: number;
  sendInitialEvents?: boolean;
}

export interface WatchOptions {
  bookmarkIntervalMs: number;
  /** A watcher whose unsent output exceeds this is cut off (kube-apiserver closes slow watchers too). */
  maxBufferedBytes: number;
  representation: Representation;
  includeObject: IncludeObject;
  /** Registers the stream for fault injection; returns the unregister function. */
  track: (close: () => void) => () => void;
  /** Called once when the stream ends, whatever the reason. */
  onEnd?: () => void;
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * Serves a watch: newline-delimited JSON events, from `resourceVersion` on (or the current
 * state as ADDED events first), with selectors (an object entering or leaving a selector is
 * ADDED or DELETED for that watcher), bookmarks, `timeoutSeconds`, and watch-list.
 */
export function serveWatch(
  rest: RestStorage,
  t: ResourceType,
  namespace: string | undefined,
  p: WatchParams,
  res: WatchSink,
  opts: WatchOptions,
): void {
  rest.checkFieldSelector(t, p.fieldSelector);
  const store = rest.store;
  const { group, resource } = storageOf(t);
  const prefix = collectionPrefix(group, resource, t.namespaced ? namespace : undefined);
  const matches = rest.matcher(t, p) ?? (() => true);

  // validateWatchOptions: every fault of the options together, a 422 of the ListOptions.
  const faults: StatusCause[] = [];
  const match = p.resourceVersionMatch;
  if (p.sendInitialEvents !== undefined) {
    if (match !== 'NotOlderThan') {
      faults.push(
        fieldErrors.forbidden(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
      );
    }
    if (!p.allowWatchBookmarks) {
      faults.push(
        fieldErrors.forbidden(
          'allowWatchBookmarks',
          'allowWatchBookmarks required when sendInitialEvents is specified',
        ),
      );
    }
  }
  if (match) {
    if (p.sendInitialEvents === undefined) {
      faults.push(
        fieldErrors.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    }
    if (match !== 'NotOlderThan')
      faults.push(fieldErrors.notSupported('resourceVersionMatch', match, ['NotOlderThan']));
  }
  if (faults.length > 0) throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', faults);

  const rvParam = p.resourceVersion ?? '';
  const initial = p.sendInitialEvents ?? (rvParam === '' || rvParam === '0');
  let from: number;
  if (initial || rvParam === '' || rvParam === '0') from = store.revision;
  else from = parseResourceVersion(rvParam);

  const apiVersion = apiVersionOf(t);
  let first = true;
  /** The JSON of an event's object in the representation asked for. */
  const objectJson = (obj: StoredObject): string => {
    const o = presentAs(t, obj);
    switch (opts.representation.as) {
      case 'Table': {
        const body = JSON.stringify(
          table(t, [o], opts.includeObject, { resourceVersion: String(o.revision) }, first),
        );
        first = false;
        return body;
      }
      case 'PartialObjectMetadata':
      case 'PartialObjectMetadataList':
        return JSON.stringify(partialObjectMetadata(o));
      default:
        return o.json;
    }
  };
  const render = (
    type: EventType | 'BOOKMARK' | 'ERROR',
    obj: StoredObject | undefined,
    raw?: unknown,
  ): string =>
    `{"type":"${type}","object":${type === 'BOOKMARK' || type === 'ERROR' ? JSON.stringify(raw) : objectJson(obj!)}}\n`;
  const bookmark = (rv: number, initialEventsEnd = false) =>
    render('BOOKMARK', undefined, {
      kind: t.kind,
      apiVersion,
      metadata: {
        resourceVersion: String(rv),
        creationTimestamp: null,
        ...(initialEventsEnd && { annotations: { 'k8s.io/initial-events-end': 'true' } }),
      },
    });

  res.start();

  let ended = false;
  let lastRevision = from;
  let unsubscribe: (() => void) | undefined;
  const timers: NodeJS.Timeout[] = [];
  const end = () => {
    if (ended) return;
    ended = true;
    unsubscribe?.();
    untrack();
    for (const timer of timers) clearTimeout(timer);
    res.end();
    opts.onEnd?.();
  };
  const write = (chunk: string) => {
    if (ended) return;
    res.write(chunk);
    if (res.buffered > opts.maxBufferedBytes) {
      // The client does not keep up; closing lets it resume from its last resourceVersion.
      res.destroy();
      end();
    }
  };
  // While the initial events are being sent, the changes made meanwhile wait here (and no
  // bookmark may come between the initial events).
  let later: StoreEvent[] | undefined;
  const untrack = opts.track(end);
  res.onClose(end);

  // Through a conversion webhook, each event waits for its object's conversion and events leave
  // in order (as do the bookmarks between them); a conversion that fails ends the watch with an
  // ERROR event, as kube's watch of storage does when it cannot decode an object.
  const webhook = t.custom?.conversion === 'Webhook';
  let tail: Promise<void> | undefined;
  const fail = (err: unknown) => {
    if (ended) return;
    const message = err instanceof Error ? err.message : String(err);
    write(render('ERROR', undefined, ApiError.internal(message).status));
    end();
  };
  const ordered = (chunk: () => string, pending?: Promise<unknown>) => {
    if (!tail && !pending) return write(chunk());
    pending?.catch(() => undefined);
    const mine: Promise<void> = (tail ?? Promise.resolve())
      .then(() => pending)
      .then(() => write(chunk()), fail)
      .then(() => {
        if (tail === mine) tail = undefined;
      });
    tail = mine;
  };
  const emit = (type: EventType, obj: StoredObject) => {
    if (!webhook) return write(render(type, obj));
    const views = presentAll(t, [obj]);
    if (views instanceof Promise) {
      let converted: StoredObject;
      ordered(
        () => render(type, converted),
        views.then((v) => {
          converted = v[0]!;
        }),
      );
    } else ordered(() => render(type, views[0]!));
  };

  const onEvent = (ev: StoreEvent) => {
    const now = matches(ev.object);
    const before = ev.prev ? matches(ev.prev) : false;
    let type: EventType | undefined;
    if (ev.type === 'ADDED') type = now ? 'ADDED' : undefined;
    else if (ev.type === 'DELETED') type = before ? 'DELETED' : undefined;
    else if (now && before) type = 'MODIFIED';
    else if (now) type = 'ADDED';
    else if (before) type = 'DELETED';
    lastRevision = ev.revision;
    if (!type) return;
    // An object leaving the selector is reported as deleted with its previous state (the one the
    // watcher saw match) at the event's revision, as the cacher does.
    emit(type, type === 'DELETED' && ev.type === 'MODIFIED' ? atRevision(ev.prev!, ev.revision) : ev.object);
  };

  if (!initial) {
    try {
      unsubscribe = store.watch(prefix, from, onEvent);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'TooOld') {
        write(render('ERROR', undefined, ApiError.expired(err.message).status));
        end();
        return;
      }
      end();
      throw err;
    }
  } else {
    // The snapshot and the subscription are taken together, so that no change falls between
    // them; changes made while the snapshot is being sent wait in `later` and follow it.
    const snapshot = store.list(prefix, { filter: matches });
    from = snapshot.revision;
    lastRevision = from;
    later = [];
    let laterBytes = 0;
    unsubscribe = store.watch(prefix, from, (ev) => {
      if (!later) return onEvent(ev);
      later.push(ev);
      laterBytes += ev.object.json.length;
      // Held events count as unsent output: a client that never reads is cut off as always.
      if (laterBytes > opts.maxBufferedBytes) {
        res.destroy();
        end();
      }
    });
    const flush = (): void => {
      const held = later ?? [];
      later = undefined;
      for (const ev of held) onEvent(ev);
    };
    const send = (items: readonly StoredObject[]) =>
      sendSnapshot(items, objectJson, res, () => ended).then(
        () => {
          if (ended) return;
          if (p.sendInitialEvents) write(bookmark(from, true));
          flush();
        },
        () => end(),
      );
    // The initial objects go through a conversion webhook together, as a list's do.
    const items = webhook ? presentAll(t, snapshot.items) : snapshot.items;
    if (items instanceof Promise) items.then(send, fail);
    else send(items);
  }

  if (p.allowWatchBookmarks && opts.bookmarkIntervalMs > 0) {
    const tick = () => {
      if (!later) {
        // Taken now: events arriving later may pass this bookmark's place in the queue.
        const rv = Math.max(lastRevision, store.committedRevision);
        ordered(() => bookmark(rv));
      }
      timers[0] = setTimeout(tick, opts.bookmarkIntervalMs);
    };
    timers[0] = setTimeout(tick, opts.bookmarkIntervalMs);
  }
  // Without timeoutSeconds (or with 0), kube-apiserver ends a watch after a random 30–60 minutes.
  const timeout = p.timeoutSeconds ? p.timeoutSeconds * 1000 : (1800 + Math.random() * 1800) * 1000;
  // A timer takes at most 2^31-1 ms (~24.8 days; more fires at once): a longer timeout is waited
  // for in steps, as Go's timer waits for any duration.
  const deadline = Date.now() + timeout;
  const arm = () => {
    const left = deadline - Date.now();
    timers[1] = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(end, left);
  };
  arm();
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** `obj` with `metadata.resourceVersion` set to `revision`. */
function atRevision(obj: StoredObject, revision: number): StoredObject {
  const object = { ...obj.object, metadata: { ...obj.object.metadata, resourceVersion: String(revision) } };
  return { key: obj.key, object, revision, json: JSON.stringify(object) };
}

/** How much of a snapshot is rendered into one write (one chunk, a few TLS records). */
const SNAPSHOT_BATCH_CHARS = 256 * 1024;
/**
 * How much of a snapshot may wait in the connection's queue before rendering pauses for the
 * client: enough to keep the connection busy while the next batches are rendered (waiting for
 * every batch to drain made a 6 MB snapshot trickle at 32 KiB per read), little enough that a
 * slow client never makes the server hold a large snapshot whole.
 */
const SNAPSHOT_QUEUE_BYTES = 2 * 1024 * 1024;

/**
 * Writes the initial events of a watch in batches, each sent as soon as it is rendered, and
 * waits for the connection to drain when too much is queued: the client decodes while the
 * server renders, and a large snapshot is never held whole in the server's memory. (Rendering it in
 * one synchronous loop kept every byte in the socket's queue until the loop ended: a client
 * of 10,000 objects received its first byte after 20–40 ms instead of 2.)
 */
async function sendSnapshot(
  items: readonly StoredObject[],
  objectJson: (obj: StoredObject) => string,
  res: WatchSink,
  ended: () => boolean,
): Promise<void> {
  // Events are written into a buffer: building one large string of them and writing it cost
  // a copy more (the string is flattened, then encoded) and a large string's collection.
  let buf = Buffer.allocUnsafe(SNAPSHOT_BATCH_CHARS);
  let at = 0;
  for (const item of items) {
    const body = objectJson(item);
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const need = ADDED_PREFIX.length + body.length * 3 + 2;
    if (at + need > buf.length && at > 0) {
      if (await flush(res, buf.subarray(0, at), ended)) return;
      buf = Buffer.allocUnsafe(Math.max(SNAPSHOT_BATCH_CHARS, need));
      at = 0;
    } else if (need > buf.length) buf = Buffer.allocUnsafe(need);
    at += ADDED_PREFIX.copy(buf, at);
    at += buf.write(body, at);
    buf[at++] = 0x7d; // }
    buf[at++] = 0x0a; // \n
  }
  if (at > 0) res.write(buf.subarray(0, at));
}

const ADDED_PREFIX = Buffer.from('{"type":"ADDED","object":');

/** Sends a batch of a snapshot; waits when too much is queued. Returns whether the watch ended. */
async function flush(res: WatchSink, batch: Buffer, ended: () => boolean): Promise<boolean> {
  res.write(batch);
  // Node corks a chunked response until the next tick; the batch is complete, send it now.
  res.flushNow();
  if (res.buffered > SNAPSHOT_QUEUE_BYTES) await res.drained();
  return ended();
}
