/**
 * The patch engines of the local API server: JSON merge patch, JSON patch and strategic merge
 * patch, each reproducing kube-apiserver's results and errors, plus the patch metadata
 * (strategies and merge keys) strategic merge patch reads from OpenAPI schemas.
 */
export { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS } from './json-patch.js';
export { applyMergePatch } from './merge-patch.js';
export type { FieldValidation, PatchOptions } from './options.js';
export {
  type PatchMeta,
  patchMetaForDefinition,
  patchMetaFromSchema,
  type SchemaRefResolver,
} from './patch-meta.js';
export { applyStrategicMergePatch } from './strategic-merge-patch.js';
