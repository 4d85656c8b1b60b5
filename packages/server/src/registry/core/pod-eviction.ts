/**
 * `POST pods/<name>/eviction` (Kubernetes' `EvictionREST`, `pkg/registry/core/pod/storage/eviction.go`):
 * deletes a pod unless that would take its PodDisruptionBudget below what it allows. `kubectl
 * drain` and operators that move pods off nodes go through it.
 *
 * - A pod that cannot disrupt anything more (Pending, Succeeded, Failed, or already being
 *   deleted) is deleted without looking at budgets.
 * - Otherwise the one budget whose selector matches the pod decides: none, the pod is deleted;
 *   more than one, a 500 Status; a budget its controller has not yet observed, or with no
 *   disruption left, a 429 with a `DisruptionBudget` cause. An allowed eviction takes one from
 *   `status.disruptionsAllowed` and records the pod in `status.disruptedPods` (so that the
 *   disruption controller does not count it healthy while it goes), then deletes it.
 * - An unready pod is evicted without spending the budget when the budget is met without it
 *   (or its `unhealthyPodEvictionPolicy` is `AlwaysAllow`).
 * - Before the delete, the pod gets the `DisruptionTarget` condition (`EvictionByEvictionAPI`).
 */
import { ApiError, labelSelectorFromObject, matchesLabels } from 'kubeloop/api';
import { clone, isObject, type Obj, timestamp } from '../../util/object.js';
import { type DeleteParams, preconditionsOf } from '../generic/admission-options.js';
import { checkDeletePreconditions, type WriteContext } from '../generic/errors.js';
import type { Registry } from '../registry.js';
import type { RestStorage } from '../rest.js';
import type { ResourceType } from '../types.js';

/** Entries of `status.disruptedPods` beyond which evictions are refused (the controller is behind). */
const MAX_DISRUPTED_PODS = 2000;

/** The answer of an eviction: the Status written back, with its HTTP code. */
export interface EvictionAnswer {
  code: number;
  status: Obj;
}

const SUCCESS: EvictionAnswer = {
  code: 201,
  status: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
};

/** Evicts pod `name` of `namespace` as the Eviction `body` asks; `dryRun` is the request's. */
export async function evictPod(
  rest: RestStorage,
  registry: Registry,
  pods: ResourceType,
  namespace: string,
  name: string,
  body: Obj,
  ctx: WriteContext,
): Promise<EvictionAnswer> {
  const kind = body.kind;
  const apiVersion = body.apiVersion;
  if (
    (kind !== undefined && kind !== 'Eviction') ||
    (apiVersion !== undefined && apiVersion !== 'policy/v1' && apiVersion !== 'policy/v1beta1')
  ) {
    const version = String(apiVersion ?? '')
      .split('/')
      .pop();
    throw ApiError.badRequest(
      `${String(kind)} in version ${JSON.stringify(version)} cannot be handled as a Eviction`,
    );
  }
  const m = isObject(body.metadata) ? body.metadata : {};
  if (m.name !== name) throw ApiError.badRequest('name in URL does not match name in Eviction object');
  const opts = deleteParams(body.deleteOptions, ctx.dryRun);
  const dryRun = ctx.dryRun || opts.dryRun;
  const write: WriteContext = { ...ctx, dryRun };

  const pod = rest.get(pods, namespace, name).object as Obj;
  const podMeta = pod.metadata as Obj;
  const phase = isObject(pod.status) ? pod.status.phase : undefined;
  if (podMeta.deletionTimestamp || phase === 'Pending' || phase === 'Succeeded' || phase === 'Failed') {
    // Evicting it disrupts nothing that is not disrupted already.
    await markAndDelete(rest, pods, namespace, name, opts.params, write);
    return SUCCESS;
  }

  const budgets = registry.lookup('policy', 'v1', 'poddisruptionbudgets');
  const matching = budgets
    ? rest
        .list(budgets, namespace, {})
        .items.map((s) => s.object as Obj)
        .filter((pdb) => selects(pdb, podMeta.labels))
    : [];
  if (matching.length > 1) {
    return {
      code: 500,
      status: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        code: 500,
      },
    };
  }
  const [pdb] = matching;
  if (pdb && budgets && !evictableWithoutBudget(pod, pdb)) {
    await spendDisruption(rest, budgets, namespace, pdb, name, write);
  }
  await markAndDelete(rest, pods, namespace, name, opts.params, write);
  return SUCCESS;
}

