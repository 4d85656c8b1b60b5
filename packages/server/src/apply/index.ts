/**
 * Server-side apply and `metadata.managedFields`, as Kubernetes defines them
 * (sigs.k8s.io/structured-merge-diff and apimachinery's `managedfields`):
 *
 * - `path`, `set`, `fields-v1`: field paths, sets of them and their FieldsV1 encoding;
 * - `schema`: merge types from OpenAPI (built-in kinds) and CRD schemas;
 * - `typed`: field sets, comparison, merge and removal of typed values;
 * - `updater`: ownership across updates and applies, conflicts;
 * - `managed-fields`, `field-manager`, `scale`: the entries of `metadata.managedFields` and the
 *   field manager the API server runs for every write.
 */
export {
  applyConfiguration,
  conflictError,
  FIELD_MANAGER_MAX_LENGTH,
  fieldManagerCauses,
  LAST_APPLIED_ANNOTATION,
  type ManageOptions,
  managerOrUserAgent,
  type Subresource,
  updateManagedFields,
} from './field-manager.js';
export { FieldsV1Error, fromFieldsV1, toFieldsV1 } from './fields-v1.js';
export {
  decodeManagedFields,
  encodeManagedFields,
  type Managed,
  ManagedFieldsError,
  type ManagerInfo,
  managerIdentifier,
  printManager,
} from './managed-fields.js';
export {
  comparePathElements,
  deserializePathElement,
  type KeyField,
  keyElement,
  type Path,
  type PathElement,
  pathString,
  serializePathElement,
} from './path.js';
export { parentEntriesFromScale, type ReplicasPaths, replicasPath, scaleEntriesFromParent } from './scale.js';
export {
  type Atom,
  builtinAtom,
  customResourceAtom,
  DEDUCED,
  type ListType,
  type MapType,
  openApiAtom,
  type ScalarKind,
  type TypeRef,
  UNTYPED_ATOMIC,
} from './schema.js';
export { FieldSet } from './set.js';
export {
  type Comparison,
  compareTyped,
  ensureNamedFieldsAreMembers,
  mergeTyped,
  removeItems,
  TypedError,
  toFieldSet,
  validateTyped,
} from './typed.js';
export { type Conflict, Conflicts, type ManagedFieldSets, Updater, type VersionedSet } from './updater.js';
