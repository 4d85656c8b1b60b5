/** Helpers the apps/v1 workloads (and Jobs) share: selector and template checks, replica status rules, intOrPercent values, container cells of printers. */
import type { StatusCause } from 'kubeloop/api';
import { validatePodTemplate } from '../core/podspec.js';
import {
  dig,
  forbidden,
  GoValue,
  goIntOrString,
  goLabelSelector,
  goStringMap,
  int,
  invalid,
  isObj,
  labelSelectorAsSelector,
  nonNegative,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  selectorEmpty,
  selectorMatches,
  semanticEqual,
  since,
  str,
  strMap,
  validateLabelSelector,
} from '../shared/util.js';

/**
 * The status checks Deployments and ReplicaSets share: counters are non-negative, the partial
 * counts never exceed `status.replicas`, and available never exceeds ready.
 */
export function replicaStatusCauses(
  status: Obj,
  counters: string[],
  boundedByReplicas: string[],
): StatusCause[] {
  const out = statusNonNegative(status, counters);
  const msg = 'cannot be greater than status.replicas';
  for (const f of boundedByReplicas) {
    if (int(status[f]) > int(status.replicas)) out.push(invalid(`status.${f}`, int(status[f]), msg));
  }
  if (int(status.availableReplicas) > int(status.readyReplicas)) {
    out.push(
      invalid(
        'status.availableReplicas',
        int(status.availableReplicas),
        'cannot be greater than readyReplicas',
      ),
    );
  }
  return out;
}

export const specOf = (obj: Obj): Obj => (isObj(obj.spec) ? obj.spec : {});
export const statusOf = (obj: Obj): Obj => (isObj(obj.status) ? obj.status : {});
export const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
export const age = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);

/** printers.go `layoutContainerCells`: container names and images, comma separated. */
export function containerCells(template: unknown): [string, string] {
  const containers = objs(dig(template, 'spec', 'containers'));
  return [containers.map((c) => str(c.name)).join(','), containers.map((c) => str(c.image)).join(',')];
}

export const selectorValue = (v: unknown): GoValue => new GoValue(goLabelSelector(v));

/** The selector checks shared by Deployment, ReplicaSet and StatefulSet specs. */
export function validateSelector(
  spec: Obj,
  what: string,
  invalidDetail: string,
): { causes: StatusCause[]; ok: boolean } {
  const causes: StatusCause[] = [];
  const sel = spec.selector;
  if (sel === undefined || sel === null) causes.push(required('spec.selector'));
  else {
    causes.push(...validateLabelSelector(sel, 'spec.selector'));
    if (isObj(sel) && Object.keys(strMap(sel.matchLabels)).length + objs(sel.matchExpressions).length === 0) {
      causes.push(invalid('spec.selector', selectorValue(sel), `empty selector is invalid for ${what}`));
    }
  }
  const parsed = labelSelectorAsSelector(sel);
  if (!parsed) {
    causes.push(invalid('spec.selector', selectorValue(sel), invalidDetail));
    return { causes, ok: false };
  }
  return { causes, ok: true };
}

/** The template labels must satisfy a non-empty selector. */
export function templateMatches(spec: Obj): StatusCause[] {
  const parsed = labelSelectorAsSelector(spec.selector);
  if (!parsed || selectorEmpty(parsed)) return [];
  const labels = dig(spec, 'template', 'metadata', 'labels');
  if (selectorMatches(parsed, strMap(labels))) return [];
  return [
    invalid(
      'spec.template.metadata.labels',
      new GoValue(goStringMap(labels)),
      '`selector` does not match template `labels`',
    ),
  ];
}

/** `ValidatePodTemplateSpecForReplicaSet` (Deployments and ReplicaSets). */
export function validateReplicaSetTemplate(spec: Obj): StatusCause[] {
  const out = templateMatches(spec);
  out.push(...validatePodTemplate(spec.template, 'spec.template'));
  const restart = str(dig(spec, 'template', 'spec', 'restartPolicy'));
  if (restart !== 'Always') out.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  const ads = numOr(dig(spec, 'template', 'spec', 'activeDeadlineSeconds'));
  if (ads !== undefined) {
    out.push(
      forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        'activeDeadlineSeconds in ReplicaSet is not Supported',
      ),
    );
  }
  return out;
}

const PERCENT = /^[0-9]+%$/;

/** `ValidatePositiveIntOrPercent`. */
export function validateIntOrPercent(v: unknown, field: string): StatusCause[] {
  if (typeof v === 'string') {
    return PERCENT.test(v)
      ? []
      : [
          invalid(
            field,
            new GoValue(goIntOrString(v)),
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
          ),
        ];
  }
  return nonNegative(field, v);
}

/** `getIntOrPercentValue`. */
export const intOrPercentValue = (v: unknown): number =>
  typeof v === 'string' ? (PERCENT.test(v) ? Number.parseInt(v, 10) : 0) : int(v);

/** `IsNotMoreThan100Percent`. */
export function notMoreThan100(v: unknown, field: string): StatusCause[] {
  if (typeof v === 'string' && PERCENT.test(v) && Number.parseInt(v, 10) > 100) {
    return [invalid(field, new GoValue(goIntOrString(v)), 'must not be greater than 100%')];
  }
  return [];
}

export function immutableSelector(obj: Obj, old: Obj | undefined): StatusCause[] {
  if (!old) return [];
  const next = specOf(obj).selector;
  const prev = specOf(old).selector;
  return semanticEqual(next, prev)
    ? []
    : [invalid('spec.selector', selectorValue(next), 'field is immutable')];
}

export function statusNonNegative(status: Obj, fields: string[]): StatusCause[] {
  return fields.flatMap((f) => nonNegative(`status.${f}`, status[f]));
}
