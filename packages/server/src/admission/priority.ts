/**
 * kube-apiserver's Priority admission plugin (`plugin/pkg/admission/priority`): a new pod's
 * priority comes from its PriorityClass (or the cluster's global default), a class that does not
 * exist refuses the pod, and at most one PriorityClass may be the global default.
 */
import type { ResourceType } from '../registry/types.js';
import { collectionPrefix, objectKey, type Store } from '../storage/store.js';
import { isObject, type Obj } from '../util/object.js';
import { admissionForbidden } from './forbidden.js';
import { actsOn, isCore } from './plugin-kinds.js';

/** A pod's priority when no PriorityClass is the global default (`DefaultPriorityWhenNoDefaultClassExists`). */
const DEFAULT_PRIORITY = 0;

interface PriorityClass {
  name: string;
  value: number;
  globalDefault: boolean;
  preemptionPolicy: string | undefined;
}

function readClass(obj: Obj): PriorityClass {
  const m = isObject(obj.metadata) ? obj.metadata : {};
  return {
    name: String(m.name ?? ''),
    value: typeof obj.value === 'number' ? obj.value : 0,
    globalDefault: obj.globalDefault === true,
    preemptionPolicy: typeof obj.preemptionPolicy === 'string' ? obj.preemptionPolicy : undefined,
  };
}

/** The Priority admission plugin over `store`'s PriorityClasses. */
export function priorityAdmission(store: Store) {
  const classes = collectionPrefix('scheduling.k8s.io', 'priorityclasses');
  /** The global default class; when several are (a race), the one of lowest value. */
  const defaultClass = (): PriorityClass | undefined => {
    let found: PriorityClass | undefined;
    for (const { object } of store.list(classes).items) {
      const pc = readClass(object as Obj);
      if (pc.globalDefault && (!found || pc.value < found.value)) found = pc;
    }
    return found;
  };

  const handles = (_op: string, t: ResourceType) =>
    isCore(t, 'pods') || (t.group === 'scheduling.k8s.io' && t.resource === 'priorityclasses');
  return actsOn(
    handles,
    (op: 'CREATE' | 'UPDATE' | 'DELETE', t: ResourceType, obj: Obj, old: Obj | undefined): void => {
      if (t.group === '' && t.resource === 'pods') {
        const spec = isObject(obj.spec) ? obj.spec : undefined;
        if (!spec) return;
        if (op === 'UPDATE') {
          // The priority was set on create; an update that leaves it out keeps it (validation
          // refuses any other change of it).
          const before = isObject(old?.spec) ? old.spec : {};
          if (spec.priority === undefined && before.priority !== undefined) spec.priority = before.priority;
          return;
        }
        if (op !== 'CREATE') return;
        admitPod(t, obj, spec);
        return;
      }
      if (t.group === 'scheduling.k8s.io' && t.resource === 'priorityclasses' && op !== 'DELETE') {
        if (obj.globalDefault !== true) return;
        const current = defaultClass();
        const name = isObject(obj.metadata) ? String(obj.metadata.name ?? '') : '';
        if (current && (op === 'CREATE' || current.name !== name)) {
          throw admissionForbidden(
            t,
            obj,
            `PriorityClass ${current.name} is already marked as default. Only one default can exist`,
          );
        }
      }
    },
  );

  function admitPod(t: ResourceType, pod: Obj, spec: Obj): void {
    const className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
    let priority: number;
    let preemptionPolicy: string | undefined;
    if (className === '') {
      const dpc = defaultClass();
      if (dpc) {
        spec.priorityClassName = dpc.name;
        priority = dpc.value;
        preemptionPolicy = dpc.preemptionPolicy;
      } else {
        priority = DEFAULT_PRIORITY;
        preemptionPolicy = 'PreemptLowerPriority';
      }
    } else {
      const stored = store.get(objectKey('scheduling.k8s.io', 'priorityclasses', undefined, className));
      if (!stored) throw admissionForbidden(t, pod, `no PriorityClass with name ${className} was found`);
      const pc = readClass(stored.object as Obj);
      priority = pc.value;
      preemptionPolicy = pc.preemptionPolicy;
    }
    if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority) {
      throw admissionForbidden(
        t,
        pod,
        `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    }
    spec.priority = priority;
    if (preemptionPolicy !== undefined) {
      if (
        typeof spec.preemptionPolicy === 'string' &&
        spec.preemptionPolicy !== '' &&
        spec.preemptionPolicy !== preemptionPolicy
      ) {
        throw admissionForbidden(
          t,
          pod,
          `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${preemptionPolicy} from the given PriorityClass name`,
        );
      }
      spec.preemptionPolicy = preemptionPolicy;
    }
  }
}
