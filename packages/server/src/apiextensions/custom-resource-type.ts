import {
  type CompiledSchema,
  type CustomResourceColumnDefinition,
  type CustomResourceDefinition,
  columnCell,
  compileSchema,
  evaluateJsonPath,
  type JSONSchemaProps,
  validateCustomResource,
} from 'kubeloop/schema';
import type { KindBehaviour, TableColumnDefinition } from '../registry/shared/behaviour.js';
import { docs } from '../registry/shared/descriptions.js';
import { ALL_VERBS, type ResourceType } from '../registry/types.js';
import type { Obj } from '../util/object.js';

/** The columns a CRD without `additionalPrinterColumns` shows (apiextensions' default). */
const DEFAULT_COLUMNS: CustomResourceColumnDefinition[] = [
  {
    name: 'Age',
    type: 'date',
    description: docs.meta.creationTimestamp,
    jsonPath: '.metadata.creationTimestamp',
  },
];

const NAME_COLUMN: TableColumnDefinition = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: docs.meta.name,
  priority: 0,
};

const PERMISSIVE: JSONSchemaProps = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/**
 * The resource types an established CRD serves: one per served version, sharing storage
 * (objects live at the storage version) and each with its own schema, columns, selectable
 * fields and subresources.
 */
export function customResourceTypes(
  crd: CustomResourceDefinition,
  acceptedNames: Obj,
  compile: (schema: JSONSchemaProps) => CompiledSchema = (schema) =>
    compileSchema(schema, { isResourceRoot: true }),
): ResourceType[] {
  const spec = crd.spec;
  const storage = spec.versions.find((v) => v.storage)?.name ?? spec.versions[0]?.name ?? '';
  const conversion = spec.conversion?.strategy === 'Webhook' ? 'Webhook' : 'None';
  const names = acceptedNames as {
    plural: string;
    singular?: string;
    kind: string;
    listKind?: string;
    shortNames?: string[];
    categories?: string[];
  };
  const namespaced = spec.scope !== 'Cluster';
  const versionSchemas = new Map(
    spec.versions.map((v) => [v.name, compile((v.schema?.openAPIV3Schema ?? PERMISSIVE) as JSONSchemaProps)]),
  );
  const out: ResourceType[] = [];
  for (const v of spec.versions) {
    if (!v.served) continue;
    const schema = (v.schema?.openAPIV3Schema ?? PERMISSIVE) as JSONSchemaProps;
    const schemaCompiled = versionSchemas.get(v.name) ?? compile(schema);
    const scale = v.subresources?.scale;
    const kindRef = {
      group: spec.group,
      version: v.name,
      kind: names.kind,
      namespaced,
      ...(scale && {
        scale: {
          specReplicasPath: scale.specReplicasPath,
          statusReplicasPath: scale.statusReplicasPath,
          ...(scale.labelSelectorPath && { labelSelectorPath: scale.labelSelectorPath }),
        },
      }),
    };
    const columns = v.additionalPrinterColumns?.length ? v.additionalPrinterColumns : DEFAULT_COLUMNS;
    const behaviour: KindBehaviour = {
      defaults: (obj) => schemaCompiled.applyDefaults(obj),
      // The generic registry validates ObjectMeta for every kind already.
      validate: (obj, old) =>
        validateCustomResource(schemaCompiled, obj, kindRef, old, { objectMeta: false }),
      columns: [
        NAME_COLUMN,
        ...columns.map((c) => ({
          name: c.name,
          type: c.type,
          format: c.format ?? '',
          // tableconvertor.New: the column's description, or where it comes from.
          description:
            c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
          priority: c.priority ?? 0,
        })),
      ],
      row: (obj: Obj, now: Date) => [
        (obj.metadata as Obj | undefined)?.name ?? '',
        ...columns.map((c) => columnCell(obj, c, now.getTime())),
      ],
      fieldSelectors: Object.fromEntries(
        (v.selectableFields ?? []).map((f) => [
          f.jsonPath.replace(/^\./, ''),
          (obj: Obj) => {
            const [value] = evaluateJsonPath(obj, f.jsonPath);
            return value === undefined || value === null ? '' : String(value);
          },
        ]),
      ),
    };
    out.push({
      group: spec.group,
      version: v.name,
      resource: names.plural,
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      singular: names.singular ?? names.kind.toLowerCase(),
      namespaced,
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      verbs: ALL_VERBS,
      subresources: {
        ...(v.subresources?.status && { status: true }),
        ...(scale && {
          scale: {
            specReplicasPath: scale.specReplicasPath,
            statusReplicasPath: scale.statusReplicasPath,
            ...(scale.labelSelectorPath && { labelSelectorPath: scale.labelSelectorPath }),
          },
        }),
      },
      generation: true,
      nameValidation: 'subdomain',
      allowUnconditionalUpdate: false,
      // The custom resource store does not set ReturnDeletedObject: DELETE answers a Status.
      returnDeletedObject: false,
      behaviour,
      custom: {
        compiled: schemaCompiled,
        schema,
        storageVersion: storage,
        versionSchemas,
        conversion,
        ...(v.deprecated && {
          deprecationWarning: v.deprecationWarning ?? `${spec.group}/${v.name} ${names.kind} is deprecated`,
        }),
      },
    });
  }
  return out;
}
