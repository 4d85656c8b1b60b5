/**
 * kube-apiserver's API Priority and Fairness configuration at start, and its upkeep:
 * - the `priority-and-fairness-config-producer` post-start hook (kubernetes
 *   `pkg/registry/flowcontrol/ensurer`): the bootstrap priority levels and flow schemas are
 *   created when missing; one whose spec may be kept up to date (always for the mandatory ones;
 *   for a suggested one, `apf.kubernetes.io/autoupdate-spec` true, or no boolean there and
 *   generation 1) gets its bootstrap spec back, and the annotation `true`. kube re-runs this
 *   every minute; here it runs on every change of these kinds, so a deleted or edited object is
 *   restored at once.
 * - the APF config consumer's status: each FlowSchema's `Dangling` condition says whether its
 *   priority level exists (the `MissingPL` column of `kubectl get flowschemas`).
 */
import { ApiError } from 'kubeloop/api';
import { collectionPrefix } from '../../storage/store.js';
import { isObject, type Obj, timestamp } from '../../util/object.js';
import type { Registry } from '../registry.js';
import type { RestStorage } from '../rest.js';
import type { ResourceType } from '../types.js';
import {
  AUTO_UPDATE_ANNOTATION,
  type BootstrapObject,
  MANDATORY_FLOW_SCHEMAS,
  MANDATORY_PRIORITY_LEVELS,
  SUGGESTED_FLOW_SCHEMAS,
  SUGGESTED_PRIORITY_LEVELS,
} from './bootstrap-objects.js';

const GROUP = 'flowcontrol.apiserver.k8s.io';
/** The field managers of kube-apiserver's APF config producer and consumer. */
const PRODUCER = 'api-priority-and-fairness-config-producer-v1';
const CONSUMER = 'api-priority-and-fairness-config-consumer-v1';

/** Go's strconv.ParseBool; undefined for anything else. */
function parseBool(value: unknown): boolean | undefined {
  if (typeof value !== 'string') return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

/** Structural equality of JSON values, key order aside. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]))
  );
}

/** Creates and keeps the bootstrap APF configuration, and the flow schemas' `Dangling` status. */
export class FlowControlBootstrap {
  private readonly unsubscribe: (() => void)[] = [];
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly rest: RestStorage,
    private readonly registry: Registry,
    private readonly log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void,
  ) {}

  /** Ensures the configuration now, then again after every change of these kinds. */
  async start(): Promise<void> {
    await this.ensure();
    const store = this.rest.store;
    for (const resource of ['flowschemas', 'prioritylevelconfigurations']) {
      this.unsubscribe.push(
        store.watch(collectionPrefix(GROUP, resource), store.revision, () => this.kick()),
      );
    }
  }

  stop(): void {
    this.stopped = true;
    for (const u of this.unsubscribe.splice(0)) u();
  }

  /** Runs {@link ensure} off the watch's call stack, once more if changes came meanwhile. */
  private kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      await Promise.resolve();
      do {
        this.again = false;
        if (this.stopped) break;
        await this.ensure().catch((err: unknown) =>
          this.log?.('warn', 'ensuring the APF bootstrap configuration failed', { error: String(err) }),
        );
      } while (this.again);
      this.running = undefined;
    })();
  }

  /** The bootstrap objects created or restored, then every flow schema's `Dangling` condition. */
  async ensure(): Promise<void> {
    const pl = this.registry.lookup(GROUP, 'v1', 'prioritylevelconfigurations');
    const fs = this.registry.lookup(GROUP, 'v1', 'flowschemas');
    if (!pl || !fs) return;
    for (const o of SUGGESTED_PRIORITY_LEVELS) await this.ensureOne(pl, o, false);
    for (const o of SUGGESTED_FLOW_SCHEMAS) await this.ensureOne(fs, o, false);
    for (const o of MANDATORY_PRIORITY_LEVELS) await this.ensureOne(pl, o, true);
    for (const o of MANDATORY_FLOW_SCHEMAS) await this.ensureOne(fs, o, true);
    for (const item of this.rest.store.list(collectionPrefix(GROUP, 'flowschemas')).items)
      await this.syncDangling(fs, pl, item.object as Obj);
  }

  private async ensureOne(t: ResourceType, o: BootstrapObject, mandatory: boolean): Promise<void> {
    const wantedSpec = structuredClone(o.spec);
    const defaulted = { spec: structuredClone(o.spec) };
    t.behaviour.defaults?.(defaulted);
    const current = this.rest.store.get(this.rest.key(t, undefined, o.name));
    const ctx = { dryRun: false, fieldManager: PRODUCER };
    try {
      if (!current) {
        await this.rest.create(
          t,
          undefined,
          {
            apiVersion: `${GROUP}/v1`,
            kind: t.kind,
            metadata: { name: o.name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } },
            spec: wantedSpec,
          },
          ctx,
        );
        return;
      }
      const obj = current.object as Obj;
      const m = obj.metadata as Obj;
      const annotations = isObject(m.annotations) ? m.annotations : {};
      const auto = mandatory || (parseBool(annotations[AUTO_UPDATE_ANNOTATION]) ?? m.generation === 1);
      if (!auto) return;
      if (sameJson(obj.spec, defaulted.spec) && annotations[AUTO_UPDATE_ANNOTATION] === 'true') return;
      await this.rest.update(
        t,
        undefined,
        o.name,
        {
          ...obj,
          metadata: { ...m, annotations: { ...annotations, [AUTO_UPDATE_ANNOTATION]: 'true' } },
          spec: wantedSpec,
        },
        undefined,
        ctx,
      );
    } catch (err) {
      // Someone else wrote it meanwhile: the change's event runs this again.
      if (!(err instanceof ApiError && (err.code === 409 || err.code === 404))) throw err;
    }
  }

  private async syncDangling(fs: ResourceType, pl: ResourceType, obj: Obj): Promise<void> {
    const plName = String(
      (obj.spec as { priorityLevelConfiguration?: { name?: string } })?.priorityLevelConfiguration?.name ??
        '',
    );
    const found = this.rest.store.get(this.rest.key(pl, undefined, plName)) !== undefined;
    const status = isObject(obj.status) ? obj.status : {};
    const conditions = Array.isArray(status.conditions) ? (status.conditions as Obj[]) : [];
    const wanted = {
      type: 'Dangling',
      status: found ? 'False' : 'True',
      reason: found ? 'Found' : 'NotFound',
      message: found
        ? `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(plName)} and it exists`
        : `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(plName)} but there is no such object`,
    };
    const have = conditions.find((c) => c.type === 'Dangling');
    if (
      have &&
      have.status === wanted.status &&
      have.reason === wanted.reason &&
      have.message === wanted.message
    )
      return;
    const condition = {
      type: 'Dangling',
      status: wanted.status,
      lastTransitionTime: timestamp(),
      reason: wanted.reason,
      message: wanted.message,
    };
    const m = obj.metadata as Obj;
    try {
      await this.rest.update(
        fs,
        undefined,
        String(m.name),
        {
          ...obj,
          status: { ...status, conditions: [...conditions.filter((c) => c.type !== 'Dangling'), condition] },
        },
        'status',
        { dryRun: false, fieldManager: CONSUMER },
      );
    } catch (err) {
      if (!(err instanceof ApiError && (err.code === 409 || err.code === 404))) throw err;
    }
  }
}
