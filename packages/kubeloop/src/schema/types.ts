/**
 * The OpenAPI v3 schema dialect of CustomResourceDefinitions (apiextensions.k8s.io/v1
 * `JSONSchemaProps`) and the CRD object itself, as plain JSON types.
 */

/** One `x-kubernetes-validations` rule. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?:
    | 'FieldValueInvalid'
    | 'FieldValueForbidden'
    | 'FieldValueRequired'
    | 'FieldValueDuplicate'
    | string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** A CRD schema node (`JSONSchemaProps`). Unknown keys are kept and reported where kube forbids them. */
export interface JSONSchemaProps {
  id?: string;
  $schema?: string;
  $ref?: string;
  description?: string;
  type?: string;
  format?: string;
  title?: string;
  default?: unknown;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  enum?: unknown[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  items?: JSONSchemaProps | JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  patternProperties?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, JSONSchemaProps | string[]>;
  additionalItems?: JSONSchemaProps | boolean;
  definitions?: Record<string, JSONSchemaProps>;
  externalDocs?: { description?: string; url?: string };
  example?: unknown;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

/** `additionalPrinterColumns[]` of a CRD version. */
export interface CustomResourceColumnDefinition {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** `subresources` of a CRD version. */
export interface CustomResourceSubresources {
  status?: Record<string, never> | Record<string, unknown>;
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}

/** One entry of `spec.versions`. */
export interface CustomResourceDefinitionVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: CustomResourceSubresources;
  additionalPrinterColumns?: CustomResourceColumnDefinition[];
  selectableFields?: Array<{ jsonPath: string }>;
}

/** `spec.names` / `status.acceptedNames`. */
export interface CustomResourceDefinitionNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
  categories?: string[];
}

/** An apiextensions.k8s.io/v1 CustomResourceDefinition. */
export interface CustomResourceDefinition {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    [k: string]: unknown;
  };
  spec: {
    group: string;
    names: CustomResourceDefinitionNames;
    scope: string;
    versions: CustomResourceDefinitionVersion[];
    conversion?: {
      strategy?: string;
      webhook?: {
        clientConfig?: {
          url?: string;
          service?: { namespace?: string; name?: string; path?: string; port?: number };
          caBundle?: string;
        };
        conversionReviewVersions?: string[];
      };
    };
    preserveUnknownFields?: boolean;
  };
  status?: {
    acceptedNames?: Partial<CustomResourceDefinitionNames>;
    storedVersions?: string[];
    conditions?: Array<{ type: string; status: string; [k: string]: unknown }>;
  };
}
