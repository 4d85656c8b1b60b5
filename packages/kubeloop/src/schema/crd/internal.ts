import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceSubresources,
  JSONSchemaProps,
} from '../types.js';
import { deepEqualJSON } from '../util.js';

export const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
export const PRINTER_COLUMN_TYPES = 'boolean,date,integer,number,string';
export const PRINTER_COLUMN_FORMATS = 'byte,date,date-time,double,float,int32,int64,password';
export const SUPPORTED_REASONS = [
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueInvalid',
  'FieldValueRequired',
];
/** Maximum number of selectable fields per version. */
export const MAX_SELECTABLE_FIELDS = 8;
export const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';

export const child = (p: string, c: string) => `${p}.${c}`;
export const key = (p: string, k: string) => `${p}[${k}]`;
export const idx = (p: string, i: number) => `${p}[${i}]`;

export interface InternalVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps } | undefined;
  subresources?: CustomResourceSubresources | undefined;
  additionalPrinterColumns?: CustomResourceColumnDefinition[] | undefined;
  selectableFields?: Array<{ jsonPath: string }> | undefined;
}

export interface InternalSpec {
  group: string;
  names: CustomResourceDefinition['spec']['names'];
  scope: string;
  version: string;
  versions: InternalVersion[];
  validation?: { openAPIV3Schema?: JSONSchemaProps } | undefined;
  subresources?: CustomResourceSubresources | undefined;
  additionalPrinterColumns?: CustomResourceColumnDefinition[] | undefined;
  selectableFields?: Array<{ jsonPath: string }> | undefined;
  conversion?: {
    strategy?: string;
    webhookClientConfig?: NonNullable<
      NonNullable<CustomResourceDefinition['spec']['conversion']>['webhook']
    >['clientConfig'];
    conversionReviewVersions?: string[];
  };
  preserveUnknownFields: boolean;
}

/**
 * Applies the v1 defaults of a CRD in place (`SetDefaults_CustomResourceDefinition`):
 * `singular` and `listKind` from `kind`, `conversion.strategy: None`, and the
 * `x-kubernetes-list-map-keys`-free defaults the server stores.
 */
export function setCustomResourceDefinitionDefaults(crd: CustomResourceDefinition): void {
  const spec = crd.spec;
  if (!spec) return;
  if (spec.names) {
    if (!spec.names.singular && spec.names.kind) spec.names.singular = spec.names.kind.toLowerCase();
    if (!spec.names.listKind && spec.names.kind) spec.names.listKind = `${spec.names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  spec.conversion.strategy ??= 'None';
  if (spec.conversion.strategy === 'Webhook' && spec.conversion.webhook?.clientConfig?.service) {
    spec.conversion.webhook.clientConfig.service.port ??= 443;
  }
  for (const v of spec.versions ?? []) {
    if (v.subresources?.scale === undefined) continue;
  }
}

export function toInternal(crd: CustomResourceDefinition): InternalSpec {
  const spec = crd.spec;
  const versions: InternalVersion[] = (spec.versions ?? []).map((v) => ({ ...v }));
  const out: InternalSpec = {
    group: spec.group ?? '',
    names: spec.names ?? ({} as InternalSpec['names']),
    scope: spec.scope ?? '',
    version: versions[0]?.name ?? '',
    versions,
    preserveUnknownFields: spec.preserveUnknownFields === true,
  };
  if (spec.conversion) {
    out.conversion = {
      ...(spec.conversion.strategy !== undefined && { strategy: spec.conversion.strategy }),
      ...(spec.conversion.webhook?.clientConfig && {
        webhookClientConfig: spec.conversion.webhook.clientConfig,
      }),
      ...(spec.conversion.webhook?.conversionReviewVersions && {
        conversionReviewVersions: spec.conversion.webhook.conversionReviewVersions,
      }),
    };
  }
  if (versions.length > 0) {
    const first = versions[0] as InternalVersion;
    const same = (get: (v: InternalVersion) => unknown) =>
      versions.every((v) => deepEqualJSON(get(v) ?? null, get(first) ?? null));
    if (same((v) => v.subresources)) {
      out.subresources = first.subresources;
      for (const v of versions) v.subresources = undefined;
    }
    if (same((v) => v.schema)) {
      out.validation = first.schema;
      for (const v of versions) v.schema = undefined;
    }
    const cols = (v: InternalVersion) =>
      v.additionalPrinterColumns?.length ? v.additionalPrinterColumns : null;
    if (same(cols)) {
      out.additionalPrinterColumns = first.additionalPrinterColumns;
      for (const v of versions) v.additionalPrinterColumns = undefined;
    }
    const sel = (v: InternalVersion) => (v.selectableFields?.length ? v.selectableFields : null);
    if (same(sel)) {
      out.selectableFields = first.selectableFields;
      for (const v of versions) v.selectableFields = undefined;
    }
  }
  return out;
}
