/** Content negotiation: what representation the client asked for in `Accept`. */
import { ApiError } from 'kubeloop/api';

export type Representation =
  | { as: 'object' }
  | { as: 'Table' }
  | { as: 'PartialObjectMetadata' }
  | { as: 'PartialObjectMetadataList' }
  | { as: 'APIGroupDiscoveryList'; version: string };

interface MediaRange {
  type: string;
  params: Map<string, string>;
}

function parseAccept(accept: string | undefined): MediaRange[] {
  if (!accept) return [{ type: '*/*', params: new Map() }];
  return accept.split(',').map((part) => {
    const [type = '', ...rest] = part.split(';').map((s) => s.trim());
    const params = new Map<string, string>();
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq > 0) params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim());
    }
    return { type: type.toLowerCase(), params };
  });
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** What the built-in kinds' go-restful routes produce, parameters aside (and what matches anything). */
const ROUTE_PRODUCES = new Set(['*/*', 'application/json', 'application/yaml', PROTOBUF]);
const JSONISH = new Set(['application/json', 'application/*', '*/*', 'application/yaml']);

/**
 * Picks the first acceptable representation, in the client's order. Returns undefined when
 * nothing acceptable is offered (e.g. only protobuf), which the caller answers with 406.
 */
export function negotiate(
  accept: string | undefined,
  offers: { table: boolean; metadata: boolean; list: boolean; discovery?: boolean; protobuf?: boolean },
): { representation: Representation; yaml: boolean; protobuf?: boolean } | undefined {
  // What clients send on nearly every request, answered without parsing.
  if (!accept || accept === 'application/json' || accept === '*/*')
    return { representation: { as: 'object' }, yaml: false };
  for (const range of parseAccept(accept)) {
    // Objects of the built-in kinds have a protobuf encoding (custom resources have none, and
    // the Table and metadata-only views are answered in JSON here).
    if (range.type === PROTOBUF && offers.protobuf && !range.params.has('as') && !range.params.has('stream'))
      return { representation: { as: 'object' }, yaml: false, protobuf: true };
    if (!JSONISH.has(range.type)) continue;
    const yaml = range.type === 'application/yaml';
    const as = range.params.get('as');
    const g = range.params.get('g');
    const v = range.params.get('v');
    if (!as) return { representation: { as: 'object' }, yaml };
    if (as === 'Table' && g === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1') && offers.table) {
      return { representation: { as: 'Table' }, yaml };
    }
    // The metadata-only views are chosen as asked; whether the answer is a list is checked by
    // the caller, as the handlers' transform does (a 406 naming the Go type when it does not fit).
    if (
      (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') &&
      g === 'meta.k8s.io' &&
      (v === 'v1' || v === 'v1beta1') &&
      offers.metadata
    ) {
      return { representation: { as }, yaml };
    }
    if (
      as === 'APIGroupDiscoveryList' &&
      g === 'apidiscovery.k8s.io' &&
      (v === 'v2' || v === 'v2beta1') &&
      offers.discovery
    ) {
      return { representation: { as: 'APIGroupDiscoveryList', version: v }, yaml };
    }
  }
  return undefined;
}

/** The negotiated answer of a resource request: its representation and serialization. */
export type Negotiated = { representation: Representation; yaml: boolean; protobuf?: boolean };

/**
 * The representation of a resource request's answer (objects, lists, Tables, metadata), or a 406
 * listing what the server could answer. Negotiated once per request, before anything is stored.
 */
export function negotiateResource(
  accept: string | undefined,
  list: boolean,
  protobuf = false,
  custom = false,
): Negotiated {
  // go-restful's route check before any of the apiserver's own: a built-in kind's routes produce
  // JSON, YAML and protobuf, and an Accept naming none of them (nor */*) is its bare 406. The CRD
  // handler has no such routes.
  if (!custom && accept && !parseAccept(accept).some((r) => ROUTE_PRODUCES.has(r.type)))
    throw new ApiError({ code: 406, reason: 'NotAcceptable', message: '406: Not Acceptable', details: {} });
  const neg = negotiate(accept, { table: true, metadata: true, list, protobuf });
  if (!neg) {
    // Custom resources have no protobuf serializer.
    throw ApiError.notAcceptable(
      `only the following media types are accepted: application/json, application/yaml${custom ? '' : ', application/vnd.kubernetes.protobuf'}`,
    );
  }
  return neg;
}

/**
 * How an answer that is not the resource's own representation (a `Status`, a Scale, a Table
 * already built, a review) is serialized: protobuf when asked first and the body's kind has an
 * encoding, else YAML when asked, else JSON.
 */
export interface Serializer {
  protobuf: boolean;
  yaml: boolean;
}

/** The {@link Serializer} the `Accept` header asks for. */
export function negotiateSerializer(accept: string | undefined): Serializer {
  const offers = { table: false, metadata: false, list: false };
  return {
    protobuf: negotiate(accept, { ...offers, protobuf: true })?.protobuf === true,
    yaml: negotiate(accept, offers)?.yaml === true,
  };
}
