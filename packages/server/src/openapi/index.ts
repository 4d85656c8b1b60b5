/**
 * OpenAPI documents of the local API server (`/openapi/v2`, `/openapi/v3`) and strict field
 * validation of request bodies against the served kinds' schemas.
 */

export { customResourceDefinitionName } from './documents.js';
export {
  cannotBeHandledMessage,
  findDuplicateFields,
  findUnknownFields,
  goQuote,
  pruneUnknownFields,
  strictDecodingMessage,
} from './field-validation.js';
export type { OpenApiResource } from './paths.js';
export { SchemaCompiler, SchemaView } from './schema-view.js';
export {
  type OpenApiRequestHeaders,
  type OpenApiResponse,
  OpenApiService,
  type OpenApiServiceOptions,
} from './service.js';
