/**
 * The OpenAPI definitions of Kubernetes' built-in kinds, extracted from Kubernetes' published
 * spec by `scripts/extract-openapi.mjs` into `k8s-schemas.generated.json`.
 *
 * The file is read once, on first use: it is large, and most processes that import the server
 * (the SDK's tests, the CLI's `--help`) never need it.
 */
import { readFileSync } from 'node:fs';
import type { Obj } from '../util/object.js';

/** A JSON object: schemas, operations and documents are all plain JSON. */
export type { Obj } from '../util/object.js';

/** Group, version and kind, as in `x-kubernetes-group-version-kind`. */
export interface Gvk {
  group: string;
  version: string;
  kind: string;
}

/** Prefix of every definition reference in an OpenAPI v3 document. */
export const V3_REF_PREFIX = '#/components/schemas/';

interface GeneratedFile {
  source: string;
  schemas: Record<string, Obj>;
  parameters: Record<string, Obj>;
}

/** The parsed content of `k8s-schemas.generated.json`, with a GVK index over its definitions. */
export interface BuiltinSpec {
  /** Where the definitions come from (package version and upstream URL). */
  readonly source: string;
  /** Definitions by name (`io.k8s.api.apps.v1.Deployment`), refs as `#/components/schemas/<name>`. */
  readonly schemas: ReadonlyMap<string, Obj>;
  /** Query parameters as Kubernetes documents them, by name (`fieldManager:patch` for PATCH's). */
  readonly parameters: ReadonlyMap<string, Obj>;
  /** Definition name for a `group/version/Kind` key (see {@link gvkKey}). */
  readonly byGvk: ReadonlyMap<string, string>;
}

let loaded: BuiltinSpec | undefined;

/** Key of a GVK in lookup maps; the core group is the empty string. */
export function gvkKey(group: string, version: string, kind: string): string {
  return `${group}/${version}/${kind}`;
}

/** Reads the GVKs a definition declares in `x-kubernetes-group-version-kind`. */
export function definitionGvks(schema: Obj): Gvk[] {
  const ext = schema['x-kubernetes-group-version-kind'];
  const list = Array.isArray(ext) ? ext : ext && typeof ext === 'object' ? [ext] : [];
  const out: Gvk[] = [];
  for (const entry of list) {
    if (!entry || typeof entry !== 'object') continue;
    const { group, version, kind } = entry as Obj;
    if (typeof version === 'string' && typeof kind === 'string') {
      out.push({ group: typeof group === 'string' ? group : '', version, kind });
    }
  }
  return out;
}

/**
 * The built-in definitions, loaded on first call and shared afterwards: they are immutable, so
 * every service and schema view can read the same copy.
 */
export function builtinSpec(): BuiltinSpec {
  if (loaded) return loaded;
  const file = JSON.parse(
    readFileSync(new URL('./k8s-schemas.generated.json', import.meta.url), 'utf8'),
  ) as GeneratedFile;
  const schemas = new Map(Object.entries(file.schemas));
  const byGvk = new Map<string, string>();
  for (const [name, schema] of schemas) {
    for (const gvk of definitionGvks(schema)) {
      // Each GVK has one definition in Kubernetes' spec; keep the first should that ever change.
      const key = gvkKey(gvk.group, gvk.version, gvk.kind);
      if (!byGvk.has(key)) byGvk.set(key, name);
    }
  }
  loaded = {
    source: file.source,
    schemas,
    parameters: new Map(Object.entries(file.parameters ?? {})),
    byGvk,
  };
  return loaded;
}
