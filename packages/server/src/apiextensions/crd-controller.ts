import { ApiError } from 'kubeloop';
import type { CustomResourceDefinition } from 'kubeloop/schema';
import type { RestStorage } from '../registry/rest.js';
import type { ResourceType } from '../registry/types.js';
import { collectionPrefix } from '../storage/store.js';
import type { StoreEvent } from '../storage/types.js';
import { clone, deepEqual, isObject, type Obj, timestamp } from '../util/object.js';
import { customResourceTypes } from './custom-resource-type.js';

/** The finalizer that makes a CRD wait until all its custom resources are deleted. */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

type Names = {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
};

interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

/**
 * The controllers of apiextensions-apiserver: naming (NamesAccepted, name conflicts),
 * establishing (the resource is served and listed in discovery), `storedVersions`, and the
 * finalizer that deletes every custom resource before its CRD goes away.
 */
export class CrdController {
  /** CRD name → the served types registered for it. */
  private readonly served = new Map<string, ResourceType[]>();
  private readonly pending = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly rest: RestStorage,
    private readonly log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void,
  ) {}

  private get crdType(): ResourceType {
    return this.rest.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
  }

  /** Serves every stored CRD at once (a restart must not lose custom resources), then follows changes. */
  start(): void {
    const prefix = collectionPrefix('apiextensions.k8s.io', 'customresourcedefinitions');
    const snapshot = this.rest.store.list(prefix);
    for (const item of snapshot.items) this.serve(item.object as unknown as CustomResourceDefinition);
    for (const item of snapshot.items) this.enqueue(nameOf(item.object as Obj));
    this.unsubscribe = this.rest.store.watch(prefix, snapshot.revision, (ev: StoreEvent) => {
      const crd = ev.object.object as unknown as CustomResourceDefinition;
      if (ev.type === 'DELETED') {
        this.unserve(nameOf(crd as unknown as Obj));
        return;
      }
      // Serving must follow the CRD synchronously: a client that created a CRD may use it next.
      this.serve(crd);
      this.enqueue(nameOf(crd as unknown as Obj));
    });
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
  }

  /** Admission: no new custom resources while their CRD is being deleted. */
  admitCreate(t: ResourceType): void {
    if (!t.custom) return;
    for (const [name, types] of this.served) {
      if (!types.includes(t)) continue;
      const crd = this.rest.store.get(this.rest.key(this.crdType, undefined, name));
      if ((crd?.object.metadata as Obj | undefined)?.deletionTimestamp) {
        throw new ApiError({
          code: 405,
          reason: 'MethodNotAllowed',
          message: 'create not allowed while custom resource definition is terminating',
        });
      }
    }
  }

  private enqueue(name: string): void {
    this.pending.add(name);
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.drain();
    }, delayMs);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    let retry = false;
    try {
      for (const name of [...this.pending]) {
        this.pending.delete(name);
        try {
          if (!(await this.reconcile(name))) {
            this.pending.add(name);
            retry = true;
          }
        } catch (err) {
          this.pending.add(name);
          retry = true;
          if (!(err instanceof ApiError && err.code === 409)) {
            this.log?.('error', 'CRD reconcile failed', { crd: name, err: String(err) });
          }
        }
      }
    } finally {
      this.running = false;
    }
    if (retry) this.schedule(50);
    else if (this.pending.size > 0) this.schedule(0);
  }

  /** The names this CRD may use: rejected when another established CRD of the group has them. */
  private conflicts(crd: CustomResourceDefinition): string | undefined {
    const names = crd.spec.names as Names;
    const mine = nameOf(crd as unknown as Obj);
    for (const [other, types] of this.served) {
      if (other === mine) continue;
      const t = types[0];
      if (!t || t.group !== crd.spec.group) continue;
      if (t.resource === names.plural) return `"${names.plural}" is already in use`;
      if (t.singular === names.singular) return `"${names.singular}" is already in use`;
      if (t.kind === names.kind) return `"${names.kind}" is already in use`;
      for (const s of names.shortNames ?? []) if (t.shortNames.includes(s)) return `"${s}" is already in use`;
    }
    return undefined;
  }

  /** Registers (or refreshes) the served versions of an accepted CRD. */
  private serve(crd: CustomResourceDefinition): void {
    const name = nameOf(crd as unknown as Obj);
    if (!crd.spec?.names?.plural) return;
    if (this.conflicts(crd)) {
      this.unserve(name);
      return;
    }
    const status = (crd as unknown as Obj).status as Obj | undefined;
    const accepted =
      isObject(status?.acceptedNames) && status.acceptedNames.plural ? status.acceptedNames : crd.spec.names;
    let types: ResourceType[];
    try {
      types = customResourceTypes(crd, accepted as Obj);
    } catch (err) {
      this.log?.('error', 'CRD cannot be served', { crd: name, err: String(err) });
      return;
    }
    const before = this.served.get(name) ?? [];
    const reg = this.rest.registry;
    for (const t of before) {
      if (!types.some((n) => n.version === t.version && n.resource === t.resource))
        reg.unregister(t.group, t.version, t.resource);
    }
    reg.register(...types);
    this.served.set(name, types);
  }

  private unserve(name: string): void {
    for (const t of this.served.get(name) ?? [])
      this.rest.registry.unregister(t.group, t.version, t.resource);
    this.served.delete(name);
  }

  /** Brings one CRD's status in line; returns false when it must be looked at again. */
  private async reconcile(name: string): Promise<boolean> {
    const stored = this.rest.store.get(this.rest.key(this.crdType, undefined, name));
    if (!stored) return true;
    const crd = clone(stored.object) as unknown as CustomResourceDefinition & { status?: Obj; metadata: Obj };
    if (crd.metadata.deletionTimestamp) return this.finalize(crd);

    const conflict = this.conflicts(crd);
    const status: Obj = clone(crd.status ?? {});
    const conditions = (Array.isArray(status.conditions) ? status.conditions : []) as Condition[];
    const now = timestamp();
    const setCondition = (c: Condition) => {
      const i = conditions.findIndex((x) => x.type === c.type);
      const prev = conditions[i];
      const next = {
        ...c,
        lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : now,
      };
      if (i >= 0) conditions[i] = next;
      else conditions.push(next);
    };
    if (conflict) {
      setCondition({
        type: 'NamesAccepted',
        status: 'False',
        reason: reasonFor(conflict, crd),
        message: conflict,
      });
      setCondition({
        type: 'Established',
        status: 'False',
        reason: 'NotAccepted',
        message: 'not all names are accepted',
      });
    } else {
      status.acceptedNames = clone(crd.spec.names);
      setCondition({
        type: 'NamesAccepted',
        status: 'True',
        reason: 'NoConflicts',
        message: 'no conflicts found',
      });
      setCondition({
        type: 'Established',
        status: 'True',
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
      });
      const storage = crd.spec.versions.find((v) => v.storage)?.name;
      const storedVersions = Array.isArray(status.storedVersions) ? (status.storedVersions as string[]) : [];
      if (storage && !storedVersions.includes(storage)) storedVersions.push(storage);
      status.storedVersions = storedVersions;
    }
    status.conditions = conditions;
    if (!isObject(status.acceptedNames)) status.acceptedNames = { plural: '', kind: '' };
    if (deepEqual(status, crd.status ?? {})) return true;
    const next = { ...(crd as unknown as Obj), status };
    await this.rest.update(this.crdType, undefined, name, next, 'status', { dryRun: false });
    this.serve(next as unknown as CustomResourceDefinition);
    return true;
  }

  /** Deletes the CRD's custom resources; once none is left, lets the CRD go. */
  private async finalize(crd: CustomResourceDefinition & { status?: Obj; metadata: Obj }): Promise<boolean> {
    const name = nameOf(crd as unknown as Obj);
    const finalizers = Array.isArray(crd.metadata.finalizers) ? (crd.metadata.finalizers as string[]) : [];
    if (!finalizers.includes(CRD_CLEANUP_FINALIZER)) return true;
    const types = this.served.get(name) ?? [];
    const t = types.find((x) => x.custom?.storageVersion === x.version) ?? types[0];
    let remaining = 0;
    if (t) {
      const { items } = this.rest.list(t, undefined, {});
      for (const item of items) {
        remaining++;
        const m = item.object.metadata as Obj;
        if (m.deletionTimestamp) continue;
        try {
          await this.rest.delete(t, m.namespace as string | undefined, String(m.name), {}, { dryRun: false });
        } catch (err) {
          if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
        }
      }
    }
    if (remaining > 0) return false;
    await this.rest.patch(this.crdType, undefined, name, undefined, { dryRun: false }, (current) => {
      const m = current.metadata as Obj;
      m.finalizers = (Array.isArray(m.finalizers) ? (m.finalizers as string[]) : []).filter(
        (f) => f !== CRD_CLEANUP_FINALIZER,
      );
      return current;
    });
    return true;
  }
}

function nameOf(obj: Obj): string {
  return String((obj.metadata as Obj | undefined)?.name ?? '');
}

function reasonFor(conflict: string, crd: CustomResourceDefinition): string {
  const names = crd.spec.names as Names;
  if (conflict.includes(`"${names.plural}"`)) return 'PluralConflict';
  if (conflict.includes(`"${names.singular}"`)) return 'SingularConflict';
  if (conflict.includes(`"${names.kind}"`)) return 'KindConflict';
  return 'ShortNamesConflict';
}
