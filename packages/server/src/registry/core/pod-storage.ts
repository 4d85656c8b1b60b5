/**
 * What a Pod's storage does beyond the generic registry's (`pkg/registry/core/pod`): its status
 * on create (Pending, with the QoS class), graceful deletion by its kubelet, and the `binding`
 * subresource through which schedulers assign it a node.
 */
import { ApiError, type StatusCause } from 'kubeloop/api';
import { isObject, meta, type Obj, timestamp } from '../../util/object.js';
import type { StorageHooks } from '../shared/behaviour.js';

/** The pod's QoS class (`qos.GetPodQOS`): Guaranteed, Burstable or BestEffort. */
export function podQOSClass(pod: Obj): string {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const containers = [
    ...(Array.isArray(spec.containers) ? spec.containers : []),
    ...(Array.isArray(spec.initContainers) ? spec.initContainers : []),
  ].filter(isObject);
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const res = isObject(c.resources) ? c.resources : {};
    const requests = isObject(res.requests) ? res.requests : {};
    const limits = isObject(res.limits) ? res.limits : {};
    if (Object.keys(requests).length > 0 || Object.keys(limits).length > 0) any = true;
    for (const r of ['cpu', 'memory']) {
      if (limits[r] === undefined || (requests[r] !== undefined && requests[r] !== limits[r]))
        guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/**
 * `POST pods/<name>/binding` (Kubernetes' `BindingREST`): assigns a pod that has no node yet
 * to `binding.target.name`, merges the binding's annotations and marks it `PodScheduled`.
 * This is how schedulers bind; `spec.nodeName` is otherwise immutable.
 */
const binding = {
  check(body: Obj, name: string): void {
    const bm = isObject(body.metadata) ? body.metadata : {};
    if (bm.name !== name) throw ApiError.badRequest('name in URL does not match name in Binding object');
    const target = isObject(body.target) ? body.target : {};
    const causes: StatusCause[] = [];
    if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node')
      causes.push({
        reason: 'FieldValueNotSupported',
        field: 'target.kind',
        message: `Unsupported value: ${JSON.stringify(target.kind)}: supported values: "", "Node"`,
      });
    if (typeof target.name !== 'string' || target.name === '')
      causes.push({ reason: 'FieldValueRequired', field: 'target.name', message: 'Required value' });
    if (causes.length > 0) throw ApiError.invalid({ group: '', kind: 'Binding' }, name, causes);
  },
  apply(pod: Obj, body: Obj, name: string): Obj {
    const bm = isObject(body.metadata) ? body.metadata : {};
    const node = (body.target as Obj).name as string;
    const conflict = (why: string) => ApiError.conflict({ group: '', resource: 'pods/binding' }, name, why);
    const pm = pod.metadata as Obj;
    const spec = isObject(pod.spec) ? pod.spec : {};
    if (pm.deletionTimestamp) throw conflict(`pod ${name} is being deleted, cannot be assigned to a host`);
    if (spec.nodeName)
      throw conflict(`pod ${name} is already assigned to node ${JSON.stringify(spec.nodeName)}`);
    const next = pod;
    (next.spec as Obj).nodeName = node;
    const annotations = isObject(bm.annotations) ? bm.annotations : {};
    if (Object.keys(annotations).length > 0) {
      const nm = meta(next);
      nm.annotations = { ...(isObject(nm.annotations) ? nm.annotations : {}), ...annotations };
    }
    if (!isObject(next.status)) next.status = {};
    const status = next.status as Obj;
    const conditions = (Array.isArray(status.conditions) ? status.conditions : []) as Obj[];
    const scheduled = conditions.find((c) => c.type === 'PodScheduled');
    if (!scheduled)
      conditions.push({
        type: 'PodScheduled',
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: timestamp(),
      });
    else if (scheduled.status !== 'True')
      Object.assign(scheduled, {
        status: 'True',
        lastTransitionTime: timestamp(),
        reason: undefined,
        message: undefined,
      });
    if (scheduled) for (const k of ['reason', 'message']) if (scheduled[k] === undefined) delete scheduled[k];
    status.conditions = conditions;
    return next;
  },
};

/** The Pod's storage hooks. */
export const podStorage: StorageHooks = {
  statusOnCreate(obj) {
    obj.status = { phase: 'Pending', qosClass: podQOSClass(obj) };
  },
  /**
   * The grace period of a pod's deletion (the pod strategy's `CheckGracefulDelete`): the
   * request's, else the pod's `terminationGracePeriodSeconds` (30); 0 for a pod not scheduled,
   * already terminated, or on a node no kubelet runs (the pod garbage collector would remove it
   * from a missing node at once).
   */
  gracePeriod(pod, requested, env) {
    const spec = isObject(pod.spec) ? pod.spec : {};
    const phase = isObject(pod.status) ? pod.status.phase : undefined;
    if (typeof spec.nodeName !== 'string' || !spec.nodeName) return 0;
    if (phase === 'Succeeded' || phase === 'Failed') return 0;
    if (!env.hasKubelet(spec.nodeName)) return 0;
    if (typeof requested === 'number') return Math.max(0, requested);
    return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
  },
  postSubresources: { binding },
};
