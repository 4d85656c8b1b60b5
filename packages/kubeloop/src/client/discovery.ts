/**
 * Resource discovery (the client's RESTMapper): which plural name, scope and verbs a kind has,
 * read from `/api/v1` or `/apis/<group>/<version>`, cached per group/version and fetched
 * again when a kind is not (or no longer) in the cache — a CRD created a moment ago is found
 * on first use.
 */

import type { JsonObject as Obj } from '../api/object.js';
import { ApiError, isNotFound } from '../api/status.js';
import { apiVersionOf, type GroupVersionKind, type ResolvedResource } from './descriptor.js';

/** One resource of an `APIResourceList`. */
export interface DiscoveredResource extends ResolvedResource {
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly string[];
  /** Subresources served, e.g. `['status', 'scale']`. */
  readonly subresources: readonly string[];
}

/** The kind is not served at that group/version (client-go's `NoKindMatchError`). */
export class NoKindMatchError extends Error {
  readonly gvk: GroupVersionKind;
  constructor(gvk: GroupVersionKind) {
    super(`no matches for kind ${JSON.stringify(gvk.kind)} in version ${JSON.stringify(apiVersionOf(gvk))}`);
    this.name = 'NoKindMatchError';
    this.gvk = gvk;
  }
}

/** True for a {@link NoKindMatchError}. */
export const isNoKindMatch = (err: unknown): err is NoKindMatchError => err instanceof NoKindMatchError;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);

/** Discovery with a per-group/version cache. Owned by a client; no global state. */
export class Discovery {
  private readonly cache = new Map<string, Promise<DiscoveredResource[] | undefined>>();
  /** The loaded lists of {@link cache}, by group then version (no key to build per look-up). */
  private readonly settled = new Map<string, Map<string, DiscoveredResource[]>>();

  /** @param fetch GETs a discovery path and returns the parsed JSON (throws ApiError). */
  constructor(private readonly fetch: (path: string) => Promise<unknown>) {}

  /**
   * The resources of one group/version (`undefined` when the server does not serve it). Uses
   * the cache unless `refresh`.
   */
  async resources(
    group: string,
    version: string,
    refresh = false,
  ): Promise<DiscoveredResource[] | undefined> {
    const key = apiVersionOf({ group, version });
    let pending = refresh ? undefined : this.cache.get(key);
    if (!pending) {
      this.settled.get(group)?.delete(version);
      const loading = this.load(group, version);
      pending = loading;
      this.cache.set(key, loading);
      loading.then(
        (list) => {
          if (list && this.cache.get(key) === loading) {
            let versions = this.settled.get(group);
            if (!versions) {
              versions = new Map();
              this.settled.set(group, versions);
            }
            versions.set(version, list);
          }
        },
        // A failed fetch must not stay cached.
        () => {
          if (this.cache.get(key) === loading) this.cache.delete(key);
        },
      );
    }
    return pending;
  }

  /**
   * A kind as the cache knows it now, without waiting: `undefined` when its group/version is
   * not loaded (or being fetched again) or does not list it — then {@link resolve} finds it.
   * A typed request of a kind found by discovery (a custom resource) makes its path with this,
   * where each was a chain of promises and a copy of the resource (~2 % of a busy operator's CPU).
   */
  known(gvk: GroupVersionKind): DiscoveredResource | undefined {
    const list = this.settled.get(gvk.group)?.get(gvk.version);
    if (list === undefined) return undefined;
    for (const r of list) if (r.kind === gvk.kind) return r;
    return undefined;
  }

  /**
   * Plural, scope and verbs of a kind; asks the server again before giving up on a kind the
   * cache does not know.
   *
   * @throws NoKindMatchError when the server does not serve the kind.
   */
  async resolve(gvk: GroupVersionKind): Promise<DiscoveredResource> {
    const find = (list: DiscoveredResource[] | undefined) => list?.find((r) => r.kind === gvk.kind);
    const cached = find(await this.resources(gvk.group, gvk.version));
    if (cached) return cached;
    const fresh = find(await this.resources(gvk.group, gvk.version, true));
    if (fresh) return fresh;
    throw new NoKindMatchError(gvk);
  }

