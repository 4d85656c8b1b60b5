/**
 * CRD conversion, hub and spoke as controller-runtime does it: one version is the hub, every
 * other version (a spoke) says how to go to the hub and back, and any spoke-to-spoke conversion
 * goes through the hub. The server answers `ConversionReview`s at `/convert` with it.
 */
import type { KubeObject } from '../client/types.js';
import type { ResourceDefinition } from '../schema/define/resource.js';

/** How one spoke version converts to the hub and back. */
export interface Spoke<S, H> {
  /** The spoke object as the hub version (apiVersion, kind and, when left out, metadata are filled in). */
  toHub(obj: S): H | Omit<H, 'apiVersion' | 'kind' | 'metadata'>;
  /** The hub object as this spoke version. */
  fromHub(hub: H): S | Omit<S, 'apiVersion' | 'kind' | 'metadata'>;
}

/** The conversion of a resource: its hub version and every other version's spoke. */
export type ConversionSpec<VS extends Record<string, KubeObject>, H extends keyof VS & string> = {
  readonly hub: H;
  readonly spokes: { readonly [N in Exclude<keyof VS & string, H>]: Spoke<VS[N], VS[H]> };
};

/** A resource's registered conversion, as the server and {@link expectRoundTrip} use it. */
export interface ConversionWebhook {
  readonly group: string;
  readonly kind: string;
  readonly hub: string;
  readonly versions: readonly string[];
  /** Converts one object to `desiredApiVersion`; throws with controller-runtime's messages. */
  convert(obj: KubeObject, desiredApiVersion: string): KubeObject;
}

const registered = new WeakMap<object, ConversionWebhook>();

const versionOf = (apiVersion: string): string => apiVersion.slice(apiVersion.indexOf('/') + 1);

/**
 * Declares how the versions of `resource` convert, with `hub` as the hub: each other version
 * gives `toHub` and `fromHub`. Register the result on a `WebhookServer`; the CRD of the resource
 * must name the conversion webhook (`withConversionWebhook` in `kubeloop/manifests`).
 *
 * @example
 * ```ts
 * export const fooConversion = conversion(Foo, {
 *   hub: 'v1',
 *   spokes: {
 *     v1alpha1: {
 *       toHub: (old) => ({ metadata: old.metadata, spec: { replicas: old.spec.size } }),
 *       fromHub: (hub) => ({ metadata: hub.metadata, spec: { size: hub.spec.replicas } }),
 *     },
 *   },
 * });
 * ```
 */
export function conversion<
  T extends KubeObject,
  VS extends Record<string, KubeObject>,
  const H extends keyof VS & string,
>(resource: ResourceDefinition<T, VS>, spec: ConversionSpec<VS, H>): ConversionWebhook {
  const { group, kind } = resource;
  const versions = resource.versions;
  if (!versions.includes(spec.hub))
    throw new TypeError(`${kind}: the hub ${spec.hub} is not one of its versions (${versions.join(', ')})`);
  const spokes = spec.spokes as Record<string, Spoke<KubeObject, KubeObject>>;
  for (const v of versions)
    if (v !== spec.hub && !spokes[v])
      throw new TypeError(`${kind}: version ${v} has no toHub/fromHub (the hub is ${spec.hub})`);
  // Go's %T of the objects, so that errors read as controller-runtime's.
  const typeName = (version: string) => `*${version}.${kind}`;
  // The target version's identity always wins over anything the function copied; metadata
  // left out is the source's.
  const finish = (out: object, source: KubeObject, version: string): KubeObject => {
    const { apiVersion: _a, kind: _k, ...rest } = out as KubeObject;
    return {
      apiVersion: `${group}/${version}`,
      kind,
      ...(!('metadata' in out) && source.metadata !== undefined && { metadata: source.metadata }),
      ...rest,
    };
  };
  const webhook: ConversionWebhook = {
    group,
    kind,
    hub: spec.hub,
    versions,
    convert(obj, desiredApiVersion) {
      const desired = versionOf(desiredApiVersion);
      const from = versionOf(obj.apiVersion ?? '');
      const desiredGroup = desiredApiVersion.includes('/') ? desiredApiVersion.split('/')[0] : '';
      const fromGroup = (obj.apiVersion ?? '').includes('/') ? (obj.apiVersion ?? '').split('/')[0] : '';
      if (!versions.includes(desired) || desiredGroup !== group)
        throw new Error(`no kind "${kind}" is registered for version "${desiredApiVersion}"`);
      if (!versions.includes(from) || fromGroup !== group || obj.kind !== kind)
        throw new Error(`no kind "${obj.kind}" is registered for version "${obj.apiVersion}"`);
      if (from === desired) throw new Error(`conversion is not allowed between same type ${typeName(from)}`);
      const hub = from === spec.hub ? obj : finish(spokes[from]!.toHub(obj), obj, spec.hub);
      if (desired === spec.hub) return hub;
      return finish(spokes[desired]!.fromHub(hub), hub, desired);
    },
  };
  registered.set(resource, webhook);
  return webhook;
}

