/**
 * kube-apiserver's PodSecurity admission plugin (k8s.io/pod-security-admission `admission`, run
 * as a validating plugin): a namespace's `pod-security.kubernetes.io/*` labels choose the Pod
 * Security Standards level its pods are enforced at, audited at and warned about.
 *
 * - Pods: a create (or an update that changes an image or adds a container) that violates the
 *   enforce level is refused; one that violates the warn level gets a `Warning`.
 * - Workloads with a pod template (Deployments, Jobs, …): never refused; a template that
 *   violates the warn level gets a warning (the enforce level applies to the pods only).
 * - Namespaces: invalid labels are refused; a stricter enforce level warns about the existing
 *   pods that violate it.
 */
import { ApiError } from 'kubeloop/api';
import type { ResourceType } from '../../registry/types.js';
import { collectionPrefix, objectKey, type Store } from '../../storage/store.js';
import { lazyModule } from '../../util/lazy-module.js';
import { isObject, type Obj } from '../../util/object.js';
import { actsOn } from '../plugin-kinds.js';
import {
  compareLevels,
  fullyPrivileged,
  type LevelVersion,
  levelVersionString,
  type Policy,
  policyToEvaluate,
  sameLevelVersion,
  versionString,
} from './api.js';
import type { Violation } from './policy.js';

type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';
/** What the plugin reads of the request's admission options (chain.ts's AdmissionOptions). */
interface AdmissionOptions {
  warnings?: string[];
  subresource?: string;
  /** Set when the request is audited: the plugin's `pod-security.kubernetes.io/*` annotations. */
  auditAnnotations?: Record<string, string>;
}

/** kube's `AuditAnnotationPrefix` of the plugin's audit annotations. */
const ANNOTATION = 'pod-security.kubernetes.io/';

/**
 * Every check of the 1.32 Pod Security Standards and their evaluation: loaded with the first
 * pod (or template) a level other than privileged applies to; most servers never need them.
 */
const evaluation = lazyModule(async () => {
  const [checks, policy] = await Promise.all([import('./checks.js'), import('./policy.js')]);
  return { ...policy, checks: checks.DEFAULT_CHECKS };
});

const obj = (v: unknown): Obj => (isObject(v) ? v : {});
const labelsOf = (o: Obj): Record<string, unknown> => obj(obj(o.metadata).labels);

/** Where each kind with a pod template keeps it (`DefaultPodSpecExtractor`). */
const TEMPLATES: Record<string, (o: Obj) => unknown> = {
  '/replicationcontrollers': (o) => obj(o.spec).template,
  '/podtemplates': (o) => o.template,
  'apps/replicasets': (o) => obj(o.spec).template ?? {},
  'apps/deployments': (o) => obj(o.spec).template ?? {},
  'apps/statefulsets': (o) => obj(o.spec).template ?? {},
  'apps/daemonsets': (o) => obj(o.spec).template ?? {},
  'batch/jobs': (o) => obj(o.spec).template ?? {},
  'batch/cronjobs': (o) => obj(obj(obj(o.spec).jobTemplate).spec).template ?? {},
};

/** Pod subresources whose writes cannot change what the policy looks at. */
const IGNORED_POD_SUBRESOURCES = new Set(['status', 'binding', 'eviction']);

/** `isSignificantPodUpdate`: only a changed image or seccomp annotation, or a new container, is re-checked. */
export function significantPodUpdate(pod: Obj, old: Obj): boolean {
  const spec = obj(pod.spec);
  const oldSpec = obj(old.spec);
  const list = (s: Obj, f: string): Obj[] => (Array.isArray(s[f]) ? s[f].map(obj) : []);
  const annotations = obj(obj(pod.metadata).annotations);
  const oldAnnotations = obj(obj(old.metadata).annotations);
  const changed = (c: Obj, o: Obj) => {
    if (c.image !== o.image) return true;
    const key = `container.seccomp.security.alpha.kubernetes.io/${String(c.name ?? '')}`;
    return annotations[key] !== oldAnnotations[key];
  };
  for (const f of ['containers', 'initContainers']) {
    const now = list(spec, f);
    const before = list(oldSpec, f);
    if (now.length !== before.length) return true;
    if (now.some((c, i) => changed(c, before[i]!))) return true;
  }
  const oldEphemeral = list(oldSpec, 'ephemeralContainers');
  return list(spec, 'ephemeralContainers').some((c) => {
    const o = oldEphemeral.find((e) => e.name === c.name);
    return o === undefined || changed(c, o);
  });
}

