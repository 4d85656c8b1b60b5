/**
 * The event recorder: `events.k8s.io/v1` Events about objects, with repeats aggregated into a
 * series (count and lastObservedTime) as client-go's `events` package does, so that a
 * controller failing in a loop updates one Event instead of creating thousands.
 */
import type { Logger } from 'pino';
import { isNotFound } from '../../api/status.js';
import { EventsV1Event } from '../../client/builtin-kinds.js';
import type { Client } from '../../client/client.js';
import type { KubeObject } from '../../client/types.js';
import type { ObjectEventRecorder } from '../controller/types.js';

/** `Normal` or `Warning`, the two types Kubernetes accepts. */
export type EventType = 'Normal' | 'Warning';

/** Options of an {@link EventRecorder}. */
export interface EventRecorderOptions {
  /** `reportingController`, e.g. `foo-operator` (a qualified name is best: `example.com/foo-operator`). */
  reportingController: string;
  /** `reportingInstance`: this process (default: the controller name plus host name). */
  reportingInstance: string;
  log: Logger;
}

interface Series {
  name: string;
  namespace: string;
  count: number;
  /** Serialises the writes of one series. */
  chain: Promise<void>;
}

/** MicroTime: RFC 3339 with microseconds. */
export const microTime = (d = new Date()): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

const MAX_NOTE = 1024;
/**
 * Event writes in flight at once. client-go writes events from one goroutine; a few at once keep
 * up with a busy controller while bounding the connections and server work that background
 * writes take from reconciles (unbounded, a burst of reconciles opened one connection per event).
 */
const MAX_WRITES = 4;
/** Writes waiting beyond this are dropped, as client-go's broadcaster drops past 1,000 queued events. */
const MAX_QUEUED = 1000;
/** Series remembered for aggregation (client-go's LRU of 4,096). */
const MAX_SERIES = 4096;

/**
 * Records Events; writes happen in the background (never block or fail a reconcile) and are
 * logged when they fail.
 *
 * @example
 * ```ts
 * manager.events.event(foo, 'Warning', 'InvalidSpec', 'spec.image is empty');
 * ```
 */
export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly pending = new Set<Promise<void>>();
  private writing = 0;
  private readonly waiting: (() => void)[] = [];
  private dropped = 0;

  constructor(
    private readonly client: Client,
    private readonly options: EventRecorderOptions,
  ) {}

  /** Records an event about `regarding`. */
  event(regarding: KubeObject, type: EventType, reason: string, note: string, action = reason): void {
    const meta = regarding.metadata ?? {};
    const namespace = meta.namespace || 'default';
    const truncated = note.length > MAX_NOTE ? `${note.slice(0, MAX_NOTE - 3)}...` : note;
    const key = JSON.stringify([
      meta.uid ?? `${namespace}/${meta.name}`,
      regarding.kind,
      type,
      reason,
      action,
      truncated,
    ]);
    let s = this.series.get(key);
    const now = new Date();
    if (s) {
      // Most recently used last: the oldest series is forgotten first.
      this.series.delete(key);
      this.series.set(key, s);
    } else {
      s = {
        name: `${meta.name ?? 'object'}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`,
        namespace,
        count: 0,
        chain: Promise.resolve(),
      };
      this.series.set(key, s);
      if (this.series.size > MAX_SERIES) {
        const oldest = this.series.keys().next().value;
        if (oldest !== undefined) this.series.delete(oldest);
      }
    }
    const series = s;
    series.count++;
    const count = series.count;
    const api = this.client.api(EventsV1Event, namespace);
    const create = () =>
      api.create({
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: series.name, namespace },
        eventTime: microTime(now),
        reportingController: this.options.reportingController,
        reportingInstance: this.options.reportingInstance,
        action,
        reason,
        type,
        note: truncated,
        regarding: {
          ...(regarding.apiVersion && { apiVersion: regarding.apiVersion }),
          ...(regarding.kind && { kind: regarding.kind }),
          ...(meta.name && { name: meta.name }),
          ...(meta.namespace && { namespace: meta.namespace }),
          ...(meta.uid && { uid: meta.uid }),
          ...(meta.resourceVersion && { resourceVersion: meta.resourceVersion }),
        },
      });
    const write = async () => {
      try {
        if (count === 1) {
          await create();
          return;
        }
        try {
          await api.patch(series.name, {
            series: { count, lastObservedTime: microTime(now) },
          } as Record<string, unknown>);
        } catch (err) {
          // The Event expired (events have a TTL): start a new one.
          if (!isNotFound(err)) throw err;
          await create();
        }
      } catch (err) {
        this.options.log.warn({ err, reason, regarding: meta.name }, 'could not record event');
      }
    };
    if (this.pending.size >= MAX_QUEUED) {
      // Overloaded: drop, as client-go does; a later write of the series carries its count.
      if (this.dropped++ % MAX_QUEUED === 0) {
        this.options.log.warn(
          { reason, regarding: meta.name, dropped: this.dropped },
          'event queue full, dropping events',
        );
      }
      return;
    }
    const p = series.chain.then(() => this.limited(write));
    series.chain = p;
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** Runs `write` once fewer than {@link MAX_WRITES} writes are in flight. */
  private async limited(write: () => Promise<void>): Promise<void> {
    if (this.writing >= MAX_WRITES) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.writing++;
    try {
      await write();
    } finally {
      // Hand the slot straight to the next waiter, else free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.writing--;
    }
  }

  /** A recorder of events about one object. */
  forObject(obj: KubeObject): ObjectEventRecorder {
    return {
      normal: (reason, note, action) => this.event(obj, 'Normal', reason, note, action),
      warning: (reason, note, action) => this.event(obj, 'Warning', reason, note, action),
    };
  }

  /** Waits until every event recorded so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }
}
