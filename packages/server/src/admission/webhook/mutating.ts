/**
 * MutatingAdmissionWebhook, as k8s.io/apiserver's `webhook/mutating` dispatcher runs it: the
 * matching webhooks are called one after the other, each seeing the object as the ones before
 * left it; a JSONPatch answer is applied and the object defaulted again (and, for a custom
 * resource, pruned at the end). A webhook that changed the object makes the admission chain run
 * its mutating plugins once more, where webhooks with `reinvocationPolicy: IfNeeded` that were
 * called before are called again (kube's reinvocation).
 */
import { ApiError } from 'kubeloop/api';
import { applyJsonPatch } from '../../patch/index.js';
import type { ResourceType } from '../../registry/types.js';
import { deepEqual, isObject, type Obj } from '../../util/object.js';
import {
  type AdmissionAttributes,
  admissionAttributes,
  isExemptAdmissionConfigurationResource,
} from '../matching.js';
import type { AdmissionOptions } from '../options.js';
import type { WebhookConfigurations } from './configurations.js';
import {
  CallingWebhookError,
  callWebhook,
  convertForMatch,
  type DispatcherDeps,
  failureOf,
  matchedAsRequested,
  observedCall,
  shouldCallHook,
  toStatusError,
} from './dispatcher.js';
import { decodePatch, UndecodablePatch } from './review.js';

/** The webhooks' part of kube's reinvocation context, kept across the chain's two passes. */
interface ReinvokeState {
  /** The object as the last pass of this plugin left it, to see whether others changed it since. */
  lastOutput?: Obj | undefined;
  /** IfNeeded webhooks called since the last change. */
  previouslyInvoked: Set<string>;
  /** Webhooks to call again in the reinvocation pass. */
  reinvoke: Set<string>;
}

const STATE_KEY = 'MutatingAdmissionWebhook';

type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** The mutating webhook plugin over `configs`. */
export function mutatingWebhooks(deps: DispatcherDeps, configs: WebhookConfigurations) {
  return (
    op: Operation,
    t: ResourceType,
    obj: Obj,
    old: Obj | undefined,
    options?: AdmissionOptions,
  ): Promise<void> | undefined => {
    const hooks = configs.get();
    if (hooks.length === 0) return undefined;
    const base = admissionAttributes(op, t, obj, old, options);
    if (isExemptAdmissionConfigurationResource(base)) return undefined;
    return dispatch(deps, hooks, t, base, obj, options);
  };
}

