import type { Registry } from '../registry/registry.js';
import type { ResourceType } from '../registry/types.js';

type Json = Record<string, unknown>;

/** Verbs a subresource supports (status and scale: get, patch, update). */
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

/**
 * The connect subresources kube-apiserver 1.32 lists (streams served outside the registry), by
 * `group/resource`, with the kind of their options and their verbs.
 */
const CONNECT_SUBRESOURCES: Record<string, Array<{ subresource: string; kind: string; verbs: string[] }>> = {
  '/pods': [
    { subresource: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
    { subresource: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] },
    { subresource: 'log', kind: 'Pod', verbs: ['get'] },
    { subresource: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
  ],
};
const connectOf = (t: ResourceType) =>
  t.custom ? [] : (CONNECT_SUBRESOURCES[`${t.group}/${t.resource}`] ?? []);

/** A subresource as discovery lists it: its kind's group and version when not the resource's. */
interface DiscoveredSubresource {
  subresource: string;
  group?: string;
  version?: string;
  kind: string;
  verbs: readonly string[];
}

/** A resource's subresources, sorted by name as kube-apiserver installs (and lists) their paths. */
function subresourcesOf(t: ResourceType): DiscoveredSubresource[] {
  const own = (subresource: string, verbs: readonly string[]) => ({ subresource, kind: t.kind, verbs });
  const s = t.subresources;
  const out: DiscoveredSubresource[] = [
    // Connect subresources answer in no group's kind (their options are the request's).
    ...connectOf(t).map((c) => ({
      subresource: c.subresource,
      group: '',
      version: '',
      kind: c.kind,
      verbs: c.verbs,
    })),
    ...Object.keys(t.behaviour.storage?.postSubresources ?? {}).map((name) => ({
      subresource: name,
      group: t.group,
      version: t.version,
      kind: 'Binding',
      verbs: ['create'],
    })),
  ];
  if (s.scale)
    out.push({
      subresource: 'scale',
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: SUBRESOURCE_VERBS,
    });
  if (s.token)
    out.push({
      subresource: 'token',
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
  if (s.eviction)
    out.push({
      subresource: 'eviction',
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
  if (s.approval) out.push(own('approval', SUBRESOURCE_VERBS));
  if (s.ephemeralContainers) out.push(own('ephemeralcontainers', SUBRESOURCE_VERBS));
  if (s.finalize) out.push(own('finalize', ['update']));
  if (s.status) out.push(own('status', SUBRESOURCE_VERBS));
  return out.sort((a, b) => (a.subresource < b.subresource ? -1 : a.subresource > b.subresource ? 1 : 0));
}

/**
 * Discovery documents (`/api`, `/apis`, `/api/v1`, `/apis/<g>`, `/apis/<g>/<v>`, and the
 * aggregated `apidiscovery.k8s.io/v2` form kubectl asks for first), rebuilt when the registry changes.
 */
export class Discovery {
  private cache = new Map<string, string>();
  private cachedAt = -1;

  constructor(
    private readonly registry: Registry,
    private readonly serverAddress: () => string,
  ) {}

  /** The JSON body for a discovery path, or undefined when the path is not a discovery path. */
  document(path: string, aggregated: boolean): string | undefined {
    if (this.cachedAt !== this.registry.generation) {
      this.cache.clear();
      this.cachedAt = this.registry.generation;
    }
    const key = `${aggregated ? 'agg:' : ''}${path}`;
    let body = this.cache.get(key);
    if (body === undefined) {
      const doc = this.build(path, aggregated);
      if (doc === undefined) return undefined;
      body = JSON.stringify(doc);
      this.cache.set(key, body);
    }
    return body;
  }

  private build(path: string, aggregated: boolean): Json | undefined {
    const parts = path.split('/').filter(Boolean);
    const groups = this.registry.groups();
    if (parts[0] === 'api') {
      if (parts.length === 1) {
        if (aggregated) return this.aggregatedList(['']);
        return {
          kind: 'APIVersions',
          versions: ['v1'],
          serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: this.serverAddress() }],
        };
      }
      if (parts.length === 2 && groups.get('')?.includes(parts[1]!)) return this.resourceList('', parts[1]!);
      return undefined;
    }
    if (parts[0] !== 'apis') return undefined;
    if (parts.length === 1) {
      const named = [...groups.keys()].filter((g) => g !== '');
      if (aggregated) return this.aggregatedList(named);
      return {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: named.map((g) => this.group(g, groups.get(g)!)),
      };
    }
    const versions = groups.get(parts[1]!);
    if (!versions || parts[1] === '') return undefined;
    if (parts.length === 2) return { kind: 'APIGroup', apiVersion: 'v1', ...this.group(parts[1]!, versions) };
    if (parts.length === 3 && versions.includes(parts[2]!)) return this.resourceList(parts[1]!, parts[2]!);
    return undefined;
  }

  private group(name: string, versions: string[]): Json {
    const gv = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions: gv, preferredVersion: gv[0] };
  }

  private typesOf(group: string, version: string): ResourceType[] {
    // Resource names are lowercase DNS labels, which order by code unit exactly as by locale;
    // localeCompare would initialise ICU's collator at start (~3 MB of an idle server's RSS).
    return this.registry
      .all()
      .filter((t) => t.group === group && t.version === version)
      .sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  }

  private resourceList(group: string, version: string): Json {
    const resources: Json[] = [];
    for (const t of this.typesOf(group, version)) {
      resources.push({
        name: t.resource,
        singularName: t.singular,
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: [...t.verbs],
        ...(t.shortNames.length > 0 && { shortNames: [...t.shortNames] }),
        ...(t.categories.length > 0 && { categories: [...t.categories] }),
        storageVersionHash: storageVersionHash(t),
      });
      for (const sub of subresourcesOf(t)) {
        resources.push({
          name: `${t.resource}/${sub.subresource}`,
          singularName: '',
          namespaced: t.namespaced,
          // The legacy list names a kind's group and version only when they are another group's.
          ...(sub.group !== undefined && sub.group !== t.group && { group: sub.group, version: sub.version }),
          kind: sub.kind,
          verbs: sub.verbs,
        });
      }
    }
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources,
    };
  }

  /** `apidiscovery.k8s.io/v2` APIGroupDiscoveryList: every group, version and resource in one document. */
  private aggregatedList(groupNames: string[]): Json {
    const groups = this.registry.groups();
    return {
      kind: 'APIGroupDiscoveryList',
      apiVersion: 'apidiscovery.k8s.io/v2',
      metadata: {},
      items: groupNames.map((g) => ({
        metadata: { name: g, creationTimestamp: null },
        versions: (groups.get(g) ?? []).map((v) => ({
          version: v,
          freshness: 'Current',
          resources: this.typesOf(g, v).map((t) => ({
            resource: t.resource,
            responseKind: { group: t.group, version: t.version, kind: t.kind },
            scope: t.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: t.singular,
            verbs: [...t.verbs],
            ...(t.shortNames.length > 0 && { shortNames: [...t.shortNames] }),
            ...(t.categories.length > 0 && { categories: [...t.categories] }),
            subresources: subresourcesOf(t).map((sub) => ({
              subresource: sub.subresource,
              responseKind: {
                group: sub.group ?? t.group,
                version: sub.version ?? t.version,
                kind: sub.kind,
              },
              verbs: sub.verbs,
            })),
          })),
        })),
      })),
    };
  }
}

/** A stable short hash of group/version/kind, like the apiserver's storageVersionHash. */
function storageVersionHash(t: ResourceType): string {
  let h = 2166136261;
  for (const c of `${t.group}/${t.version}/${t.kind}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return Buffer.from(new Uint32Array([h >>> 0, (h * 31) >>> 0]).buffer)
    .toString('base64')
    .slice(0, 11);
}