/** The eviction's `deleteOptions`, with the request's dry run carried into them (`propagateDryRun`). */
function deleteParams(options: unknown, queryDryRun: boolean): { params: DeleteParams; dryRun: boolean } {
  const o = isObject(options) ? options : {};
  const bodyDryRun = Array.isArray(o.dryRun) ? o.dryRun : [];
  if (queryDryRun && bodyDryRun.length > 0 && !(bodyDryRun.length === 1 && bodyDryRun[0] === 'All')) {
    throw ApiError.badRequest(
      `Non-matching dry-run options in request and content: [All] and [${bodyDryRun.join(' ')}]`,
    );
  }
  const params: DeleteParams = {};
  if (typeof o.gracePeriodSeconds === 'number') params.gracePeriodSeconds = Math.max(o.gracePeriodSeconds, 0);
  if (
    o.propagationPolicy === 'Orphan' ||
    o.propagationPolicy === 'Background' ||
    o.propagationPolicy === 'Foreground'
  )
    params.propagationPolicy = o.propagationPolicy;
  if (isObject(o.preconditions)) params.preconditions = preconditionsOf(o.preconditions);
  return { params, dryRun: bodyDryRun.includes('All') };
}

/** Whether a budget's selector picks the pod (`LabelSelectorAsSelector`: none picks nothing, `{}` everything). */
function selects(pdb: Obj, labels: unknown): boolean {
  const spec = isObject(pdb.spec) ? pdb.spec : {};
  try {
    return matchesLabels(
      labelSelectorFromObject(spec.selector as Parameters<typeof labelSelectorFromObject>[0]),
      isObject(labels) ? (labels as Record<string, string>) : undefined,
    );
  } catch {
    return false; // an invalid selector matches no pod
  }
}

const isReady = (pod: Obj): boolean =>
  (isObject(pod.status) && Array.isArray(pod.status.conditions) ? (pod.status.conditions as Obj[]) : []).some(
    (c) => c.type === 'Ready' && c.status === 'True',
  );

/** An unready pod the budget can do without: it is met anyway, or it lets unhealthy pods go. */
function evictableWithoutBudget(pod: Obj, pdb: Obj): boolean {
  if (isReady(pod)) return false;
  const status = isObject(pdb.status) ? pdb.status : {};
  const current = Number(status.currentHealthy ?? 0);
  const desired = Number(status.desiredHealthy ?? 0);
  if (current >= desired && desired > 0) return true;
  return isObject(pdb.spec) && pdb.spec.unhealthyPodEvictionPolicy === 'AlwaysAllow';
}

/** `checkAndDecrement`: refuses when the budget has nothing to give, else takes one disruption from it. */
async function spendDisruption(
  rest: RestStorage,
  budgets: ResourceType,
  namespace: string,
  seen: Obj,
  podName: string,
  ctx: WriteContext,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const pdb =
      attempt === 0
        ? seen
        : (rest.get(budgets, namespace, String((seen.metadata as Obj).name)).object as Obj);
    const pm = pdb.metadata as Obj;
    const status = isObject(pdb.status) ? { ...pdb.status } : {};
    const budgetName = String(pm.name);
    if (Number(status.observedGeneration ?? 0) < Number(pm.generation ?? 0)) {
      throw refused(10, `The disruption budget ${budgetName} is still being processed by the server.`);
    }
    const allowed = Number(status.disruptionsAllowed ?? 0);
    const forbidden = (why: string) =>
      new ApiError({
        code: 403,
        reason: 'Forbidden',
        message: `poddisruptionbudget.policy "${budgetName}" is forbidden: ${why}`,
        details: { name: budgetName, group: 'policy', kind: 'poddisruptionbudget' },
      });
    if (allowed < 0) throw forbidden('pdb disruptions allowed is negative');
    const disrupted = isObject(status.disruptedPods) ? { ...status.disruptedPods } : {};
    if (Object.keys(disrupted).length > MAX_DISRUPTED_PODS) {
      throw forbidden('DisruptedPods map too big - too many evictions not confirmed by PDB controller');
    }
    if (allowed === 0) {
      throw refused(
        0,
        `The disruption budget ${budgetName} needs ${Number(status.desiredHealthy ?? 0)} healthy pods and has ${Number(status.currentHealthy ?? 0)} currently`,
      );
    }
    if (ctx.dryRun) return;
    status.disruptionsAllowed = allowed - 1;
    if (allowed - 1 === 0) status.conditions = insufficient(status.conditions, pm.generation);
    disrupted[podName] = timestamp();
    status.disruptedPods = disrupted;
    const next = { ...clone(pdb), status };
    try {
      await rest.update(budgets, namespace, budgetName, next, 'status', ctx);
      return;
    } catch (err) {
      // Someone else changed the budget meanwhile: judge again on what it says now.
      if (err instanceof ApiError && err.code === 409 && attempt < 5) continue;
      throw err;
    }
  }
}