/** The conversion registered for a resource with {@link conversion}, if any. */
export const conversionOf = (resource: ResourceDefinition): ConversionWebhook | undefined =>
  registered.get(resource);

/** `apiextensions.k8s.io/v1` ConversionReview. */
export interface ConversionReview {
  apiVersion: string;
  kind: 'ConversionReview';
  request?: { uid: string; desiredAPIVersion: string; objects: KubeObject[] };
  response?: {
    uid: string;
    convertedObjects?: KubeObject[];
    result: { status: 'Success' | 'Failure'; message?: string };
  };
}

/**
 * Answers a ConversionReview as controller-runtime's conversion webhook does: every object
 * converted (via the hub), or a Failure result with the first error's message and no objects.
 * Returns undefined for a review without a request (the server answers 400 then).
 */
export function answerConversion(
  conversions: readonly ConversionWebhook[],
  review: ConversionReview,
): ConversionReview | undefined {
  const req = review.request;
  if (!req || typeof req !== 'object') return undefined;
  let response: NonNullable<ConversionReview['response']>;
  try {
    const converted = (req.objects ?? []).map((obj) => {
      const group = (obj.apiVersion ?? '').split('/')[0];
      const c = conversions.find((w) => w.group === group && w.kind === obj.kind);
      if (!c) throw new Error(`no kind "${obj.kind}" is registered for version "${obj.apiVersion}"`);
      return c.convert(obj, req.desiredAPIVersion);
    });
    response = { uid: req.uid, convertedObjects: converted, result: { status: 'Success' } };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    response = { uid: req.uid, result: { status: 'Failure', message } };
  }
  return { apiVersion: review.apiVersion ?? 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response };
}

function sortedJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );
}

/**
 * For tests: converts each sample to every other version of its resource and back, and throws
 * when an object does not come back equal (a field a version cannot hold is lost unless the
 * conversion keeps it, e.g. in an annotation — controller-runtime's lossless round-trip rule).
 *
 * @param resource a resource given a {@link conversion}, or the conversion itself.
 * @example
 * ```ts
 * it('round-trips', () => expectRoundTrip(Foo, [fooV1alpha1Sample, fooV1Sample]));
 * ```
 */
export function expectRoundTrip(
  resource: ResourceDefinition | ConversionWebhook,
  samples: readonly KubeObject[],
): void {
  const c = 'convert' in resource ? resource : conversionOf(resource);
  if (!c)
    throw new Error(`${resource.kind} has no conversion: declare it with conversion(${resource.kind}, …)`);
  for (const sample of samples) {
    const from = sample.apiVersion ?? '';
    for (const v of c.versions) {
      const to = `${c.group}/${v}`;
      if (to === from) continue;
      const there = c.convert(structuredClone(sample), to);
      const back = c.convert(structuredClone(there), from);
      if (sortedJson(back) !== sortedJson(sample))
        throw new Error(
          `${c.kind} ${sample.metadata?.name ?? ''} does not round-trip ${from} → ${to} → ${from}:\n` +
            `  expected ${sortedJson(sample)}\n  received ${sortedJson(back)}\n  (via ${sortedJson(there)})`,
        );
    }
  }
}
