/** Content negotiation: what representation the client asked for in `Accept`. */

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
    if (as === 'Table' && g === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1') && offers.table && !yaml) {
      return { representation: { as: 'Table' }, yaml };
    }
    if (
      as === 'PartialObjectMetadata' &&
      g === 'meta.k8s.io' &&
      (v === 'v1' || v === 'v1beta1') &&
      offers.metadata &&
      !yaml
    ) {
      return {
        representation: { as: offers.list ? 'PartialObjectMetadataList' : 'PartialObjectMetadata' },
        yaml,
      };
    }
    if (
      as === 'PartialObjectMetadataList' &&
      g === 'meta.k8s.io' &&
      (v === 'v1' || v === 'v1beta1') &&
      offers.metadata &&
      offers.list &&
      !yaml
    ) {
      return { representation: { as: 'PartialObjectMetadataList' }, yaml };
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
