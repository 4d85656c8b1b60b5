import { builtinKinds } from './builtin-kinds.js';
import type { ResourceType } from './types.js';

/**
 * The table of resource types the server serves, by group/version/resource. Built-in kinds
 * are registered at start; custom resources are added and removed as CRDs come and go, and
 * every change bumps `generation` so that discovery and OpenAPI caches know to rebuild.
 */
export class Registry {
  private readonly byPath = new Map<string, ResourceType>();
  private gen = 0;
  private readonly listeners = new Set<() => void>();

  constructor(types: ResourceType[] = builtinKinds()) {
    for (const t of types) this.byPath.set(pathKey(t.group, t.version, t.resource), t);
  }

  /** Increases whenever the set of resource types changes. */
  get generation(): number {
    return this.gen;
  }

  lookup(group: string, version: string, resource: string): ResourceType | undefined {
    return this.byPath.get(pathKey(group, version, resource));
  }

  /** The served type of a kind at a group/version. */
  byKind(group: string, version: string, kind: string): ResourceType | undefined {
    for (const t of this.byPath.values()) {
      if (t.group === group && t.version === version && t.kind === kind) return t;
    }
    return undefined;
  }

  all(): ResourceType[] {
    return [...this.byPath.values()];
  }

  /** Group → versions served, in registration order (the first is the preferred version). */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const t of this.byPath.values()) {
      const versions = out.get(t.group) ?? [];
      if (!versions.includes(t.version)) versions.push(t.version);
      out.set(t.group, versions);
    }
    return out;
  }

  /** Adds or replaces types (custom resources). */
  register(...types: ResourceType[]): void {
    for (const t of types) this.byPath.set(pathKey(t.group, t.version, t.resource), t);
    this.changed();
  }

  unregister(group: string, version: string, resource: string): void {
    if (this.byPath.delete(pathKey(group, version, resource))) this.changed();
  }

  /** Called after every change of the table. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.gen++;
    for (const l of this.listeners) l();
  }
}

function pathKey(group: string, version: string, resource: string): string {
  return `${group}/${version}/${resource}`;
}
