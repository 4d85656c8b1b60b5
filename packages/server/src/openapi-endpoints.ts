import type { OpenApiEndpoints } from './http/api-server.js';
import {
  findDuplicateFields,
  findUnknownFields,
  OpenApiService,
  pruneUnknownFields,
} from './openapi/index.js';
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
      })),
    { version },
  );
  registry.onChange(() => service.invalidate());
  const view = (t: ResourceType) => service.schemaFor(t.group, t.version, t.kind);
  return {
    handle: (path, query, headers) => service.handle(path, query, headers),
    fieldProblems(t: ResourceType, obj: Obj, raw: string | undefined): string[] {
      const schema = view(t);
      return [...(raw ? findDuplicateFields(raw) : []), ...(schema ? findUnknownFields(obj, schema) : [])];
    },
    pruneUnknown(t: ResourceType, obj: Obj): void {
      const schema = view(t);
      if (schema) pruneUnknownFields(obj, schema);
    },
  };
}
