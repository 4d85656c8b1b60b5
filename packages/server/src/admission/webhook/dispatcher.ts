/**
 * What the mutating and validating webhook dispatchers share, after k8s.io/apiserver's
 * `webhook/generic` (`ShouldCallHook`) and the call half of `mutating`/`validating`'s
 * dispatchers: which webhooks a request reaches, the call itself (dry run vs side effects,
 * AdmissionReview version, timeout), its answer's checks, warnings and audit annotations, and
 * the errors kube reports for each way a call fails.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from 'kubeloop/api';
import { present, toStorageVersion } from '../../apiextensions/conversion.js';
import type { Registry } from '../../registry/registry.js';
import type { ResourceType } from '../../registry/types.js';
import type { Store } from '../../storage/store.js';
import type { KubeObject } from '../../storage/types.js';
import { isObject, type Obj } from '../../util/object.js';
import {
  type AdmissionAttributes,
  type EquivalentResources,
  type GroupVersionResource,
  matchesNamespaceSelector,
  matchesObjectSelector,
  matchWebhookRules,
  type RuleMatch,
} from '../matching.js';
import type { AdmissionOptions } from '../options.js';
import { WebhookCallError, type WebhookCaller } from './client.js';
import type { WebhookEntry } from './configurations.js';
import type { WebhookMetrics, WebhookStep } from './metrics.js';
import {
  type AdmissionResult,
  admissionReview,
  InvalidResponse,
  reviewVersion,
  UndecodableResponse,
  verifyAdmissionResponse,
} from './review.js';

/**
 * Evaluates a webhook's `matchConditions` against a request (kube's `matchconditions.Matcher`):
 * false when one is false, an error (with failurePolicy Fail) when one failed and none is false.
 */
export type MatchConditionsEvaluator = (
  entry: WebhookEntry,
  attrs: AdmissionAttributes,
  match: RuleMatch,
) => { matches: boolean; error?: string };

/** What the dispatchers need of the server. */
export interface DispatcherDeps {
  store: Store;
  registry: Registry;
  equivalents: EquivalentResources;
  caller: WebhookCaller;
  metrics: WebhookMetrics;
  matchConditions?: MatchConditionsEvaluator;
}

/**
 * A failure to call a webhook (kube's `ErrCallingWebhook`): subject to the webhook's
 * failurePolicy. `status` is the HTTP code the metrics record.
 */
export class CallingWebhookError extends Error {
  constructor(
    readonly webhookName: string,
    readonly reason: string,
    readonly status: number,
  ) {
    super(`failed calling webhook "${webhookName}": ${reason}`);
  }

  /** The error a request fails with when the webhook's failurePolicy is Fail. */
  toApiError(): ApiError {
    return ApiError.internal(this.message);
  }
}

/** A webhook's denial (kube's `ErrWebhookRejection`), as the Status the request fails with. */
export class WebhookRejection extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

/**
 * A denial's Status (`webhookerrors.ToStatusErr`): the webhook's code (at least 400) and reason,
 * and its message after `admission webhook "<name>" denied the request`.
 */
export function toStatusError(webhookName: string, result: Obj | undefined): ApiError {
  const deniedBy = `admission webhook "${webhookName}" denied the request`;
  const s = result ?? {};
  const code = typeof s.code === 'number' && s.code >= 400 ? Math.trunc(s.code) : 400;
  const message =
    typeof s.message === 'string' && s.message
      ? `${deniedBy}: ${s.message}`
      : typeof s.reason === 'string' && s.reason
        ? `${deniedBy}: ${s.reason}`
        : `${deniedBy} without explanation`;
  return new ApiError({
    code,
    reason: (typeof s.reason === 'string' ? s.reason : '') as ApiError['status']['reason'],
    message,
    ...(isObject(s.details) && { details: s.details as ApiError['status']['details'] }),
  });
}

/**
 * Whether `entry` is called for the request (`ShouldCallHook`): namespace and object selectors,
 * then rules and matchPolicy, then matchConditions. Selector errors only count for a webhook
 * whose rules match. Throws the request's error (a missing namespace's 404, a failed match
 * condition's 403).
 */
export function shouldCallHook(
  deps: DispatcherDeps,
  entry: WebhookEntry,
  attrs: AdmissionAttributes,
): RuleMatch | undefined {
  const hook = entry.webhook;
  let nsError: unknown;
  let objError: unknown;
  let matches = true;
  try {
    matches = matchesNamespaceSelector(hook.namespaceSelector, attrs, deps.store);
  } catch (err) {
    nsError = err;
  }
  if (!matches && nsError === undefined) return undefined;
  try {
    matches = matchesObjectSelector(hook.objectSelector, attrs);
  } catch (err) {
    objError = err;
  }
  if (!matches && objError === undefined) return undefined;
  const match = matchWebhookRules(hook.rules, hook.matchPolicy ?? 'Equivalent', attrs, deps.equivalents);
  if (!match) return undefined;
  if (nsError !== undefined) throw nsError;
  if (objError !== undefined) throw objError;
  if ((hook.matchConditions?.length ?? 0) > 0 && deps.matchConditions) {
    const result = deps.matchConditions(entry, attrs, match);
    if (result.error !== undefined) {
      throw ApiError.forbidden(
        { group: attrs.resource.group, resource: attrs.resource.resource },
        attrs.name,
        result.error,
      );
    }
    if (!result.matches) return undefined;
  }
  return match;
}

/**
 * Whether a webhook matched the request as its own resource (nearly every call): then
 * {@link convertForMatch} has nothing to do, and callers skip its promise.
 */
