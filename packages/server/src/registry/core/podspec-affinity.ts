/**
 * A pod's scheduling constraints as kube checks them: node selector terms' requirements,
 * preferred terms' weights, pod (anti-)affinity terms' selectors, namespaces and topology keys,
 * and tolerations.
 */
import type { StatusCause } from 'kubeloop/api';
import {
  dig,
  forbidden,
  GoValue,
  goQuote,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isObj,
  isQualifiedName,
  isSet,
  isValidLabelValue,
  notSupported,
  numOr,
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

/** `ValidateNodeSelectorRequirement`: values as the operator wants them, a label name for a key. */
function nodeSelectorRequirement(req: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const op = str(req.operator);
  const values = strs(req.values);
  if (op === 'In' || op === 'NotIn') {
    if (values.length === 0)
      out.push(required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (op === 'Exists' || op === 'DoesNotExist') {
    if (values.length > 0)
      out.push(
        forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
      );
  } else if (op === 'Gt' || op === 'Lt') {
    if (values.length !== 1)
      out.push(required(`${path}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
  } else out.push(invalid(`${path}.operator`, op, 'not a valid selector operator'));
  const key = str(req.key);
  for (const msg of isQualifiedName(key)) out.push(invalid(`${path}.key`, key, msg));
  return out;
}

/** `ValidateNodeFieldSelectorRequirement`: only `metadata.name`, with one value for In or NotIn. */
function nodeFieldRequirement(req: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const op = str(req.operator);
  const values = strs(req.values);
  if (op === 'In' || op === 'NotIn') {
    if (values.length !== 1)
      out.push(
        required(
          `${path}.values`,
          "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        ),
      );
  } else out.push(invalid(`${path}.operator`, op, 'not a valid selector operator'));
  const key = str(req.key);
  if (key !== 'metadata.name') out.push(invalid(`${path}.key`, key, 'not a valid field selector key'));
  else
    values.forEach((v, i) => {
      for (const msg of isDNS1123Subdomain(v)) out.push(invalid(`${path}.values[${i}]`, v, msg));
    });
  return out;
}

/** `ValidateNodeSelectorTerm`. */
export function nodeSelectorTerm(term: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  objs(term.matchExpressions).forEach((r, j) => {
    out.push(...nodeSelectorRequirement(r, `${path}.matchExpressions[${j}]`));
  });
  objs(term.matchFields).forEach((r, j) => {
    out.push(...nodeFieldRequirement(r, `${path}.matchFields[${j}]`));
  });
  return out;
}

export function validateAffinityTerms(spec: Obj, path: string): StatusCause[] {
  const affinity = spec.affinity;
  if (!isObj(affinity)) return [];
  const out: StatusCause[] = [];
  const requiredTerms = `${path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`;
  objs(
    dig(affinity, 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms'),
  ).forEach((t, i) => {
    out.push(...nodeSelectorTerm(t, `${requiredTerms}[${i}]`));
  });
  const preferred = `${path}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution`;
  objs(dig(affinity, 'nodeAffinity', 'preferredDuringSchedulingIgnoredDuringExecution')).forEach((t, i) => {
    out.push(...weight(t, `${preferred}[${i}]`));
    out.push(...nodeSelectorTerm(isObj(t.preference) ? t.preference : {}, `${preferred}[${i}].preference`));
  });
  out.push(...podAffinity(affinity.podAffinity, `${path}.affinity.podAffinity`));
  out.push(...podAffinity(affinity.podAntiAffinity, `${path}.affinity.podAntiAffinity`));
  return out;
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/**
 * A toleration as Go's `%#v` prints a `core.Toleration` (a set `tolerationSeconds` is a pointer
 * there, printed as an address; here as its value).
 */
export function goToleration(t: Obj): string {
  const seconds = numOr(t.tolerationSeconds);
  const fields = ['key', 'operator', 'value', 'effect'].map(
    (f) => `${f[0]!.toUpperCase()}${f.slice(1)}:${goQuote(str(t[f]))}`,
  );
  return `core.Toleration{${fields.join(', ')}, TolerationSeconds:(*int64)(${seconds ?? 'nil'})}`;
}

/** `ValidateTolerations`: keys, operators against keys and values, effects against seconds. */
export function validateTolerations(tolerations: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  objs(tolerations).forEach((t, i) => {
    const tp = `${path}[${i}]`;
    const key = str(t.key);
    const op = str(t.operator);
    const effect = str(t.effect);
    for (const msg of key ? isQualifiedName(key) : []) out.push(invalid(`${tp}.key`, key, msg));
    if (!key && op !== 'Exists')
      out.push(
        invalid(
          `${tp}.operator`,
          op,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    if (isSet(t.tolerationSeconds) && effect !== 'NoExecute')
      out.push(invalid(`${tp}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    if (op === '' || op === 'Equal') {
      const msgs = isValidLabelValue(str(t.value));
      if (msgs.length > 0) out.push(invalid(`${tp}.operator`, new GoValue(goToleration(t)), msgs.join(';')));
    } else if (op === 'Exists') {
      if (str(t.value))
        out.push(
          invalid(
            `${tp}.operator`,
            new GoValue(goToleration(t)),
            "value must be empty when `operator` is 'Exists'",
          ),
        );
    } else out.push(notSupported(`${tp}.operator`, op, ['Equal', 'Exists']));
    if (effect && !TAINT_EFFECTS.includes(effect))
      out.push(notSupported(`${tp}.effect`, effect, TAINT_EFFECTS));
  });
  return out;
}
