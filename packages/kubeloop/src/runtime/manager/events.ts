/**
 * The event recorder: `events.k8s.io/v1` Events about objects, with repeats aggregated into a
 * series (count and lastObservedTime) as client-go's `events` package does, so that a
 * controller failing in a loop updates one Event instead of creating thousands: the first
 * occurrence creates the Event, the second patches in a series of 2, later ones only count
 * locally; a series' count is written when it has been quiet for 6 minutes, every 30 minutes
 * while it goes on (which also renews the Event's TTL), and when the recorder stops.
 */
import type { Logger } from 'pino';
import { isNotFound } from '../../api/status.js';
import { EventsV1Event } from '../../client/builtin-kinds.js';
import type { Client } from '../../client/client.js';
import type { KubeObject } from '../../client/types.js';
import { settlesWithin } from '../../util/settles-within.js';
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

/** What an Event is about, as it is written (`regarding`): all the recorder keeps of the object. */
interface Regarding {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

/**
 * One Event and its repeats. It holds plain values only — no closure, not the object the event
 * is about — because a busy controller keeps thousands for 6 minutes: holding each object
 * kept every reconciled object's old version alive (about 2 MB for 1,000 Foos).
 */
interface Series {
  name: string;
  namespace: string;
  type: EventType;
  reason: string;
  action: string;
  note: string;
  /** As of the latest occurrence, which an Event created again (after it expired) reports. */
  regarding: Regarding;
  count: number;
  /** The count the server has (or has been sent). */
  written: number;
  lastObserved: Date;
  /** Serialises the writes of one series. */
  chain: Promise<void>;
}

/**
 * MicroTime: RFC 3339 with microseconds. `toISOString` always ends in `.sssZ`, so three zeros go
 * before the `Z` (a slice, where a regular expression cost ~1 % of a busy recorder's CPU).
 */
export const microTime = (d = new Date()): string => `${d.toISOString().slice(0, -1)}000Z`;

/**
 * `ms × 10⁶ + ns` in hexadecimal (client-go names an Event `<object>.<UnixNano in hex>`), for
 * `ms` below 2⁵³ and `ns` below 10⁶, without BigInt: the value is split at 2²⁰ (five hex
 * digits), each part exact in a double.
 *
 * @internal
 */
export function nanoHex(ms: number, ns: number): string {
  const low = (ms % 2 ** 20) * 1e6 + ns;
  const high = Math.floor(ms / 2 ** 20) * 1e6 + Math.floor(low / 2 ** 20);
  const tail = (low % 2 ** 20).toString(16);
  return high === 0 ? tail : `${high.toString(16)}${tail.padStart(5, '0')}`;
}

const MAX_NOTE = 1024;
/**
 * Event writes in flight at once: one, as client-go writes events from one goroutine, while the
 * recorder keeps up. Events are the controller's background work; every write in flight is a
 * request the API server serves before (or between) the reconciles' own writes, and a connection
 * of its own over HTTP/1.1: with 4 at once the sample operator's 1,000 Foos took ~10 % longer.
 * When a backlog builds (more than {@link BACKLOG} waiting: a burst of reconciles each recording
 * an event, ~1,000 a second), up to {@link MAX_BURST_WRITES} go at once so that the burst is
 * written rather than dropped at {@link MAX_QUEUED}.
 */
const MAX_WRITES = 1;
const MAX_BURST_WRITES = 4;
const BACKLOG = 100;
/** Writes waiting beyond this are dropped, as client-go's broadcaster drops past 1,000 queued events. */
const MAX_QUEUED = 1000;
/** Series remembered for aggregation (client-go's LRU of 4,096). */
const MAX_SERIES = 4096;
/** A series quiet this long is finished: its count is written and it is forgotten (client-go's finishTime). */
const FINISH_MS = 6 * 60_000;
/** A running series' count is written this often (client-go's refreshTime). */
const REFRESH_MS = 30 * 60_000;

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
  /** Set by stop(): writes not yet started are dropped instead of sent. */
  private closed = false;
  private housekeeping: NodeJS.Timeout | undefined;
  private lastRefresh = Date.now();

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
    // Assigned field by field (in the order they are written): spreads of `cond && {…}` made
    // an object per field, a measurable share of a busy recorder's CPU.
    const ref: Regarding = {};
    if (regarding.apiVersion) ref.apiVersion = regarding.apiVersion;
    if (regarding.kind) ref.kind = regarding.kind;
    if (meta.name) ref.name = meta.name;
    if (meta.namespace) ref.namespace = meta.namespace;
    if (meta.uid) ref.uid = meta.uid;
    if (meta.resourceVersion) ref.resourceVersion = meta.resourceVersion;
    if (s) {
      // Most recently used last: the oldest series is forgotten first.
      this.series.delete(key);
      this.series.set(key, s);
    } else {
      s = {
        name: `${meta.name ?? 'object'}.${nanoHex(now.getTime(), Math.floor(Math.random() * 1e6))}`,
        namespace,
        type,
        reason,
        action,
        note: truncated,
        regarding: ref,
        count: 0,
        written: 0,
        lastObserved: now,
        chain: Promise.resolve(),
      };
      this.series.set(key, s);
      if (this.series.size > MAX_SERIES) {
        const [oldest, o] = this.series.entries().next().value ?? [];
        if (oldest !== undefined) {
          if (o && o.count > o.written) this.writeCount(o);
          this.series.delete(oldest);
        }
      }
    }
    s.count++;
    s.lastObserved = now;
    s.regarding = ref;
    // Later repeats only count here; housekeeping and stop() write them.
    if (s.count <= 2) this.writeCount(s);
    this.startHousekeeping();
  }

  /** Writes the series' current count (creating the Event again if it expired). */
  private writeCount(series: Series): void {
    const count = series.count;
    const observed = series.lastObserved;
    const regarding = series.regarding;
    series.written = count;
    this.enqueue(series, () => this.write(series, count, observed, regarding), series.reason, regarding.name);
  }

  /** Creates the series' Event (count 1, or when it expired), else patches its count in. */
  private async write(series: Series, count: number, observed: Date, regarding: Regarding): Promise<void> {
    const api = this.client.api(EventsV1Event, series.namespace);
    const create = () =>
      api.create({
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: series.name, namespace: series.namespace },
        eventTime: microTime(observed),
        reportingController: this.options.reportingController,
        reportingInstance: this.options.reportingInstance,
        action: series.action,
        reason: series.reason,
        type: series.type,
        note: series.note,
        regarding,
      });
    try {
      if (count === 1) {
        await create();
        return;
      }
      try {
        await api.patch(series.name, {
          series: { count, lastObservedTime: microTime(observed) },
        } as Record<string, unknown>);
      } catch (err) {
        // The Event expired (events have a TTL): start a new one.
        if (!isNotFound(err)) throw err;
        await create();
      }
    } catch (err) {
      this.options.log.warn(
        { err, reason: series.reason, regarding: regarding.name },
        'could not record event',
      );
    }
  }

  /** Queues a write of `series` behind its earlier ones, or drops it when overloaded. */
  private enqueue(series: Series, write: () => Promise<void>, reason: string, regarding: unknown): void {
    if (this.pending.size >= MAX_QUEUED) {
      // Overloaded: drop, as client-go does; a later write of the series carries its count.
      if (this.dropped++ % MAX_QUEUED === 0) {
        this.options.log.warn(
          { reason, regarding, dropped: this.dropped },
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
    const limit = this.waiting.length >= BACKLOG ? MAX_BURST_WRITES : MAX_WRITES;
    if (this.writing >= limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.writing++;
    try {
      if (!this.closed) await write();
    } finally {
      // Hand the slot straight to the next waiter, else free it; a burst's extra slots are
      // freed once the backlog is gone.
      const next =
        this.writing <= MAX_WRITES || this.waiting.length >= BACKLOG ? this.waiting.shift() : undefined;
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

  /** Writes finished and long-running series (client-go's finishSeries and refreshExistingEventSeries). */
  private tidy(now = Date.now()): void {
    const refresh = now - this.lastRefresh >= REFRESH_MS;
    if (refresh) this.lastRefresh = now;
    for (const [key, s] of this.series) {
      if (s.lastObserved.getTime() < now - FINISH_MS) {
        if (s.count > s.written) this.writeCount(s);
        this.series.delete(key);
      } else if (refresh && s.count >= 2) this.writeCount(s);
    }
    if (this.series.size === 0) this.stopHousekeeping();
  }

  private startHousekeeping(): void {
    if (this.housekeeping) return;
    this.housekeeping = setInterval(() => this.tidy(), 60_000);
    this.housekeeping.unref();
  }

  private stopHousekeeping(): void {
    clearInterval(this.housekeeping);
    this.housekeeping = undefined;
  }

  /** Writes the counts of series not yet written, and waits until every event recorded so far is written (or failed). */
  async flush(): Promise<void> {
    for (const s of this.series.values()) if (s.count > s.written) this.writeCount(s);
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  /**
   * Stops the recorder: with `flush`, first writes what is not written yet, for at most
   * `timeoutMs` (what is left of the manager's grace period). Writes not started by then are
   * dropped, as client-go's broadcaster drops its queue at shutdown: an API server that stopped
   * answering must not hold an operator's exit for as long as a thousand failing writes take.
   */
  async stop(flush: boolean, timeoutMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.stopHousekeeping();
    if (flush && !(await settlesWithin(this.flush(), timeoutMs))) {
      this.options.log.warn(
        { unwritten: this.pending.size },
        'the shutdown grace period ended before every event was written',
      );
    }
    this.closed = true;
    // Each waiter resumes holding a slot, which its `finally` gives back.
    const waiters = this.waiting.splice(0);
    this.writing += waiters.length;
    for (const resume of waiters) resume();
  }
}