export function matchedAsRequested(from: ResourceType, to: GroupVersionResource): boolean {
  return from.group === to.group && from.version === to.version && from.resource === to.resource;
}

/**
 * Converts an object of the request's type to the type a webhook matched the request as (an
 * equivalent resource: another version of a custom resource, a kind sharing another's storage),
 * through the storage version as kube's versioned attributes do. A Scale stays a Scale.
 */
export async function convertForMatch(
  deps: DispatcherDeps,
  obj: Obj | undefined,
  from: ResourceType,
  to: GroupVersionResource,
  subresource: string,
): Promise<Obj | undefined> {
  if (!obj || subresource === 'scale') return obj;
  if (matchedAsRequested(from, to)) return obj;
  const target = deps.registry.lookup(to.group, to.version, to.resource);
  if (!target) return obj;
  const copy = structuredClone(obj);
  // Through the storage version, with the CRD's conversion webhook when it has one.
  await toStorageVersion(from, copy);
  const view = await present(target, {
    key: '',
    object: copy as KubeObject,
    revision: 0,
    json: JSON.stringify(copy),
  });
  // Views may be frozen and shared: the dispatcher gets its own copy to patch and hand back.
  return structuredClone(view.object as Obj);
}

/**
 * Calls one webhook with the objects as its matched version sees them, and checks its answer;
 * records its warnings and audit annotations. Throws
 * {@link CallingWebhookError} for a failed call or an invalid answer, an ApiError (400) for a
 * dry run it may not see, and {@link WebhookRejection} for a denial.
 */
export async function callWebhook(
  deps: DispatcherDeps,
  entry: WebhookEntry,
  mutating: boolean,
  attrs: AdmissionAttributes,
  match: RuleMatch,
  object: Obj | undefined,
  oldObject: Obj | undefined,
  options: AdmissionOptions | undefined,
): Promise<AdmissionResult> {
  const hook = entry.webhook;
  if (attrs.dryRun) {
    if (hook.sideEffects === undefined)
      throw new CallingWebhookError(hook.name, 'Webhook SideEffects is nil', 400);
    if (hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') {
      throw ApiError.badRequest(`admission webhook "${hook.name}" does not support dry run`);
    }
  }
  const version = reviewVersion(hook.admissionReviewVersions);
  if (!version) {
    throw new CallingWebhookError(
      hook.name,
      'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)',
      400,
    );
  }
  const uid = randomUUID();
  const review = admissionReview(version, uid, attrs, match, object, oldObject);
  let body: unknown;
  try {
    body = await deps.caller.post(hook.clientConfig, review, { timeoutSeconds: hook.timeoutSeconds ?? 10 });
  } catch (err) {
    if (err instanceof WebhookCallError) {
      throw new CallingWebhookError(
        hook.name,
        `failed to call webhook: ${err.message}`,
        err.statusCode ?? 503,
      );
    }
    throw err;
  }
  let result: AdmissionResult;
  try {
    result = verifyAdmissionResponse(version, uid, mutating, body);
  } catch (err) {
    if (err instanceof UndecodableResponse) {
      throw new CallingWebhookError(hook.name, `failed to call webhook: ${err.message}`, 503);
    }
    if (err instanceof InvalidResponse) {
      throw new CallingWebhookError(hook.name, `received invalid webhook response: ${err.message}`, 503);
    }
    throw err;
  }
  if (options?.auditAnnotations) {
    for (const [k, v] of Object.entries(result.auditAnnotations))
      options.auditAnnotations[`${hook.name}/${k}`] = v;
  }
  if (options?.warnings) options.warnings.push(...result.warnings);
  if (!result.allowed) throw new WebhookRejection(toStatusError(hook.name, result.status));
  return result;
}

/**
 * Times one call and records it in the metrics as kube's dispatchers do; returns the call's
 * outcome, or its error (never throws).
 */
export async function observedCall<T>(
  deps: DispatcherDeps,
  entry: WebhookEntry,
  step: WebhookStep,
  operation: string,
  call: () => Promise<T>,
): Promise<{ value?: T; error?: unknown }> {
  const start = performance.now();
  const name = entry.webhook.name;
  const ignore = entry.webhook.failurePolicy === 'Ignore';
  const seconds = () => (performance.now() - start) / 1000;
  try {
    const value = await call();
    deps.metrics.observe(name, step, operation, seconds(), false, 200);
    return { value };
  } catch (error) {
    if (error instanceof CallingWebhookError) {
      if (!ignore) deps.metrics.reject(name, step, operation, 'calling_webhook_error', error.status);
      deps.metrics.observe(name, step, operation, seconds(), !ignore, error.status);
    } else if (error instanceof WebhookRejection) {
      deps.metrics.reject(name, step, operation, 'no_error', error.error.code);
      deps.metrics.observe(name, step, operation, seconds(), true, error.error.code);
    } else {
      deps.metrics.reject(name, step, operation, 'apiserver_internal_error', 0);
      deps.metrics.observe(name, step, operation, seconds(), true, 0);
    }
    return { error };
  }
}

/**
 * The request's error for a failed call, or undefined when the webhook's failurePolicy ignores
 * it (counted as failed open).
 */
export function failureOf(
  deps: DispatcherDeps,
  entry: WebhookEntry,
  step: WebhookStep,
  error: unknown,
): unknown {
  if (error instanceof CallingWebhookError) {
    if (entry.webhook.failurePolicy === 'Ignore') {
      deps.metrics.failedOpen(entry.webhook.name, step);
      return undefined;
    }
    return error.toApiError();
  }
  if (error instanceof WebhookRejection) return error.error;
  return error;
}
