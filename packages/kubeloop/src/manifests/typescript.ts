/**
 * The reverse of `defineResource`: TypeScript declarations generated from existing CRDs, so that
 * an operator can use kinds it does not own (cert-manager's Certificate, Prometheus' ServiceMonitor, …)
 * with static types, a typed client and local validation — kube-rs' kopium, kubebuilder's
 * external types.
 */
import { parseAllDocuments } from 'yaml';
import type { JsonObject as Obj } from '../api/object.js';
import { QUANTITY_PATTERN } from '../schema/define/kube.js';
import { pluralOf } from '../schema/define/names.js';
import type {
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
  JSONSchemaProps,
} from '../schema/types.js';

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Thrown when a CRD uses something the generator cannot declare. */
export class CrdConversionError extends Error {
  override readonly name = 'CrdConversionError';
}

/**
 * The CustomResourceDefinitions in a YAML (one or more documents) or JSON text; `List`s are
 * unpacked and other kinds skipped.
 *
 * @example
 * ```ts
 * const crds = parseCustomResourceDefinitions(readFileSync('cert-manager.crds.yaml', 'utf8'));
 * ```
 */
export function parseCustomResourceDefinitions(text: string): CustomResourceDefinition[] {
  const out: CustomResourceDefinition[] = [];
  const visit = (v: unknown) => {
    if (!isObj(v)) return;
    if (Array.isArray(v.items) && typeof v.kind === 'string' && v.kind.endsWith('List'))
      v.items.forEach(visit);
    else if (v.kind === 'CustomResourceDefinition' && isObj(v.spec))
      out.push(v as unknown as CustomResourceDefinition);
  };
  for (const doc of parseAllDocuments(text)) {
    if ('errors' in doc && doc.errors.length > 0)
      throw new CrdConversionError(`invalid YAML: ${doc.errors[0]!.message}`);
    visit(doc.toJS());
  }
  return out;
}

/** Options of {@link crdToTypeScript}. */
export interface CrdToTypeScriptOptions {
  /** The module `defineResource`, `Type`, `Kube` and `Static` come from (default `kubeloop`). */
  importFrom?: string;
  /** The exported name of a CRD's declaration (default its kind; made unique across groups). */
  name?: (crd: CustomResourceDefinition) => string | undefined;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A string literal in single quotes (JSON's escapes are JavaScript's too). */
function str(s: string): string {
  return `'${JSON.stringify(s).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

function key(k: string): string {
  return IDENT.test(k) ? k : str(k);
}

/** A JSON value as a TypeScript literal, on one line when short. */
function literal(v: unknown, indent: string): string {
  if (v === undefined) return 'undefined';
  if (typeof v === 'string') return str(v);
  if (!Array.isArray(v) && !isObj(v)) return JSON.stringify(v);
  const inner = `${indent}  `;
  const parts = Array.isArray(v)
    ? v.map((x) => literal(x, inner))
    : Object.entries(v).map(([k, x]) => `${key(k)}: ${literal(x, inner)}`);
  const [open, close] = Array.isArray(v) ? ['[', ']'] : ['{ ', ' }'];
  if (parts.length === 0) return Array.isArray(v) ? '[]' : '{}';
  const flat = `${open}${parts.join(', ')}${close}`;
  if (flat.length + indent.length <= 100 && !flat.includes('\n')) return flat;
  return `${open.trim()}\n${parts.map((p) => `${inner}${p},`).join('\n')}\n${indent}${close.trim()}`;
}

/** The order options are printed in, so that the output does not depend on the input's key order. */
const OPTION_ORDER = [
  'description',
  'title',
  'type',
  'format',
  'default',
  'enum',
  'nullable',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
  'example',
  'externalDocs',
];

function rankOption(k: string): number {
  const i = OPTION_ORDER.indexOf(k);
  return i < 0 ? OPTION_ORDER.length : i;
}

/** Options object printed after a builder's first argument (nothing when empty). */
function options(o: Obj, indent: string): string {
  const clean = Object.fromEntries(
    Object.entries(o)
      .filter(([, v]) => v !== undefined)
      .sort(
        ([a], [b]) =>
          rankOption(a) - rankOption(b) || (rankOption(a) === OPTION_ORDER.length ? a.localeCompare(b) : 0),
      ),
  );
  return Object.keys(clean).length === 0 ? '' : literal(clean, indent);
}

function omit(s: Obj, ...keys: string[]): Obj {
  const out = { ...s };
  for (const k of keys) delete out[k];
  return out;
}

function isIntOrStringAnyOf(v: unknown): boolean {
  return (
    Array.isArray(v) &&
    v.length === 2 &&
    isObj(v[0]) &&
    isObj(v[1]) &&
    Object.keys(v[0]).length === 1 &&
    Object.keys(v[1]).length === 1 &&
    v[0].type === 'integer' &&
    v[1].type === 'string'
  );
}

/** OpenAPI v3.0's boolean exclusive bounds become TypeBox's numeric ones. */
function numericOptions(s: Obj): Obj {
  const o = { ...s };
  for (const [ex, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (o[ex] === true && typeof o[bound] === 'number') {
      o[ex] = o[bound];
      delete o[bound];
    } else if (typeof o[ex] === 'boolean') delete o[ex]; // Without a bound it constrains nothing.
  }
  return o;
}

function call(fn: string, args: string[]): string {
  const present = args.filter((a) => a !== '');
  return `${fn}(${present.join(', ')})`;
}

function objectProperties(s: Obj, indent: string): { props: string; extraRequired: boolean } {
  const properties = isObj(s.properties) ? s.properties : {};
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const inner = `${indent}  `;
  const lines = Object.entries(properties).map(([name, p]) => {
    const t = schemaToTypeBox(p as JSONSchemaProps, inner);
    return `${inner}${key(name)}: ${required.has(name) ? t : `Type.Optional(${t})`},`;
  });
  const extraRequired = [...required].some((r) => !(r in properties));
  return { props: lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n${indent}}`, extraRequired };
}

