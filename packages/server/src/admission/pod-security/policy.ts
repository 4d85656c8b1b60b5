/**
 * The Pod Security Standards checks and their registry (k8s.io/pod-security-admission `policy`):
 * what a check looks like, the helpers the checks share, and which checks a level and version
 * run, in kube's order.
 */
import { isObject, type Obj } from '../../util/object.js';
import type { LevelVersion } from './api.js';

/** A refusal of one check: its reason (`host namespaces`) and an optional detail (`hostPID`). */
export interface Violation {
  reason: string;
  detail: string;
}

/** One version of a check: the pod's metadata and spec in, a violation or nothing out. */
export type CheckPod = (meta: Obj, spec: Obj) => Violation | undefined;

/** A check, with the policy versions its revisions apply from. */
export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** Revisions by increasing minimum minor version (of Kubernetes 1.x). */
  versions: { min: number; check: CheckPod; overrides?: readonly string[] }[];
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the checks, as in policy/helpers.go and visitor.go.

/** `joinQuote`: `"a", "b"` (no escaping, as kube's). */
export const joinQuote = (items: readonly string[]): string =>
  items.length === 0 ? '' : `"${items.join('", "')}"`;

/** `pluralize`: the singular for one, else the plural. */
export const pluralize = (singular: string, plural: string, count: number): string =>
  count === 1 ? singular : plural;

/** A sorted set's list (`sets.String.List()`): unique, in byte order. */
export const sortedUnique = (items: Iterable<string>): string[] =>
  [...new Set(items)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** `v` when it is a JSON object. */
export const obj = (v: unknown): Obj | undefined => (isObject(v) ? v : undefined);
/** `v` when it is a string, else the empty string (Go's zero value). */
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObject) : []);

/** Every container of a pod spec: init containers, containers, then ephemeral containers. */
export function containers(spec: Obj): Obj[] {
  return [...objs(spec.initContainers), ...objs(spec.containers), ...objs(spec.ephemeralContainers)];
}

/** A container's (or the pod's) securityContext, when set. */
export const securityContext = (o: Obj): Obj | undefined => obj(o.securityContext);

/** The pod-level securityContext, when set. */
export const podSecurityContext = (spec: Obj): Obj | undefined => obj(spec.securityContext);

/** `spec.os.name == windows`: restricted's Linux-only checks pass such pods from 1.25 on. */
export const windowsPod = (spec: Obj): boolean => obj(spec.os)?.name === 'windows';

/** "pod and containers "a", "b"": the setters of a bad value, as the checks name them. */
export function setters(pod: boolean, badContainers: readonly string[]): string[] {
  const out = pod ? ['pod'] : [];
  if (badContainers.length > 0) {
    out.push(`${pluralize('container', 'containers', badContainers.length)} ${joinQuote(badContainers)}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The registry.

/** The newest minimum version of any check: versions past it evaluate as it (and so does latest). */
export const MAX_MINOR = 32;

function revisionAt(c: Check, minor: number) {
  let found: Check['versions'][number] | undefined;
  for (const v of c.versions) if (v.min <= minor) found = v;
  return found;
}

const byId = (a: Check, b: Check) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The checks a level runs at a version, in kube's order: baseline checks by ID, then restricted
 * checks by ID; restricted runs baseline's checks too, except those a restricted check
 * overrides (capabilities, hostPath volumes and seccomp have a stricter restricted version).
 */
export function checksFor(all: readonly Check[], lv: LevelVersion): CheckPod[] {
  if (lv.level === 'privileged') return [];
  const minor = lv.version.latest ? MAX_MINOR : Math.min(lv.version.minor, MAX_MINOR);
  const at = (level: Check['level']) =>
    all
      .filter((c) => c.level === level)
      .sort(byId)
      .flatMap((c) => {
        const r = revisionAt(c, minor);
        return r ? [{ id: c.id, ...r }] : [];
      });
  const baseline = at('baseline');
  if (lv.level === 'baseline') return baseline.map((c) => c.check);
  const restricted = at('restricted');
  const overridden = new Set(restricted.flatMap((c) => c.overrides ?? []));
  return [...baseline.filter((c) => !overridden.has(c.id)), ...restricted].map((c) => c.check);
}

/** The violations of a pod at a level and version, in the order of its checks. */
export function evaluatePod(all: readonly Check[], lv: LevelVersion, meta: Obj, spec: Obj): Violation[] {
  return checksFor(all, lv).flatMap((check) => check(meta, spec) ?? []);
}

/** `AggregateCheckResult.ForbiddenDetail`: `reason (detail), reason, …`. */
export const forbiddenDetail = (violations: readonly Violation[]): string =>
  violations.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(', ');

/** `AggregateCheckResult.ForbiddenReason`: the reasons alone. */
export const forbiddenReason = (violations: readonly Violation[]): string =>
  violations.map((v) => v.reason).join(', ');
