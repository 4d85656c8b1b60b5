/**
 * A pod's affinity as `validateAffinity` checks it beyond the required node selector terms:
 * preferred terms' weights, and pod (anti-)affinity terms' selectors, namespaces and topology keys.
 */
import type { StatusCause } from 'kubeloop/api';
import {
  dig,
  invalid,
  isDNS1123Label,
  isObj,
  isQualifiedName,
  type Obj,
  objs,
  required,
  str,
  strs,
  validateLabelSelector,
} from '../shared/util.js';

const WEIGHT = 'must be in the range 1-100';

function weight(term: Obj, path: string): StatusCause[] {
  const w = typeof term.weight === 'number' ? term.weight : 0;
  return w <= 0 || w > 100 ? [invalid(`${path}.weight`, w, WEIGHT)] : [];
}

/** `validatePodAffinityTerm`: selectors, namespaces, a topology key that is a label name. */
function podAffinityTerm(term: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (isObj(term.labelSelector))
    out.push(...validateLabelSelector(term.labelSelector, `${path}.labelSelector`));
  if (isObj(term.namespaceSelector))
    out.push(...validateLabelSelector(term.namespaceSelector, `${path}.namespaceSelector`));
  // kube names the field `namespace` here.
  for (const ns of strs(term.namespaces))
    for (const msg of isDNS1123Label(ns)) out.push(invalid(`${path}.namespace`, ns, msg));
  const key = str(term.topologyKey);
  if (!key) out.push(required(`${path}.topologyKey`, 'can not be empty'));
  for (const msg of isQualifiedName(key)) out.push(invalid(`${path}.topologyKey`, key, msg));
  return out;
}

function podAffinity(affinity: unknown, path: string): StatusCause[] {
  if (!isObj(affinity)) return [];
  const out: StatusCause[] = [];
  const requiredPath = `${path}.requiredDuringSchedulingIgnoredDuringExecution`;
  objs(affinity.requiredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
    out.push(...podAffinityTerm(t, `${requiredPath}[${i}]`));
  });
  const preferredPath = `${path}.preferredDuringSchedulingIgnoredDuringExecution`;
  objs(affinity.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
    out.push(...weight(t, `${preferredPath}[${i}]`));
    out.push(
      ...podAffinityTerm(
        isObj(t.podAffinityTerm) ? t.podAffinityTerm : {},
        `${preferredPath}[${i}].podAffinityTerm`,
      ),
    );
  });
  return out;
}

export function validateAffinityTerms(spec: Obj, path: string): StatusCause[] {
  const affinity = spec.affinity;
  if (!isObj(affinity)) return [];
  const out: StatusCause[] = [];
  const preferred = `${path}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution`;
  objs(dig(affinity, 'nodeAffinity', 'preferredDuringSchedulingIgnoredDuringExecution')).forEach((t, i) => {
    out.push(...weight(t, `${preferred}[${i}]`));
  });
  out.push(...podAffinity(affinity.podAffinity, `${path}.affinity.podAffinity`));
  out.push(...podAffinity(affinity.podAntiAffinity, `${path}.affinity.podAntiAffinity`));
  return out;
}
