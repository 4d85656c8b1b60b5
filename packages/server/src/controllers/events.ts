/**
 * The event recorder of the built-in controllers: core/v1 Events as client-go's `record`
 * package writes them for kube-controller-manager and the scheduler, so that `kubectl describe`
 * (which reads core/v1 events by `involvedObject`) shows them.
 *
 * The SDK's `EventRecorder` (kubeloop/runtime) writes `events.k8s.io/v1` Events; the local API
 * server stores the two groups apart, so those would not appear under `kubectl describe`.
 */
import type { Client, KubeObject } from 'kubeloop/client';
import { Event, isForbidden, isNotFound } from 'kubeloop/client';
import { type Runnable, untilAborted } from 'kubeloop/runtime';
import type { ControllerLog } from './log.js';

/** The kind of the object an event is about. */
export interface EventKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** `Normal` or `Warning`. */
export type EventType = 'Normal' | 'Warning';

interface Series {
  name: string;
  namespace: string;
  count: number;
  first: string;
  lastSeen: number;
  /** Serialises the writes of one series. */
  chain: Promise<void>;
}

/** Repeats within this window are aggregated into one Event (client-go: 10 minutes). */
const AGGREGATION_WINDOW_MS = 10 * 60_000;
const MAX_MESSAGE = 1024;

const timestamp = (d: Date): string => `${d.toISOString().slice(0, 19)}Z`;

/**
 * Records Events about objects, as `source.component` = `reportingComponent` = `component`
 * (e.g. `deployment-controller`). Writes happen in the background, serialised per series, and
 * never fail the caller; an identical event seen again bumps `count` and `lastTimestamp`.
 *
 * @example
 * ```ts
 * const events = new ControllerEvents(client, 'deployment-controller');
 * events.event(Deployment, d, 'Normal', 'ScalingReplicaSet', 'Scaled up replica set web-abc from 0 to 3');
 * await events.close();
 * ```
 */
export class ControllerEvents {
  private readonly series = new Map<string, Series>();
  private readonly pending = new Set<Promise<void>>();
  private sequence = 0;
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly component: string,
    private readonly log: ControllerLog = () => undefined,
  ) {}

  /** Records an event about `obj` (of kind `kind`). */
  event(kind: EventKind, obj: KubeObject, type: EventType, reason: string, message: string): void {
    if (this.closed) return;
    const meta = obj.metadata ?? {};
    const namespace = meta.namespace || 'default';
    const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message;
    const key = JSON.stringify([meta.uid ?? `${namespace}/${meta.name}`, kind.kind, type, reason, text]);
    const now = new Date();
    let s = this.series.get(key);
    if (!s || now.getTime() - s.lastSeen > AGGREGATION_WINDOW_MS) {
      // client-go names events `<object>.<unix nanoseconds in hex>`.
      const nanos = BigInt(now.getTime()) * 1_000_000n + BigInt(this.sequence++ % 1_000_000);
      s = {
        name: `${meta.name ?? 'object'}.${nanos.toString(16)}`,
        namespace,
        count: 0,
        first: timestamp(now),
        lastSeen: 0,
        chain: s?.chain ?? Promise.resolve(),
      };
      this.series.set(key, s);
    }
    const series = s;
    series.count++;
    series.lastSeen = now.getTime();
    const count = series.count;
    const last = timestamp(now);
    const api = this.client.api(Event, namespace);
    const create = () =>
      api.create({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: series.name, namespace },
        involvedObject: {
          kind: kind.kind,
          namespace: meta.namespace ?? '',
          name: meta.name ?? '',
          uid: meta.uid ?? '',
          apiVersion: kind.group ? `${kind.group}/${kind.version}` : kind.version,
          resourceVersion: meta.resourceVersion ?? '',
        },
        reason,
        message: text,
        source: { component: this.component },
        firstTimestamp: series.first,
        lastTimestamp: last,
        count,
        type,
        reportingComponent: this.component,
        reportingInstance: '',
      } as Event);
    const write = async () => {
      if (this.closed) return;
      try {
        if (count === 1) {
          await create();
          return;
        }
        try {
          await api.patch(series.name, { count, lastTimestamp: last } as Partial<Event>);
        } catch (err) {
          if (!isNotFound(err)) throw err;
          await create();
        }
      } catch (err) {
        // A terminating or deleted namespace takes no events; that is no reason to complain.
        if (!this.closed && !isForbidden(err) && !isNotFound(err))
          this.log('warn', 'could not record event', { reason, object: meta.name, error: String(err) });
      }
    };
    const p = series.chain.then(write);
    series.chain = p;
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    if (this.series.size > 4096) this.forgetOld(now.getTime());
  }

  /** Waits until every event recorded so far is written (or failed). */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  /** Records nothing more and waits for the writes under way. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private forgetOld(now: number): void {
    for (const [k, s] of this.series) if (now - s.lastSeen > AGGREGATION_WINDOW_MS) this.series.delete(k);
  }
}

/** The message of an error as Kubernetes prints it in events (an API error's own message). */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The core/v1 Event recorders of a group of controllers, each reporting under its kube component
 * name (`replicaset-controller`, `job-controller`, …), and the runnable that, when the manager
 * stops (after its controllers), waits for the Events still being written.
 *
 * @example
 * ```ts
 * const recorders = new ComponentRecorders(client, log);
 * const defs = [jobController({ events: recorders.for('job-controller') })];
 * manager.add(recorders.closer('workload-events'));
 * ```
 */
export class ComponentRecorders {
  private readonly recorders: ControllerEvents[] = [];

  constructor(
    private readonly client: Client,
    private readonly log?: ControllerLog,
  ) {}

  /** A recorder reporting as `component`. */
  for(component: string): ControllerEvents {
    const e = new ControllerEvents(this.client, component, this.log);
    this.recorders.push(e);
    return e;
  }

  /** The runnable that closes every recorder when the manager stops; `prepare` runs before the caches start. */
  closer(name: string, prepare?: Runnable['prepare']): Runnable {
    const recorders = this.recorders;
    return {
      name,
      needLeaderElection: false,
      ...(prepare && { prepare }),
      async start({ signal }) {
        await untilAborted(signal);
        await Promise.all(recorders.map((r) => r.close()));
      },
    };
  }
}
