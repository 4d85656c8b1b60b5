import type { OpenApiEndpoints } from './http/handlers/scope.js';
import {
  findDuplicateFields,
  findUnknownFields,
  OpenApiService,
  pruneUnknownFields,
} from './openapi/index.js';
import { decodeTypeError, normalizeNulls } from './openapi/type-check.js';
import type { Registry } from './registry/registry.js';
import type { ResourceType } from './registry/types.js';
import type { Obj } from './util/object.js';

/** Connects the OpenAPI documents and schema checks to the HTTP layer; rebuilt when the registry changes. */
export function createOpenApiEndpoints(registry: Registry, version: string): OpenApiEndpoints {
  const service = new OpenApiService(
    () =>
      registry.all().map((t) => ({
        group: t.group,
        version: t.version,
        kind: t.kind,
        resource: t.resource,
        namespaced: t.namespaced,
        verbs: t.verbs,
        subresources: [
          ...(t.subresources.status ? ['status'] : []),
          ...(t.subresources.scale ? ['scale'] : []),
        ],
        returnDeletedObject: t.returnDeletedObject,
        ...(t.definition !== undefined && { definition: t.definition }),
        ...(t.custom && { schema: t.custom.schema as Record<string, unknown> }),
      })),
    { version },
  );
  registry.onChange(() => service.invalidate());
  const view = (t: ResourceType) => service.schemaFor(t.group, t.version, t.kind);
  // Custom resources are pruned by the CRD's compiled schema (kubeloop/schema), which reports
  // what it removed; an object pruned while its problems were collected is not pruned twice.
  const prunedCustom = new WeakSet<Obj>();
  const pruneCustom = (t: ResourceType, obj: Obj): string[] => {
    prunedCustom.add(obj);
    return t.custom!.compiled.prune(obj, { isResourceRoot: true }).map((p) => `unknown field "${p}"`);
  };
  return {
    handle: (path, query, headers) => service.handle(path, query, headers),
    fieldProblems(t: ResourceType, obj: Obj, raw: string | undefined, prune = false): string[] {
      const duplicates = raw ? findDuplicateFields(raw) : [];
      if (t.custom) return [...duplicates, ...pruneCustom(t, obj)];
      const schema = view(t);
      if (!schema) return duplicates;
      return [...duplicates, ...(prune ? pruneUnknownFields(obj, schema) : findUnknownFields(obj, schema))];
    },
    pruneUnknown(t: ResourceType, obj: Obj): void {
      if (t.custom) {
        if (!prunedCustom.has(obj)) pruneCustom(t, obj);
        return;
      }
      const schema = view(t);
      if (schema) pruneUnknownFields(obj, schema);
    },
    decode(t: ResourceType, obj: Obj): string | undefined {
      if (!t.definition) return undefined;
      const error = decodeTypeError(obj, t.definition);
      // Only nulls are rewritten: most objects have none, and finding that needs no schema.
      if (error === undefined && containsNull(obj)) normalizeNulls(obj, t.definition);
      return error;
    },
  };
}

/** Whether a JSON value holds a `null` anywhere. */
function containsNull(v: unknown): boolean {
  if (v === null) return true;
  if (typeof v !== 'object') return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (containsNull(v[i])) return true;
    return false;
  }
  for (const key in v) if (containsNull((v as Obj)[key])) return true;
  return false;
}
