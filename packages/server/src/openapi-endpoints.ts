import type { OpenApiEndpoints } from './http/api-server.js';
import type { Registry } from './registry/registry.js';

/** Connects the OpenAPI documents and schema checks to the HTTP layer. */
export function createOpenApiEndpoints(_registry: Registry): OpenApiEndpoints {
  return { handle: () => undefined, fieldProblems: () => [], pruneUnknown: () => undefined };
}