async function dispatch(
  deps: DispatcherDeps,
  hooks: ReturnType<WebhookConfigurations['get']>,
  t: ResourceType,
  base: AdmissionAttributes,
  obj: Obj,
  options: AdmissionOptions | undefined,
): Promise<void> {
  const scale = options?.scale;
  // kube's delete handler admits a DELETE before it reads the object: mutating webhooks see
  // neither object (validating ones get the old object).
  let current: Obj | undefined = base.operation === 'DELETE' ? undefined : scale ? scale.of(obj) : obj;
  const oldObject =
    base.operation === 'DELETE'
      ? undefined
      : scale && base.oldObject
        ? scale.of(base.oldObject)
        : base.oldObject;
  if (options && !options.reinvocation) {
    options.reinvocation = { shouldReinvoke: false, isReinvoke: false, values: new Map() };
  }
  const reinvocation = options?.reinvocation;
  let state = reinvocation?.values.get(STATE_KEY) as ReinvokeState | undefined;
  if (!state) {
    state = { previouslyInvoked: new Set(), reinvoke: new Set() };
    reinvocation?.values.set(STATE_KEY, state);
  }
  const isReinvoke = reinvocation?.isReinvoke === true;
  const requireReinvoking = (s: ReinvokeState) => {
    for (const uid of s.previouslyInvoked) s.reinvoke.add(uid);
    s.previouslyInvoked.clear();
  };
  // In-tree plugins changed the object since this plugin last ran: every eligible webhook again.
  if (isReinvoke && !deepEqual(state.lastOutput, current)) requireReinvoking(state);
  let dirty = false;
  const round = isReinvoke ? 1 : 0;
  try {
    for (const [index, entry] of hooks.entries()) {
      const attrs: AdmissionAttributes = {
        ...base,
        ...(current ? { object: current } : {}),
        ...(oldObject ? { oldObject } : {}),
      };
      if (!current) delete attrs.object;
      if (!oldObject) delete attrs.oldObject;
      const match = shouldCallHook(deps, entry, attrs);
      if (!match) continue;
      // A webhook is never called for the first time in the reinvocation pass.
      if (isReinvoke && !state.reinvoke.has(entry.uid)) continue;
      let applied: { operations: unknown[] } | undefined;
      const outcome = await observedCall(deps, entry, 'admit', base.operation, async () => {
        // The webhook sees, and patches, the object at the version it matched; the result is
        // converted back to the request's.
        const same = matchedAsRequested(t, match.resource);
        const versioned = same
          ? current
          : await convertForMatch(deps, current, t, match.resource, base.subresource);
        const oldVersioned = same
          ? oldObject
          : await convertForMatch(deps, oldObject, t, match.resource, base.subresource);
        const result = await callWebhook(deps, entry, true, attrs, match, versioned, oldVersioned, options);
        const matchedType =
          deps.registry.lookup(match.resource.group, match.resource.version, match.resource.resource) ?? t;
        const out = applyPatch(
          entry.webhook.name,
          result.patch,
          result.patchType,
          result.status,
          versioned,
          matchedType,
          scale !== undefined,
        );
        const patched = out?.patched;
        if (out) applied = { operations: out.operations };
        return versioned === current
          ? patched
          : convertForMatch(deps, patched, matchedType, base.resource, base.subresource);
      });
      const patched = outcome.value;
      const changed = patched !== undefined && !deepEqual(patched, current);
      annotate(options, round, index, entry, changed, applied?.operations);
      if (patched !== undefined) {
        current = patched;
        dirty = true;
      }
      if (changed) {
        requireReinvoking(state);
        if (reinvocation) reinvocation.shouldReinvoke = true;
      }
      if (entry.webhook.reinvocationPolicy === 'IfNeeded') state.previouslyInvoked.add(entry.uid);
      if (outcome.error !== undefined) {
        const err = failureOf(deps, entry, 'admit', outcome.error);
        if (err !== undefined) throw err;
      }
    }
  } finally {
    // Only a reinvocation pass reads it, and that pass calls only IfNeeded webhooks already
    // called: without any, the copy would never be read.
    const reinvocable = state.previouslyInvoked.size > 0 || state.reinvoke.size > 0;
    state.lastOutput = current === undefined || !reinvocable ? undefined : structuredClone(current);
  }
  if (!dirty || current === undefined) return;
  if (t.custom && !scale) t.custom.compiled.prune(current, { isResourceRoot: true });
  if (scale) {
    scale.apply(obj, current);
    return;
  }
  // The registry goes on with the object it passed in: the patched content replaces it. Keys
  // are deleted last first, which V8 undoes as map transitions: deleted first first, they turn
  // the object into a slow dictionary for everything after admission (storing it, encoding it,
  // the validating webhooks' reviews).
  const keys = Object.keys(obj);
  for (let i = keys.length - 1; i >= 0; i--) delete obj[keys[i] as string];
  Object.assign(obj, current);
}

/** kube's audit annotation keys of each mutating webhook call. */
const MUTATION_ANNOTATION_PREFIX = 'mutation.webhook.admission.k8s.io/';
const PATCH_ANNOTATION_PREFIX = 'patch.webhook.admission.k8s.io/';

/**
 * The audit annotations kube's mutating dispatcher adds for every call (`webhookAnnotator`):
 * `mutation.webhook.admission.k8s.io/round_<r>_index_<i>` (whether the object changed, even
 * when the call failed) and, when a patch was applied, `patch.webhook.admission.k8s.io/…` with
 * the patch (Go encodes each operation, a map, with sorted keys). `index` is the webhook's place
 * among all mutating webhooks, `round` 1 in the reinvocation pass.
 */
