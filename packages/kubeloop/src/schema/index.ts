/**
 * `kubeloop/schema` — the CRD schema engine shared by the SDK and the local API server.
 *
 * Structural-schema checks, OpenAPI validation, defaulting, pruning, CEL
 * (`x-kubernetes-validations`), CRD object validation and printer-column JSONPath, with the
 * exact semantics and messages of a Kubernetes 1.32 API server. What an operator validates in a
 * unit test is what the server accepts.
 *
 * @example
 * ```ts
 * import { compileSchema } from 'kubeloop/schema';
 * const foo = compileSchema(crd.spec.versions[0].schema.openAPIV3Schema);
 * foo.prune(obj);
 * foo.applyDefaults(obj);
 * const causes = foo.validate(obj); // StatusCause[] with kube's field paths and messages
 * ```
 *
 * @module
 */

// The CEL building blocks the server's admission CEL (ValidatingAdmissionPolicy, matchConditions)
// builds on: kube's libraries, cel-go's error wording, JSON → CEL values, schema-typed objects.
export { type CelJsError, celGoMessage, formatCompileIssue } from './cel/errors.js';
export { CelLibraryError, registerKubernetesLibraries } from './cel/library.js';
export {
  type CelValidateOptions,
  CelValidator,
  type CompiledRule,
  escapeCelName,
  PER_CALL_LIMIT,
  RUNTIME_COST_BUDGET,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from './cel/validator.js';
export { TypeBuilder, toCelValue } from './cel/values.js';
export {
  applyDefaults,
  CEL_SKIPPED_CAUSE,
  type CompiledSchema,
  type CompileSchemaOptions,
  type CustomResourceKind,
  compileSchema,
  prune,
  type SchemaValidateOptions,
  validate,
  validateCustomResource,
} from './compile.js';
export {
  type ApiApprovalState,
  apiApprovalState,
  isProtectedCommunityGroup,
  MAX_SELECTABLE_FIELDS,
  setCustomResourceDefinitionDefaults,
  validateCustomResourceDefinition,
  validateDefaults,
} from './crd.js';
export { applyDefaultsStructural, defaultValue, pruneNonNullableNullsWithoutDefaults } from './defaulting.js';
export { normalizeFormat, SUPPORTED_STRING_FORMATS, stringFormatChecker } from './formats.js';
export {
  columnCell,
  evaluateJsonPath,
  humanDuration,
  humanReadableAge,
  JsonPathError,
  parseJsonPath,
} from './jsonpath.js';
export { validateListSetsAndMaps } from './listtype.js';
export { validateEmbeddedObjectMeta } from './objectmeta.js';
export { OBJECT_META_FIELDS, type PruneOptions, pruneStructural } from './pruning.js';
export { compileGoRegexp, GoRegexpError } from './regex.js';
export {
  type Structural,
  StructuralConversionError,
  toStructural,
  validateStructural,
} from './structural.js';
export type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionVersion,
  CustomResourceSubresources,
  JSONSchemaProps,
  ValidationRule,
} from './types.js';
export {
  compileValueValidator,
  type ValidationSink,
  type ValueValidator,
  validateValue,
} from './validate.js';