/**
 * TypeBox source for one schema node of a CRD (Kubernetes dialect), using `Type` and `Kube`.
 *
 * @example
 * ```ts
 * schemaToTypeBox({ type: 'integer', minimum: 1 }); // 'Type.Integer({ minimum: 1 })'
 * ```
 */
export function schemaToTypeBox(schema: JSONSchemaProps, indent = ''): string {
  let s: Obj = { ...(schema as Obj) };
  if (s.nullable === true)
    return `Kube.Nullable(${schemaToTypeBox(omit(s, 'nullable') as JSONSchemaProps, indent)})`;
  delete s.nullable;
  if (s['x-kubernetes-int-or-string'] === true && isIntOrStringAnyOf(s.anyOf) && s.type === undefined) {
    const rest = omit(s, 'anyOf', 'x-kubernetes-int-or-string');
    if (rest.pattern === QUANTITY_PATTERN)
      return call('Kube.Quantity', [options(omit(rest, 'pattern'), indent)]);
    return call('Kube.IntOrString', [options(rest, indent)]);
  }
  if (s['x-kubernetes-embedded-resource'] === true && s.type === 'object') {
    const rest = omit(s, 'type', 'x-kubernetes-embedded-resource', 'properties', 'required');
    if (isObj(s.properties) && Object.keys(s.properties).length > 0) {
      const { props, extraRequired } = objectProperties(s, indent);
      if (extraRequired) rest.required = s.required;
      return call('Kube.EmbeddedResource', [props, options(rest, indent)]);
    }
    if (rest['x-kubernetes-preserve-unknown-fields'] === true) {
      const o = options(omit(rest, 'x-kubernetes-preserve-unknown-fields'), indent);
      return call('Kube.EmbeddedResource', o ? ['undefined', o] : []);
    }
  }
  if (s.type === undefined) {
    if (s['x-kubernetes-preserve-unknown-fields'] === true)
      return call('Kube.Any', [options(omit(s, 'x-kubernetes-preserve-unknown-fields'), indent)]);
    return `Type.Unsafe<unknown>(${literal(s, indent)})`;
  }
  switch (s.type) {
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean': {
      if (Array.isArray(s.enum)) {
        const rest = omit(s, 'enum');
        if (s.type === 'string') delete rest.type;
        return call('Kube.Enum', [literal(s.enum, indent), options(numericOptions(rest), indent)]);
      }
      s = numericOptions(omit(s, 'type'));
      const fn = {
        string: 'Type.String',
        integer: 'Type.Integer',
        number: 'Type.Number',
        boolean: 'Type.Boolean',
      }[schema.type as 'string'];
      return call(fn, [options(s, indent)]);
    }
    case 'array': {
      if (!isObj(s.items)) return `Type.Unsafe<unknown[]>(${literal(s, indent)})`;
      return call('Type.Array', [
        schemaToTypeBox(s.items as JSONSchemaProps, indent),
        options(omit(s, 'type', 'items'), indent),
      ]);
    }
    case 'object': {
      const hasProps = isObj(s.properties) && Object.keys(s.properties).length > 0;
      if (isObj(s.additionalProperties) && !hasProps)
        return call('Kube.Map', [
          schemaToTypeBox(s.additionalProperties as JSONSchemaProps, indent),
          options(omit(s, 'type', 'additionalProperties'), indent),
        ]);
      const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
      if (!hasProps) {
        if (preserve) {
          const o = options(omit(s, 'type', 'x-kubernetes-preserve-unknown-fields', 'properties'), indent);
          return call('Kube.PreserveUnknownFields', o ? ['undefined', o] : []);
        }
        return call('Type.Object', ['{}', options(omit(s, 'type', 'properties'), indent)]);
      }
      const { props, extraRequired } = objectProperties(s, indent);
      const rest = omit(s, 'type', 'properties', 'required');
      if (extraRequired) rest.required = s.required;
      if (preserve)
        return call('Kube.PreserveUnknownFields', [
          props,
          options(omit(rest, 'x-kubernetes-preserve-unknown-fields'), indent),
        ]);
      return call('Type.Object', [props, options(rest, indent)]);
    }
    default:
      return `Type.Unsafe<unknown>(${literal(s, indent)})`;
  }
}

