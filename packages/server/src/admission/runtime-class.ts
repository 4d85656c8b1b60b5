/**
 * kube-apiserver's RuntimeClass admission plugin (`plugin/pkg/admission/runtimeclass`), on pod
 * creates: a pod naming a RuntimeClass that does not exist is refused; the class's
 * `overhead.podFixed` becomes the pod's `spec.overhead` (a pod setting another one is refused, and
 * so is a pod setting one without such a class); the class's `scheduling` node selector and
 * tolerations are merged into the pod's (a conflicting node selector value is refused).
 */
import { compareQuantity, parseQuantity } from 'kubeloop/api';
import type { ResourceType } from '../registry/types.js';
import { objectKey, type Store } from '../storage/store.js';
import { isObject, type Obj } from '../util/object.js';
import { admissionForbidden } from './forbidden.js';
import type { AdmissionOptions } from './options.js';
import { actsOn, isCore } from './plugin-kinds.js';

/** The operations admission sees (chain.ts's `AdmissionOperation`, not imported: it imports this). */
type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** A plugin of pod creates (chain.ts's `AdmissionPlugin`, not imported: chain.ts imports this). */
type PodPlugin = (
  op: AdmissionOperation,
  t: ResourceType,
  pod: Obj,
  old: Obj | undefined,
  options?: AdmissionOptions,
) => void;

const OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

/** A quantity map's entries equal as quantities (`apiequality.Semantic.DeepEqual` of ResourceLists). */
function sameResources(a: unknown, b: unknown): boolean {
  const x = isObject(a) ? a : {};
  const y = isObject(b) ? b : {};
  if (Object.keys(x).length !== Object.keys(y).length) return false;
  return Object.entries(x).every(([k, v]) => {
    const p = parseQuantity(v);
    const q = parseQuantity(y[k]);
    return p !== undefined && q !== undefined && compareQuantity(p, q) === 0;
  });
}

/** The mutating and validating halves of the plugin over `store`'s RuntimeClasses. */
export function runtimeClassAdmission(store: Store) {
  const handles = (op: AdmissionOperation, t: ResourceType) => op === 'CREATE' && isCore(t, 'pods');
  /** The pod's RuntimeClass, undefined when it names none; a 403 when it names a missing one. */
  const classOf = (t: ResourceType, pod: Obj): Obj | undefined => {
    const name = isObject(pod.spec) ? pod.spec.runtimeClassName : undefined;
    if (typeof name !== 'string' || name === '') return undefined;
    const stored = store.get(objectKey('node.k8s.io', 'runtimeclasses', undefined, name));
    if (!stored)
      throw admissionForbidden(t, pod, `pod rejected: RuntimeClass ${JSON.stringify(name)} not found`);
    return stored.object as Obj;
  };
  const ignored = (options: AdmissionOptions | undefined) => Boolean(options?.subresource);

  const mutate: PodPlugin = (_op, t, pod, _old, options) => {
    if (ignored(options) || !isObject(pod.spec)) return;
    const spec = pod.spec;
    const rc = classOf(t, pod);
    if (!rc) return;
    const podFixed = isObject(rc.overhead) ? rc.overhead.podFixed : undefined;
    if (isObject(podFixed)) {
      if (spec.overhead !== undefined && !sameResources(spec.overhead, podFixed)) {
        throw admissionForbidden(t, pod, OVERHEAD_MISMATCH);
      }
      spec.overhead = { ...podFixed };
    }
    const scheduling = isObject(rc.scheduling) ? rc.scheduling : undefined;
    if (!scheduling) return;
    const selector: Record<string, unknown> = isObject(spec.nodeSelector) ? { ...spec.nodeSelector } : {};
    for (const [key, value] of Object.entries(
      isObject(scheduling.nodeSelector) ? scheduling.nodeSelector : {},
    )) {
      if (key in selector && selector[key] !== value) {
        throw admissionForbidden(
          t,
          pod,
          `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${String(value)}; pod.spec.nodeSelector[${key}] = ${String(selector[key])}`,
        );
      }
      selector[key] = value;
    }
    if (Object.keys(selector).length > 0) spec.nodeSelector = selector;
    const extra = Array.isArray(scheduling.tolerations) ? (scheduling.tolerations as Obj[]) : [];
    if (extra.length > 0) {
      const tolerations = Array.isArray(spec.tolerations) ? [...(spec.tolerations as Obj[])] : [];
      const key = (x: Obj) =>
        JSON.stringify([
          x.key ?? '',
          x.operator ?? '',
          x.value ?? '',
          x.effect ?? '',
          x.tolerationSeconds ?? null,
        ]);
      const have = new Set(tolerations.map(key));
      for (const tol of extra) if (!have.has(key(tol))) tolerations.push({ ...tol });
      spec.tolerations = tolerations;
    }
  };

  const validate: PodPlugin = (_op, t, pod, _old, options) => {
    if (ignored(options) || !isObject(pod.spec)) return;
    const rc = classOf(t, pod);
    const podFixed = rc && isObject(rc.overhead) ? rc.overhead.podFixed : undefined;
    if (isObject(podFixed)) {
      if (!sameResources(pod.spec.overhead, podFixed)) {
        throw admissionForbidden(t, pod, OVERHEAD_MISMATCH);
      }
    } else if (pod.spec.overhead !== undefined && pod.spec.overhead !== null) {
      throw admissionForbidden(
        t,
        pod,
        'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
      );
    }
  };

  return { mutate: actsOn(handles, mutate), validate: actsOn(handles, validate) };
}
