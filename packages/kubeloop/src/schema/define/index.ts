/**
 * Declaring resources in TypeScript: `defineResource`, Kubernetes' schema vocabulary for TypeBox
 * (`Kube`), and the TypeBox → Kubernetes dialect pass behind the generated CRDs.
 *
 * @module
 */

export type { TProperties, TSchema } from 'typebox';
export {
  checkKubernetesSchema,
  type DialectOptions,
  type DialectProblem,
  SchemaDialectError,
  toKubernetesSchema,
} from './dialect.js';
export {
  type Condition,
  type EmbeddedObject,
  Kube,
  type KubeEnumOptions,
  type KubeMapOptions,
  type KubeSchemaOptions,
  QUANTITY_PATTERN,
} from './kube.js';
export type { LocalValidateOptions } from './local.js';
export { pluralOf } from './names.js';
export {
  type ConversionOptions,
  defineResource,
  type MultiVersionDefinition,
  type MultiVersionResourceOptions,
  type ObjectInit,
  type PrinterColumn,
  type ResourceDefinition,
  type ResourceObject,
  type ResourceOptions,
  type ResourceOptionsBase,
  type ResourceVersionOptions,
  type ScaleSubresource,
  type SingleVersionDefinition,
  type SingleVersionResourceOptions,
  type Static,
  type StorageVersionOf,
  type VersionObjects,
} from './resource.js';
export { Type } from './typebox.js';