const STANDARD_ROOT = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status']);

function versionSource(v: CustomResourceDefinitionVersion, indent: string, single: boolean): string[] {
  const root = (v.schema?.openAPIV3Schema ?? {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  }) as Obj;
  const lines: string[] = [];
  const add = (k: string, value: string) => lines.push(`${indent}${k}: ${value},`);
  const known = new Set([
    'type',
    'properties',
    'required',
    'description',
    'x-kubernetes-validations',
    'x-kubernetes-preserve-unknown-fields',
  ]);
  const unknownRoot = Object.keys(root).filter((k) => !known.has(k));
  if (unknownRoot.length > 0)
    throw new CrdConversionError(
      `version ${v.name}: the root schema uses ${unknownRoot.join(', ')}, which defineResource cannot declare`,
    );
  const props = (isObj(root.properties) ? root.properties : {}) as Record<string, JSONSchemaProps>;
  const required = new Set(Array.isArray(root.required) ? (root.required as string[]) : []);
  if (typeof root.description === 'string') add('description', str(root.description));
  const meta = props.metadata as Obj | undefined;
  if (meta && Object.keys(omit(meta, 'type')).length > 0) add('metadata', schemaToTypeBox(meta, indent));
  if (props.spec) {
    const t = schemaToTypeBox(props.spec, indent);
    add('spec', required.has('spec') ? t : `Type.Optional(${t})`);
  }
  if (props.status) add('status', schemaToTypeBox(props.status, indent));
  const extra = Object.entries(props).filter(([n]) => !STANDARD_ROOT.has(n));
  if (extra.length > 0) {
    const inner = `${indent}  `;
    add(
      'properties',
      `{\n${extra
        .map(([n, p]) => {
          const t = schemaToTypeBox(p, inner);
          return `${inner}${key(n)}: ${required.has(n) ? t : `Type.Optional(${t})`},`;
        })
        .join('\n')}\n${indent}}`,
    );
  }
  if (root['x-kubernetes-preserve-unknown-fields'] === true) add('preserveUnknownFields', 'true');
  if (Array.isArray(root['x-kubernetes-validations']))
    add('validations', literal(root['x-kubernetes-validations'], indent));
  if (v.additionalPrinterColumns?.length) add('printerColumns', literal(v.additionalPrinterColumns, indent));
  const hasStatusSub = Boolean(v.subresources?.status);
  if (hasStatusSub !== Boolean(props.status)) add('statusSubresource', String(hasStatusSub));
  if (v.subresources?.scale) add('scale', literal(v.subresources.scale, indent));
  if (v.selectableFields?.length)
    add(
      'selectableFields',
      literal(
        v.selectableFields.map((f) => f.jsonPath),
        indent,
      ),
    );
  if (v.served === false) add('served', 'false');
  if (!single && v.storage) add('storage', 'true');
  if (v.deprecated) add('deprecated', 'true');
  if (v.deprecationWarning !== undefined) add('deprecationWarning', str(v.deprecationWarning));
  return lines;
}

