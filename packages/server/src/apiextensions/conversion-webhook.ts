/**
 * Conversion of custom resources through a CRD's conversion webhook (`spec.conversion.strategy:
 * Webhook`), as apiextensions-apiserver's `webhookConverter` does: one `ConversionReview` (the
 * first of `conversionReviewVersions` this server speaks: `v1` or `v1beta1`) carrying every
 * object that is not at the desired version yet, its answer checked (kind and apiVersion of the
 * review, `uid`, `result.status`, the number of objects, each object's apiVersion, kind, name,
 * namespace and uid), and the converted objects given back the metadata of the originals except
 * their labels and annotations (`restoreObjectMeta`). Failures are worded as kube words them
 * (`conversion webhook for <group>/<version>, Kind=<Kind> failed: …`).
 */
import { randomUUID } from 'node:crypto';
import { aggregateCauses, validateAnnotations, validateLabels } from 'kubeloop/api';
import {
  EncodedJson,
  WebhookCallError,
  type WebhookCaller,
  type WebhookClientConfig,
} from '../admission/webhook/client.js';
import type { ResourceType } from '../registry/types.js';
import { isObject, type Obj } from '../util/object.js';
import type { ConversionFailure, ConversionObservation } from './conversion-metrics.js';

/** kube's conversion webhooks are called with a 30 s timeout (the `?timeout=30s` of their URLs). */
const TIMEOUT_SECONDS = 30;

/** How a served type's objects reach its CRD's conversion webhook. */
export interface ConversionWebhook {
  clientConfig: WebhookClientConfig;
  conversionReviewVersions: readonly string[];
  caller: WebhookCaller;
  /** The CRD's name, for the metrics. */
  crdName?: string;
  /** Records each call (the control plane's metrics). */
  observe?: (o: ConversionObservation) => void;
}

const webhooks = new WeakMap<ResourceType, ConversionWebhook>();

/** Binds a served type of a CRD with `Webhook` conversion to its webhook (the CRD controller does). */
export function attachConversionWebhook(t: ResourceType, webhook: ConversionWebhook): void {
  webhooks.set(t, webhook);
}

/** A conversion failure: answered as kube-apiserver answers an error that is not a Status (500, no reason). */
export class ConversionError extends Error {
  override name = 'ConversionError';
}

/** `GroupVersionKind.String()`: `group/version, Kind=Kind`. */
function gvkText(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  const gv = slash >= 0 ? apiVersion : `/${apiVersion}`;
  return `${gv}, Kind=${kind}`;
}

/**
 * The `ConversionReview` of the first review version this server speaks; with `encoded` (the
 * objects' JSON), put together as text, as JSON.stringify would write the same review.
 */
function reviewFor(
  versions: readonly string[],
  objects: Obj[],
  desired: string,
  uid: string,
  encoded: readonly string[] | undefined,
) {
  for (const v of versions) {
    if (v === 'v1' || v === 'v1beta1') {
      if (encoded) {
        const head =
          `{"kind":"ConversionReview","apiVersion":"apiextensions.k8s.io/${v}",` +
          `"request":{"uid":${JSON.stringify(uid)},"desiredAPIVersion":${JSON.stringify(desired)},"objects":[`;
        const tail = ']},"response":{"uid":"","convertedObjects":null,"result":{"metadata":{}}}}';
        return { version: v, body: new EncodedJson(head, encoded, tail) };
      }
      return {
        version: v,
        body: {
          kind: 'ConversionReview',
          apiVersion: `apiextensions.k8s.io/${v}`,
          request: { uid, desiredAPIVersion: desired, objects },
          // Go serializes the empty response the review is created with.
          response: { uid: '', convertedObjects: null, result: { metadata: {} } },
        },
      };
    }
  }
  return undefined;
}

/** Go's message for decoding a JSON value that is not an object into `map[string]interface{}`. */
function notAnObject(v: unknown): string {
  const type =
    v === null
      ? 'null'
      : Array.isArray(v)
        ? 'array'
        : typeof v === 'number'
          ? 'number'
          : typeof v === 'boolean'
            ? 'bool'
            : typeof v;
  return `json: cannot unmarshal ${type} into Go value of type map[string]interface {}`;
}