/** The 429 of a budget that does not allow the eviction, with its `DisruptionBudget` cause. */
function refused(retryAfterSeconds: number, cause: string): ApiError {
  return new ApiError({
    code: 429,
    reason: 'TooManyRequests',
    message: "Cannot evict pod as it would violate the pod's disruption budget.",
    details: {
      causes: [{ reason: 'DisruptionBudget', message: cause }],
      ...(retryAfterSeconds > 0 && { retryAfterSeconds }),
    },
  });
}

/** The `DisruptionAllowed` condition turned False once the last allowed disruption is spent. */
function insufficient(conditions: unknown, generation: unknown): Obj[] {
  const list = Array.isArray(conditions) ? (conditions as Obj[]).map((c) => ({ ...c })) : [];
  const existing = list.find((c) => c.type === 'DisruptionAllowed');
  const next = {
    type: 'DisruptionAllowed',
    status: 'False',
    reason: 'InsufficientPods',
    message: '',
    observedGeneration: Number(generation ?? 0),
    lastTransitionTime: existing?.status === 'False' ? existing.lastTransitionTime : timestamp(),
  };
  return existing ? list.map((c) => (c === existing ? next : c)) : [...list, next];
}

/** `addConditionAndDeletePod`: the pod is marked `DisruptionTarget`, then deleted with the eviction's options. */
async function markAndDelete(
  rest: RestStorage,
  pods: ResourceType,
  namespace: string,
  name: string,
  params: DeleteParams,
  ctx: WriteContext,
): Promise<void> {
  let opts = params;
  if (!ctx.dryRun) {
    const current = rest.get(pods, namespace, name).object as Obj;
    const cm = current.metadata as Obj;
    const pre = params.preconditions;
    checkDeletePreconditions(pods, name, cm, pre);
    const next = clone(current) as Obj;
    if (!isObject(next.status)) next.status = {};
    const status = next.status as Obj;
    const conditions = Array.isArray(status.conditions) ? (status.conditions as Obj[]) : [];
    const condition = {
      type: 'DisruptionTarget',
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: timestamp(),
      reason: 'EvictionByEvictionAPI',
      message: 'Eviction API: evicting',
    };
    const at = conditions.findIndex((c) => c.type === 'DisruptionTarget');
    if (at < 0) conditions.push(condition);
    else if (conditions[at]!.status !== 'True') conditions[at] = condition;
    else conditions[at] = { ...conditions[at], reason: condition.reason, message: condition.message };
    status.conditions = conditions;
    const updated = await rest.update(pods, namespace, name, next, 'status', ctx);
    // The update moved the resourceVersion a precondition named: ours, so the delete expects the new one.
    if (pre?.resourceVersion) {
      opts = {
        ...params,
        preconditions: { ...pre, resourceVersion: String((updated.object.metadata as Obj).resourceVersion) },
      };
    }
  }
  await rest.delete(pods, namespace, name, opts, ctx);
}
