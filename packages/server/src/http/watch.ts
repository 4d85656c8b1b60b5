import type { ServerResponse } from 'node:http';
import { ApiError } from 'kubeloop/api';
import { presentAs } from '../apiextensions/conversion.js';
import type { ListParams, RestStorage } from '../registry/rest.js';
import { parseResourceVersion } from '../registry/rest.js';
import { apiVersionOf, type ResourceType, storageOf } from '../registry/types.js';
import { collectionPrefix, StorageError } from '../storage/store.js';
import type { StoredObject, StoreEvent } from '../storage/types.js';
import type { Representation } from './negotiation.js';
import { type IncludeObject, partialObjectMetadata, table } from './table.js';

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
  res: ServerResponse,
  opts: WatchOptions,
): void {
  rest.checkFieldSelector(t, p.fieldSelector);
  const store = rest.store;
  const { group, resource } = storageOf(t);
  const prefix = collectionPrefix(group, resource, t.namespaced ? namespace : undefined);
  const matches = rest.matcher(t, p) ?? (() => true);

  if (p.sendInitialEvents !== undefined) {
    if (p.sendInitialEvents && !p.allowWatchBookmarks) {
      throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', [
        {
          reason: 'FieldValueForbidden',
          field: 'allowWatchBookmarks',
          message: 'Forbidden: allowWatchBookmarks required when sendInitialEvents is specified',
        },
      ]);
    }
    if (p.resourceVersionMatch !== 'NotOlderThan') {
      throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', [
        {
          reason: 'FieldValueForbidden',
          field: 'resourceVersionMatch',
          message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        },
      ]);
    }
  } else if (p.resourceVersionMatch) {
    throw ApiError.badRequest(
      'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    );
  }

  const rvParam = p.resourceVersion ?? '';
  const initial = p.sendInitialEvents ?? (rvParam === '' || rvParam === '0');
  let from: number;
  if (initial || rvParam === '' || rvParam === '0') from = store.revision;
  else from = parseResourceVersion(rvParam);

  const apiVersion = apiVersionOf(t);
  let first = true;
  const render = (
    type: EventType | 'BOOKMARK' | 'ERROR',
    obj: StoredObject | undefined,
    raw?: unknown,
  ): string => {
    if (type === 'BOOKMARK' || type === 'ERROR')
      return `{"type":"${type}","object":${JSON.stringify(raw)}}\n`;
    const o = presentAs(t, obj!);
    switch (opts.representation.as) {
      case 'Table': {
        const body = JSON.stringify(
          table(t, [o], opts.includeObject, { resourceVersion: String(o.revision) }, first),
        );
        first = false;
        return `{"type":"${type}","object":${body}}\n`;
      }
      case 'PartialObjectMetadata':
      case 'PartialObjectMetadataList':
        return `{"type":"${type}","object":${JSON.stringify(partialObjectMetadata(o))}}\n`;
      default:
        return `{"type":"${type}","object":${o.json}}\n`;
    }
  };
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

  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();

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
    if (!res.writableEnded) res.end();
    opts.onEnd?.();
  };
  const write = (chunk: string) => {
    if (ended) return;
    res.write(chunk);
    if (res.writableLength > opts.maxBufferedBytes) {
      // The client does not keep up; closing lets it resume from its last resourceVersion.
      res.destroy();
      end();
    }
  };
  const untrack = opts.track(end);
  res.on('close', end);

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
    // An object leaving the selector is reported as deleted, with its new state and revision.
    write(render(type, ev.object));
  };

  try {
    if (initial) {
      const snapshot = store.list(prefix, { filter: matches });
      // Batched: one write (one TLS record, one syscall) per event made large snapshots slow.
      let batch = '';
      for (const item of snapshot.items) {
        batch += render('ADDED', item);
        if (batch.length > 256 * 1024) {
          write(batch);
          batch = '';
          // Node corks a chunked response until the next tick: without this the client would
          // wait for the whole snapshot to be rendered before it could decode the first event.
          res.socket?.uncork();
        }
      }
      from = snapshot.revision;
      lastRevision = from;
      if (p.sendInitialEvents) batch += bookmark(from, true);
      if (batch !== '') write(batch);
    }
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

  if (p.allowWatchBookmarks && opts.bookmarkIntervalMs > 0) {
    const tick = () => {
      write(bookmark(Math.max(lastRevision, store.committedRevision)));
      timers[0] = setTimeout(tick, opts.bookmarkIntervalMs);
    };
    timers[0] = setTimeout(tick, opts.bookmarkIntervalMs);
  }
  // Without timeoutSeconds (or with 0), kube-apiserver ends a watch after a random 30–60 minutes.
  const timeout = p.timeoutSeconds ? p.timeoutSeconds * 1000 : (1800 + Math.random() * 1800) * 1000;
  timers[1] = setTimeout(end, timeout);
}