function annotate(
  options: AdmissionOptions | undefined,
  round: number,
  index: number,
  entry: { configurationName: string; webhook: { name: string } },
  mutated: boolean,
  patch: unknown[] | undefined,
): void {
  const annotations = options?.auditAnnotations;
  if (!annotations) return;
  const suffix = `round_${round}_index_${index}`;
  const who = { configuration: entry.configurationName, webhook: entry.webhook.name };
  annotations[`${MUTATION_ANNOTATION_PREFIX}${suffix}`] = JSON.stringify({ ...who, mutated });
  if (patch) {
    const sorted = patch.map((op) =>
      isObject(op)
        ? Object.fromEntries(Object.entries(op).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : op,
    );
    annotations[`${PATCH_ANNOTATION_PREFIX}${suffix}`] = JSON.stringify({
      ...who,
      patch: sorted,
      patchType: 'JSONPatch',
    });
  }
}

/**
 * Applies a mutating webhook's patch (evanphx/json-patch) and defaults the result again, as
 * kube's dispatcher decodes and defaults the patched object; with the operations decoded (the
 * audit annotation shows them). Undefined when there is nothing to apply.
 */
function applyPatch(
  name: string,
  patchB64: string | undefined,
  patchType: string | undefined,
  status: Obj | undefined,
  current: Obj | undefined,
  t: ResourceType,
  isScale: boolean,
): { patched: Obj; operations: unknown[] } | undefined {
  if (!patchB64) return undefined;
  let operations: unknown;
  try {
    operations = decodePatch(patchB64);
  } catch (err) {
    if (err instanceof UndecodablePatch) {
      throw new CallingWebhookError(
        name,
        `received undecodable patch in webhook response: ${err.message}`,
        503,
      );
    }
    throw err;
  }
  if (!Array.isArray(operations) || operations.length === 0) return undefined;
  if (!current) {
    throw ApiError.internal(
      `admission webhook "${name}" attempted to modify the object, which is not supported for this operation`,
    );
  }
  if (patchType !== 'JSONPatch') {
    throw new CallingWebhookError(
      name,
      `unsupported patch type "${patchType ?? ''}"`,
      toStatusError(name, status).code,
    );
  }
  let patched: unknown = current;
  for (const operation of operations) {
    try {
      patched = applyJsonPatch(patched, [operation], { fieldValidation: 'Ignore' });
    } catch {
      throw ApiError.internal(patchFailure(operation));
    }
  }
  if (!isObject(patched)) {
    throw ApiError.internal(
      `json: cannot unmarshal ${Array.isArray(patched) ? 'array' : typeof patched} into Go value of type ${isScale ? 'v1.Scale' : `${t.version}.${t.kind}`}`,
    );
  }
  if (patched.kind !== current.kind || patched.apiVersion !== current.apiVersion) {
    // The patched JSON is decoded into the request's type: another kind does not fit it.
    throw ApiError.internal(
      `unable to decode the patched object: expected ${String(current.apiVersion)}, Kind=${String(current.kind)}, got ${String(patched.apiVersion)}, Kind=${String(patched.kind)}`,
    );
  }
  if (!isObject(patched.metadata)) {
    throw ApiError.internal(
      `json: cannot unmarshal ${typeof patched.metadata} into Go struct field ${t.kind}.metadata of type v1.ObjectMeta`,
    );
  }
  if (!isScale) t.behaviour.defaults?.(patched);
  return { patched, operations };
}

/** evanphx/json-patch's error for an operation it cannot apply. */
function patchFailure(operation: unknown): string {
  const op = isObject(operation) && typeof operation.op === 'string' ? operation.op : '';
  const path = isObject(operation) && typeof operation.path === 'string' ? operation.path : '';
  switch (op) {
    case 'add':
      return `add operation does not apply: doc is missing path: "${path}": missing value`;
    case 'remove':
      return `remove operation does not apply: doc is missing path: "${path}": missing value`;
    case 'replace':
      return `replace operation does not apply: doc is missing key: ${path}: missing value`;
    case 'test':
      return `testing value ${path} failed: test failed`;
    case 'move':
    case 'copy':
      return `${op} operation does not apply: doc is missing from path: ${String((operation as Obj).from ?? '')}: missing value`;
    default:
      return `Unexpected kind: ${op}`;
  }
}