  /**
   * Every resource the server serves, each group at its preferred version (client-go's
   * `ServerPreferredResources`): a group's resources come from its preferred version, and a
   * resource only served at another version of the group from the first version (in the
   * server's order) that serves it. Subresources are not listed; `verbs` says what each
   * resource allows. Always asks the server (and refreshes the per-group/version cache), so a
   * controller that follows every kind — a garbage collector, a namespace cleaner — calls it
   * again to learn kinds added (CRDs) or removed since.
   *
   * A group/version that fails to load does not fail the whole: its resources are left out and
   * the group/version (`group/version`, or `v1` for the core group) is named in `failed`, as
   * client-go's `ErrGroupDiscoveryFailed`.
   *
   * @example
   * ```ts
   * const { resources } = await client.discovery.preferredResources();
   * const deletable = resources.filter((r) => ['list', 'watch', 'delete'].every((v) => r.verbs.includes(v)));
   * ```
   */
  async preferredResources(): Promise<{
    resources: DiscoveredResource[];
    failed: Map<string, unknown>;
  }> {
    const [core, apis] = await Promise.all([this.fetch('/api'), this.fetch('/apis')]);
    /** Each group with its versions, preferred first. */
    const groups: Array<{ group: string; versions: string[] }> = [];
    if (isObj(core)) groups.push({ group: '', versions: strings(core.versions) });
    if (isObj(apis) && Array.isArray(apis.groups)) {
      for (const g of apis.groups) {
        if (!isObj(g) || typeof g.name !== 'string' || !Array.isArray(g.versions)) continue;
        const versions = g.versions.flatMap((v) =>
          isObj(v) && typeof v.version === 'string' ? [v.version] : [],
        );
        const preferred =
          isObj(g.preferredVersion) && typeof g.preferredVersion.version === 'string'
            ? g.preferredVersion.version
            : versions[0];
        groups.push({
          group: g.name,
          versions:
            preferred === undefined ? versions : [preferred, ...versions.filter((v) => v !== preferred)],
        });
      }
    }
    const failed = new Map<string, unknown>();
    const loaded = await Promise.all(
      groups.map(({ group, versions }) =>
        Promise.all(
          versions.map((version) =>
            this.resources(group, version, true).catch((err: unknown) => {
              failed.set(apiVersionOf({ group, version }), err);
              return undefined;
            }),
          ),
        ),
      ),
    );
    const resources: DiscoveredResource[] = [];
    for (const lists of loaded) {
      const seen = new Set<string>();
      for (const list of lists) {
        for (const r of list ?? []) {
          if (seen.has(r.plural)) continue;
          seen.add(r.plural);
          resources.push(r);
        }
      }
    }
    return { resources, failed };
  }

  /** Forgets what is cached (one group/version, or everything). */
  invalidate(gv?: { group: string; version: string }): void {
    if (gv) {
      this.cache.delete(apiVersionOf(gv));
      this.settled.get(gv.group)?.delete(gv.version);
    } else {
      this.cache.clear();
      this.settled.clear();
    }
  }

  private async load(group: string, version: string): Promise<DiscoveredResource[] | undefined> {
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    let doc: unknown;
    try {
      doc = await this.fetch(path);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    if (!isObj(doc) || !Array.isArray(doc.resources)) {
      throw new ApiError({
        code: 500,
        reason: 'InternalError',
        message: `discovery ${path}: the answer is not an APIResourceList`,
      });
    }
    const subresources = new Map<string, string[]>();
    const out: Array<Omit<DiscoveredResource, 'subresources'>> = [];
    for (const r of doc.resources) {
      if (!isObj(r) || typeof r.name !== 'string' || typeof r.kind !== 'string') continue;
      const slash = r.name.indexOf('/');
      if (slash >= 0) {
        const parent = r.name.slice(0, slash);
        subresources.set(parent, [...(subresources.get(parent) ?? []), r.name.slice(slash + 1)]);
        continue;
      }
      out.push({
        group,
        version,
        kind: r.kind,
        plural: r.name,
        namespaced: r.namespaced === true,
        singular:
          typeof r.singularName === 'string' && r.singularName ? r.singularName : r.kind.toLowerCase(),
        shortNames: strings(r.shortNames),
        categories: strings(r.categories),
        verbs: strings(r.verbs),
      });
    }
    return out.map((r) => Object.freeze({ ...r, subresources: subresources.get(r.plural) ?? [] }));
  }
}