function declaration(crd: CustomResourceDefinition, name: string): string {
  const spec = crd.spec;
  const names = spec.names;
  const lines: string[] = [];
  const add = (k: string, value: string) => lines.push(`  ${k}: ${value},`);
  add('group', str(spec.group));
  add('kind', str(names.kind));
  if (names.plural !== pluralOf(names.kind)) add('plural', str(names.plural));
  if (names.singular && names.singular !== names.kind.toLowerCase()) add('singular', str(names.singular));
  if (names.listKind && names.listKind !== `${names.kind}List`) add('listKind', str(names.listKind));
  if (names.shortNames?.length) add('shortNames', literal(names.shortNames, '  '));
  if (names.categories?.length) add('categories', literal(names.categories, '  '));
  if (spec.scope === 'Cluster') add('scope', "'Cluster'");
  const annotations = Object.fromEntries(
    Object.entries(crd.metadata?.annotations ?? {}).filter(
      ([k]) => k !== 'kubectl.kubernetes.io/last-applied-configuration',
    ),
  );
  if (Object.keys(annotations).length > 0) add('annotations', literal(annotations, '  '));
  if (crd.metadata?.labels && Object.keys(crd.metadata.labels).length > 0)
    add('labels', literal(crd.metadata.labels, '  '));
  if (spec.conversion && spec.conversion.strategy !== 'None')
    add('conversion', literal(spec.conversion, '  '));
  if (spec.versions.length === 1) {
    const v = spec.versions[0]!;
    add('version', str(v.name));
    lines.push(...versionSource(v, '  ', true));
  } else {
    lines.push('  versions: {');
    for (const v of spec.versions) {
      lines.push(`    ${key(v.name)}: {`);
      lines.push(...versionSource(v, '      ', false));
      lines.push('    },');
    }
    lines.push('  },');
  }
  return [
    `/** ${names.kind} (${spec.group}), from the CustomResourceDefinition ${crd.metadata?.name ?? `${names.plural}.${spec.group}`}. */`,
    `export const ${name} = defineResource({`,
    ...lines,
    '});',
    `export type ${name} = Static<typeof ${name}>;`,
  ].join('\n');
}

function pascal(s: string): string {
  return s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

/**
 * A TypeScript module declaring the kinds of one or more CRDs with `defineResource`: static
 * types, CRD, client descriptor and local validation, as if they had been written by hand.
 * Accepts CRD objects or YAML/JSON text. The CRD that the declaration generates has the same
 * schema as the input (round trip).
 *
 * @example
 * ```ts
 * writeFileSync('src/api/external.ts', crdToTypeScript(readFileSync('certificates.yaml', 'utf8')));
 * // export const Certificate = defineResource({ group: 'cert-manager.io', kind: 'Certificate', … });
 * // export type Certificate = Static<typeof Certificate>;
 * ```
 */
export function crdToTypeScript(
  input: string | CustomResourceDefinition | readonly CustomResourceDefinition[],
  opts: CrdToTypeScriptOptions = {},
): string {
  const crds =
    typeof input === 'string'
      ? parseCustomResourceDefinitions(input)
      : Array.isArray(input)
        ? input
        : [input];
  if (crds.length === 0) throw new CrdConversionError('no CustomResourceDefinition found');
  const taken = new Set<string>();
  const decls = (crds as CustomResourceDefinition[]).map((crd) => {
    let name = opts.name?.(crd) ?? crd.spec.names.kind;
    if (taken.has(name)) name = `${name}${pascal(crd.spec.group.split('.')[0] ?? '')}`;
    for (let i = 2; taken.has(name); i++) name = `${crd.spec.names.kind}${i}`;
    taken.add(name);
    return declaration(crd, name);
  });
  const source = decls.join('\n\n');
  const used = [
    'defineResource',
    ...(source.includes('Kube.') ? ['Kube'] : []),
    'type Static',
    ...(source.includes('Type.') ? ['Type'] : []),
  ];
  return [
    '// Generated by kubeloop from CustomResourceDefinitions. Regenerate rather than edit.',
    `import { ${used.join(', ')} } from '${opts.importFrom ?? 'kubeloop'}';`,
    '',
    source,
    '',
  ].join('\n');
}