/** `getRawExtensionObject`: an object with a kind, or the decoder's error. */
function rawObject(v: unknown): Obj | string {
  if (!isObject(v)) return notAnObject(v);
  if (typeof v.kind !== 'string' || v.kind === '')
    return `Object 'Kind' is missing in '${JSON.stringify(v)}'`;
  return v;
}

/** `getConvertedObjectsFromResponse`: the converted objects, or why the answer is refused. */
function convertedObjects(version: string, uid: string, answer: unknown): unknown[] | string {
  const review = isObject(answer) ? answer : {};
  if (version === 'v1') {
    const got = gvkText(String(review.apiVersion ?? ''), String(review.kind ?? ''));
    const want = 'apiextensions.k8s.io/v1, Kind=ConversionReview';
    if (got !== want) return `expected webhook response of ${want}, got ${got}`;
  }
  const response = review.response;
  if (!isObject(response)) return 'no response provided';
  // v1beta1 reviews were never checked for their uid; kube keeps that for compatibility.
  if (version === 'v1' && (response.uid ?? '') !== uid)
    return `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(response.uid ?? ''))}`;
  const result = isObject(response.result) ? response.result : {};
  if (result.status !== 'Success') {
    if (typeof result.message === 'string' && result.message) return result.message;
    return `response.result.status was '${String(result.status ?? '')}', not 'Success'`;
  }
  return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
}

/** `validateConvertedObject`: the converted object is the same object. */
function sameObject(original: Obj, converted: Obj): string | undefined {
  const om = isObject(original.metadata) ? original.metadata : {};
  const cm = isObject(converted.metadata) ? converted.metadata : {};
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  if (s(original.kind) !== s(converted.kind))
    return `must have the same kind: ${s(original.kind)} != ${s(converted.kind)}`;
  if (s(om.name) !== s(cm.name)) return `must have the same name: ${s(om.name)} != ${s(cm.name)}`;
  if (s(om.namespace) !== s(cm.namespace))
    return `must have the same namespace: ${s(om.namespace)} != ${s(cm.namespace)}`;
  if (s(om.uid) !== s(cm.uid)) return `must have the same UID: ${s(om.uid)} != ${s(cm.uid)}`;
  return undefined;
}

/**
 * `restoreObjectMeta`: the converted object gets the original's metadata, except the labels and
 * annotations the webhook answered (checked as labels and annotations when they changed).
 */
function restoreObjectMeta(original: Obj, converted: Obj): string | undefined {
  const answered = converted.metadata;
  if (answered === undefined) return 'missing metadata in converted object';
  if (!isObject(answered)) return `invalid metadata of type ${goType(answered)} in converted object`;
  // The original is the caller's own copy: its metadata is handed over, not copied again.
  const restored: Obj = isObject(original.metadata) ? { ...original.metadata } : {};
  for (const field of ['labels', 'annotations'] as const) {
    const value = answered[field];
    if (value === undefined || value === null) {
      delete restored[field];
      continue;
    }
    if (!isObject(value)) return `invalid metadata.${field} of type ${goType(value)} in converted object`;
    const before = isObject(restored[field]) ? (restored[field] as Obj) : {};
    let changed = Object.keys(before).length !== Object.keys(value).length;
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string')
        return `metadata.${field}[${k}] must be a string, but is ${goType(v)} in converted object`;
      if (before[k] !== v) changed = true;
    }
    if (changed) {
      const pairs = value as Record<string, string>;
      const causes =
        field === 'labels'
          ? validateLabels(pairs, 'metadata.labels')
          : validateAnnotations(pairs, 'metadata.annotation');
      if (causes.length > 0) return aggregateCauses(causes);
    }
    restored[field] = value;
  }
  converted.metadata = restored;
  return undefined;
}

/** The Go type a JSON value decodes to, as `%T` prints it. */
function goType(v: unknown): string {
  if (v === null) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'boolean') return 'bool';
  return 'map[string]interface {}';
}

