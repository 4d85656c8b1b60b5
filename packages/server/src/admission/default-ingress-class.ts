import type { ResourceType } from '../registry/types.js';
import type { Store } from '../storage/store.js';
import { isObject, type Obj } from '../util/object.js';
import { newestDefaultClass } from './default-class.js';
import { actsOn } from './plugin-kinds.js';

const DEFAULT_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';
/** The class annotation Ingresses had before `spec.ingressClassName`: an Ingress that has it keeps no default. */
const LEGACY_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

/**
 * kube-apiserver's DefaultIngressClass admission plugin: an Ingress created with neither
 * `spec.ingressClassName` nor the `kubernetes.io/ingress.class` annotation gets the default
 * IngressClass (annotated `ingressclass.kubernetes.io/is-default-class: "true"`; the newest one
 * when several are). Updates are left alone.
 */
export function defaultIngressClass(store: Store) {
  return actsOn(
    (_op, t) => t.group === 'networking.k8s.io' && t.resource === 'ingresses',
    (op: 'CREATE' | 'UPDATE' | 'DELETE', t: ResourceType, obj: Obj): void => {
      if (op !== 'CREATE' || t.group !== 'networking.k8s.io' || t.resource !== 'ingresses') return;
      if (!isObject(obj.spec)) obj.spec = {};
      const spec = obj.spec as Obj;
      if (spec.ingressClassName !== undefined && spec.ingressClassName !== null) return;
      const annotations = isObject(obj.metadata) ? obj.metadata.annotations : undefined;
      if (isObject(annotations) && Object.hasOwn(annotations, LEGACY_CLASS_ANNOTATION)) return;
      const chosen = newestDefaultClass(store, 'networking.k8s.io', 'ingressclasses', [DEFAULT_ANNOTATION]);
      if (chosen !== undefined) spec.ingressClassName = chosen;
    },
  );
}
