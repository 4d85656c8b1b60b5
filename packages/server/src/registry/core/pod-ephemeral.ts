/**
 * Ephemeral containers (`kubectl debug`), as kube-apiserver validates them: set only through the
 * `pods/ephemeralcontainers` subresource (never on create), each a container with a name unique
 * in the pod, a target among the pod's other containers, and none of the fields that would make
 * it part of the workload (ports, resources, probes, lifecycle, restart policy, sub-paths); once
 * added, never changed or removed (`validateEphemeralContainers`,
 * `ValidatePodEphemeralContainersUpdate`).
 */
import type { StatusCause } from 'kubeloop/api';
import {
  dig,
  duplicate,
  forbidden,
  invalid,
  notFound,
  type Obj,
  objs,
  semanticEqual,
  str,
} from '../shared/util.js';

const NOT_FOR_EPHEMERAL = 'cannot be set for an Ephemeral Container';

/** EphemeralContainerCommon's fields an ephemeral container may not set, in the struct's order. */
const DISALLOWED = [
  'ports',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
] as const;

/** Go's zero value, as decoded JSON shows it: absent, null, false, 0, "", or an object with no keys. */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return true;
  return typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
}

/**
 * `validateEphemeralContainers`: `validateContainer` is the pod spec's own check of a container
 * (given, so that this module needs nothing else of it).
 */
export function validateEphemeralContainers(
  spec: Obj,
  path: string,
  validateContainer: (c: Obj, path: string) => StatusCause[],
): StatusCause[] {
  const ephemeral = objs(spec.ephemeralContainers);
  if (ephemeral.length === 0) return [];
  const others = new Set<string>();
  for (const list of ['containers', 'initContainers'])
    for (const c of objs(spec[list])) others.add(str(c.name));
  const all = new Set(others);
  const out: StatusCause[] = [];
  ephemeral.forEach((ec, i) => {
    const p = `${path}.ephemeralContainers[${i}]`;
    out.push(...validateContainer(ec, p));
    const image = str(ec.image);
    if (image.trim() !== image)
      out.push(invalid(`${p}.image`, image, 'must not have leading or trailing whitespace'));
    const name = str(ec.name);
    if (all.has(name)) out.push(duplicate(`${p}.name`, name));
    else all.add(name);
    const target = str(ec.targetContainerName);
    if (target && !others.has(target)) out.push(notFound(`${p}.targetContainerName`, target));
    for (const field of DISALLOWED)
      if (!isZero(ec[field])) out.push(forbidden(`${p}.${field}`, NOT_FOR_EPHEMERAL));
    objs(ec.volumeMounts).forEach((m, j) => {
      for (const sub of ['subPath', 'subPathExpr'])
        if (str(m[sub])) out.push(forbidden(`${p}.volumeMounts[${j}].${sub}`, NOT_FOR_EPHEMERAL));
    });
  });
  return out;
}

/** `ValidatePodTemplateSpec`: a template's pods get ephemeral containers only once they run. */
export function validateNoEphemeralInTemplate(template: Obj, path: string): StatusCause[] {
  return objs(dig(template, 'spec', 'ephemeralContainers')).length > 0
    ? [forbidden(`${path}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template')]
    : [];
}

/** `ValidatePodCreate`: ephemeral containers come only through the subresource. */
export function validateNoEphemeralOnCreate(pod: Obj): StatusCause[] {
  return objs(dig(pod, 'spec', 'ephemeralContainers')).length > 0
    ? [forbidden('spec.ephemeralContainers', 'cannot be set on create')]
    : [];
}

/**
 * `ValidatePodEphemeralContainersUpdate`'s own part: a static pod takes none, and an existing
 * ephemeral container may be neither removed nor changed (matched by name: patches reorder).
 */
export function validateEphemeralContainersUpdate(pod: Obj, old: Obj): StatusCause[] {
  const annotations = dig(old, 'metadata', 'annotations');
  if (annotations && typeof annotations === 'object' && 'kubernetes.io/config.mirror' in annotations)
    return [forbidden('', 'static pods do not support ephemeral containers')];
  const next = new Map(objs(dig(pod, 'spec', 'ephemeralContainers')).map((c) => [str(c.name), c]));
  const out: StatusCause[] = [];
  for (const was of objs(dig(old, 'spec', 'ephemeralContainers'))) {
    const name = str(was.name);
    const now = next.get(name);
    if (!now) {
      out.push(
        forbidden('spec.ephemeralContainers', `existing ephemeral containers "${name}" may not be removed\n`),
      );
    } else if (!semanticEqual(was, now)) {
      // kube appends cmp.Diff's rendering of the two; this names the fields that differ.
      const fields = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter(
        (k) => !semanticEqual(was[k], now[k]),
      );
      const diff = fields.map(
        (k) => `  ${k}: ${JSON.stringify(was[k] ?? null)} -> ${JSON.stringify(now[k] ?? null)}`,
      );
      out.push(
        forbidden(
          'spec.ephemeralContainers',
          `existing ephemeral containers "${name}" may not be changed\n${diff.join('\n')}`,
        ),
      );
    }
  }
  return out;
}