/**
 * Converts `objects` (at versions of `t`'s CRD; only read) to
 * `desired` through the webhook, in one review; objects already at that version are not sent.
 * `encoded`, when given, holds each object's JSON, sent as it is.
 * Returns the converted objects in order; rejects with a {@link ConversionError} worded as kube
 * 1.32's. kube-apiserver 1.32 decodes (so converts) the objects of a list one by one, so
 * failures are worded as its converter words them for one object, for the first object that fails.
 */
export async function convertThroughWebhook(
  t: ResourceType,
  objects: Obj[],
  desired: string,
  encoded?: readonly string[],
): Promise<Obj[]> {
  const toSend = objects.filter((o) => o.apiVersion !== desired);
  const toSendEncoded = encoded?.filter((_, n) => objects[n]!.apiVersion !== desired);
  if (toSend.length === 0) return objects;
  const first = toSend[0]!;
  const gvk = gvkText(String(first.apiVersion ?? ''), t.kind);
  const fail = (msg: string) => new ConversionError(msg);
  const webhook = webhooks.get(t);
  if (!webhook) throw fail(`conversion webhook for ${gvk} failed: no conversion webhook is configured`);
  const uid = randomUUID();
  const review = reviewFor(webhook.conversionReviewVersions, toSend, desired, uid, toSendEncoded);
  if (!review) throw fail('no supported conversion review versions');
  const start = performance.now();
  const versionOf = (apiVersion: unknown) => String(apiVersion ?? '').replace(/^.*\//, '');
  /** Records the call in the metrics (a failure when `failure` is given). */
  const record = (failure?: ConversionFailure) =>
    webhook.observe?.({
      crdName: webhook.crdName ?? '',
      fromVersion: versionOf(first.apiVersion),
      toVersion: versionOf(desired),
      seconds: (performance.now() - start) / 1000,
      ...(failure && { failure }),
    });
  const failed = (failure: ConversionFailure, msg: string) => {
    record(failure);
    return fail(msg);
  };
  // Refusals of a converted object (the metrics' invalid converted object failures).
  const invalid = (msg: string) => failed('conversion_webhook_invalid_converted_object_failure', msg);
  let answer: unknown;
  try {
    answer = await webhook.caller.post(webhook.clientConfig, review.body, {
      timeoutSeconds: TIMEOUT_SECONDS,
    });
  } catch (err) {
    const msg = err instanceof WebhookCallError || err instanceof Error ? err.message : String(err);
    throw failed('conversion_webhook_call_failure', `conversion webhook for ${gvk} failed: ${msg}`);
  }
  const converted = convertedObjects(review.version, uid, answer);
  if (typeof converted === 'string')
    throw failed(
      'conversion_webhook_malformed_response_failure',
      `conversion webhook for ${gvk} failed: ${converted}`,
    );
  if (converted.length !== toSend.length)
    throw failed(
      'conversion_webhook_partial_response_failure',
      `conversion webhook for ${gvk} returned ${converted.length} objects, expected ${toSend.length}`,
    );
  const desiredGv = desired;
  const out: Obj[] = [];
  let index = 0;
  for (const original of objects) {
    if (original.apiVersion === desired) {
      out.push(original);
      continue;
    }
    const raw = rawObject(converted[index]);
    if (typeof raw === 'string') throw invalid(raw);
    index++;
    const gv = typeof raw.apiVersion === 'string' ? raw.apiVersion : '';
    if (gv !== desiredGv)
      throw invalid(
        `conversion webhook for ${gvk} returned invalid object at index 0: invalid groupVersion (expected ${desiredGv}, received ${gv})`,
      );
    if (raw.kind !== original.kind)
      throw invalid(
        `conversion webhook for ${gvk} returned invalid object at index 0: invalid kind (expected ${String(original.kind)}, received ${String(raw.kind)})`,
      );
    const bad = sameObject(original, raw);
    if (bad) throw invalid(`conversion webhook for ${gvk} returned invalid object: ${bad}`);
    const badMeta = restoreObjectMeta(original, raw);
    if (badMeta) throw invalid(`conversion webhook for ${gvk} returned invalid metadata: ${badMeta}`);
    out.push(raw);
  }
  record();
  return out;
}