/** The PodSecurity admission plugin over the namespaces and pods of `store`. */
export function podSecurityAdmission(store: Store) {
  const namespace = (name: string): Obj | undefined =>
    store.get(objectKey('', 'namespaces', undefined, name))?.object as Obj | undefined;

  /** Runs `then` once the checks are loaded: at once, or after the first load. */
  const withChecks = (then: () => void): void | Promise<void> => {
    const loading = evaluation.load();
    return loading ? loading.then(then) : then();
  };

  /** `EvaluatePod`: throws for an enforced violation, else warns about the warn level's. */
  const evaluate = (
    policy: Policy,
    meta: Obj,
    spec: Obj,
    enforce: ((violations: Violation[]) => void) | undefined,
    options?: AdmissionOptions,
  ) => {
    const { evaluatePod, forbiddenDetail, checks } = evaluation.get();
    const results = new Map<string, Violation[]>();
    const at = (lv: LevelVersion) => {
      const key = levelVersionString(lv);
      const found = results.get(key) ?? evaluatePod(checks, lv, meta, spec);
      results.set(key, found);
      return found;
    };
    // Noted before an enforced violation refuses the pod, as kube's response carries both.
    const annotations = options?.auditAnnotations;
    if (annotations) {
      if (enforce) annotations[`${ANNOTATION}enforce-policy`] = levelVersionString(policy.enforce);
      const audited = at(policy.audit);
      if (audited.length > 0)
        annotations[`${ANNOTATION}audit-violations`] =
          `would violate PodSecurity "${levelVersionString(policy.audit)}": ${forbiddenDetail(audited)}`;
    }
    enforce?.(at(policy.enforce));
    const warn = at(policy.warn);
    if (warn.length > 0) {
      options?.warnings?.push(
        `would violate PodSecurity "${levelVersionString(policy.warn)}": ${forbiddenDetail(warn)}`,
      );
    }
  };

  const validatePod = (
    op: AdmissionOperation,
    t: ResourceType,
    pod: Obj,
    old: Obj | undefined,
    options?: AdmissionOptions,
  ) => {
    if (options?.subresource && IGNORED_POD_SUBRESOURCES.has(options.subresource)) return;
    const meta = obj(pod.metadata);
    const ns = namespace(String(meta.namespace ?? ''));
    if (!ns) return;
    const { policy, errors } = policyToEvaluate(labelsOf(ns));
    if (errors.length === 0 && fullyPrivileged(policy)) {
      // kube's `sharedAllowedPrivilegedResponse`.
      if (options?.auditAnnotations)
        options.auditAnnotations[`${ANNOTATION}enforce-policy`] = 'privileged:latest';
      return;
    }
    if (op === 'UPDATE' && old && !significantPodUpdate(pod, old)) return;
    return withChecks(() =>
      evaluate(
        policy,
        meta,
        obj(pod.spec),
        (violations) => {
          if (violations.length === 0) return;
          throw ApiError.forbidden(
            { group: t.group, resource: t.resource },
            String(meta.name ?? ''),
            `violates PodSecurity "${levelVersionString(policy.enforce)}": ${evaluation.get().forbiddenDetail(violations)}`,
          );
        },
        options,
      ),
    );
  };

  const validatePodController = (template: unknown, workload: Obj, options?: AdmissionOptions) => {
    if (options?.subresource || !isObject(template)) return;
    const ns = namespace(String(obj(workload.metadata).namespace ?? ''));
    if (!ns) return;
    const { policy, errors } = policyToEvaluate(labelsOf(ns));
    if (errors.length === 0 && policy.warn.level === 'privileged' && policy.audit.level === 'privileged')
      return;
    // A template is never refused, and its enforce level is not evaluated (kube's
    // ValidatePodController): only the pods it makes are.
    return withChecks(() => evaluate(policy, obj(template.metadata), obj(template.spec), undefined, options));
  };

  /** `EvaluatePodsInNamespace`: the existing pods that the new enforce level would refuse. */
  const existingPodWarnings = (name: string, enforce: LevelVersion): string[] => {
    const { evaluatePod, forbiddenReason, checks } = evaluation.get();
    const counts = new Map<string, { first: string; count: number }>();
    for (const item of store.list(collectionPrefix('', 'pods', name)).items) {
      const pod = item.object as Obj;
      const violations = evaluatePod(checks, enforce, obj(pod.metadata), obj(pod.spec));
      if (violations.length === 0) continue;
      const reason = forbiddenReason(violations);
      const podName = String(obj(pod.metadata).name ?? '');
      const c = counts.get(reason);
      if (!c) counts.set(reason, { first: podName, count: 1 });
      else {
        c.count++;
        if (podName < c.first) c.first = podName;
      }
    }
    if (counts.size === 0) return [];
    const lines = [...counts].map(([reason, { first, count }]) =>
      count === 1
        ? `${first}: ${reason}`
        : count === 2
          ? `${first} (and 1 other pod): ${reason}`
          : `${first} (and ${count - 1} other pods): ${reason}`,
    );
    return [
      `existing pods in namespace "${name}" violate the new PodSecurity enforce level "${levelVersionString(enforce)}"`,
      ...lines.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    ];
  };

  const validateNamespace = (
    op: AdmissionOperation,
    ns: Obj,
    old: Obj | undefined,
    options?: AdmissionOptions,
  ) => {
    if (options?.subresource) return;
    const name = String(obj(ns.metadata).name ?? '');
    const next = policyToEvaluate(labelsOf(ns));
    const refuse = () => ApiError.invalid({ group: '', kind: 'Namespace' }, name, next.errors);
    if (op === 'CREATE') {
      if (next.errors.length > 0) throw refuse();
      return;
    }
    if (!old) return;
    const prev = policyToEvaluate(labelsOf(old));
    if (
      next.errors.length > 0 &&
      (prev.errors.length === 0 || JSON.stringify(next.errors) !== JSON.stringify(prev.errors))
    )
      throw refuse();
    const e = next.policy.enforce;
    const was = prev.policy.enforce;
    if (sameLevelVersion(e, was) || e.level === 'privileged') return;
    // The same version at a level no stricter: nothing that ran can be refused now.
    if (versionString(e.version) === versionString(was.version) && compareLevels(e.level, was.level) < 1)
      return;
    return withChecks(() => {
      options?.warnings?.push(...existingPodWarnings(name, e));
    });
  };

  const handles = (op: string, t: ResourceType) =>
    op !== 'DELETE' &&
    ((t.group === '' && (t.resource === 'namespaces' || t.resource === 'pods')) ||
      Object.hasOwn(TEMPLATES, `${t.group}/${t.resource}`));
  return actsOn(
    handles,
    (
      op: AdmissionOperation,
      t: ResourceType,
      o: Obj,
      old: Obj | undefined,
      options?: AdmissionOptions,
    ): void | Promise<void> => {
      if (op !== 'CREATE' && op !== 'UPDATE') return;
      if (t.group === '' && t.resource === 'namespaces') return validateNamespace(op, o, old, options);
      if (t.group === '' && t.resource === 'pods') return validatePod(op, t, o, old, options);
      const template = TEMPLATES[`${t.group}/${t.resource}`];
      if (template) return validatePodController(template(o), o, options);
    },
  );
}
