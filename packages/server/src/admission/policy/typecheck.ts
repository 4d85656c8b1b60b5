/**
 * Type checking of a policy's expressions against the kinds it matches (validating/typechecking.go
 * `TypeChecker.Check`): `object` and `oldObject` typed by each matched kind's OpenAPI schema (the
 * built-in definitions, a custom resource's CRD schema), `params` by the paramKind's; each
 * validation's expression and messageExpression that does not compile for a kind gets a warning
 * `<group/version, Kind=K>: <cel-go issues>`.
 */
import { Environment } from '@marcbachmann/cel-js';
import { escapeCelName, registerKubernetesLibraries } from 'kubeloop/schema';
import { builtinSpec, V3_REF_PREFIX } from '../../openapi/builtin.js';
import type { Registry } from '../../registry/registry.js';
import { collectionPrefix, type Store } from '../../storage/store.js';
import { isObject, type Obj } from '../../util/object.js';
import { AdmissionCelEnv } from '../cel/index.js';
import { groupVersion } from './compile.js';

/** `ExpressionWarning`. */
export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

interface Gvk {
  group: string;
  version: string;
  kind: string;
}

const MAX_TYPES_TO_CHECK = 10;
/** Nesting beyond which a schema is typed dyn (recursive definitions such as JSONSchemaProps). */
const MAX_DEPTH = 12;
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

const gvkString = (g: Gvk) =>
  `${g.group ? `${g.group}/` : '/'}${g.version}, Kind=${g.kind}`.replace(/^\/(?=v)/, '/');

/** Registers cel-js types for OpenAPI schemas on one environment. */
class SchemaTypes {
  private n = 0;
  constructor(
    readonly env: Environment,
    private readonly definitions: ReadonlyMap<string, Obj>,
  ) {}

  typeOf(schema: unknown, depth: number): string {
    if (!isObject(schema) || depth > MAX_DEPTH) return 'dyn';
    const ref = refOf(schema);
    if (ref !== undefined) return this.typeOf(this.definitions.get(ref), depth + 1);
    if (schema['x-kubernetes-int-or-string'] === true || schema.format === 'int-or-string') return 'dyn';
    switch (schema.type) {
      case 'string':
        if (schema.format === 'byte') return 'bytes';
        if (schema.format === 'date-time' || schema.format === 'date') return 'google.protobuf.Timestamp';
        if (schema.format === 'duration') return 'google.protobuf.Duration';
        return 'string';
      case 'integer':
        return 'int';
      case 'number':
        return 'double';
      case 'boolean':
        return 'bool';
      case 'array':
        return `list<${this.typeOf(schema.items, depth + 1)}>`;
      default: {
        const props = isObject(schema.properties) ? schema.properties : undefined;
        if (isObject(schema.additionalProperties))
          return `map<string, ${this.typeOf(schema.additionalProperties, depth + 1)}>`;
        if (!props)
          return schema['x-kubernetes-preserve-unknown-fields'] === true || schema.type !== 'object'
            ? 'dyn'
            : 'map<string, dyn>';
        const fields: Record<string, string> = {};
        for (const [k, p] of Object.entries(props)) {
          const name = escapeCelName(k);
          if (name) fields[name] = this.typeOf(p, depth + 1);
        }
        const typeName = `Object${this.n++}`;
        this.env.registerType(typeName, { fields });
        return typeName;
      }
    }
  }
}

function refOf(schema: Obj): string | undefined {
  const direct = typeof schema.$ref === 'string' ? schema.$ref : undefined;
  const viaAllOf =
    Array.isArray(schema.allOf) && schema.allOf.length === 1 && isObject(schema.allOf[0])
      ? schema.allOf[0].$ref
      : undefined;
  const ref = direct ?? (typeof viaAllOf === 'string' ? viaAllOf : undefined);
  return ref?.startsWith(V3_REF_PREFIX) ? ref.slice(V3_REF_PREFIX.length) : undefined;
}

/** The OpenAPI schema of a kind: its built-in definition, or its CRD's schema with ObjectMeta. */
function schemaOf(gvk: Gvk, store: Store): Obj | undefined {
  const spec = builtinSpec();
  const def = spec.byGvk.get(`${gvk.group}/${gvk.version}/${gvk.kind}`);
  if (def) return spec.schemas.get(def);
  for (const s of store.list(collectionPrefix('apiextensions.k8s.io', 'customresourcedefinitions')).items) {
    const crd = s.object as Obj;
    const cs = (crd.spec ?? {}) as Obj;
    if (cs.group !== gvk.group || (cs.names as Obj | undefined)?.kind !== gvk.kind) continue;
    const version = (Array.isArray(cs.versions) ? cs.versions : []).find(
      (v) => isObject(v) && v.name === gvk.version,
    ) as Obj | undefined;
    const schema = (version?.schema as Obj | undefined)?.openAPIV3Schema as Obj | undefined;
    if (!schema) return undefined;
    return {
      ...schema,
      type: 'object',
      properties: {
        ...((schema.properties as Obj | undefined) ?? {}),
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { $ref: `${V3_REF_PREFIX}${OBJECT_META}` },
      },
    };
  }
  return undefined;
}

/** `typesToCheck`: the kinds of the exact (no wildcard) resources of `matchConstraints.resourceRules`. */
function typesToCheck(policy: Obj, registry: Registry): Gvk[] {
  const rules = ((policy.spec as Obj | undefined)?.matchConstraints as Obj | undefined)?.resourceRules;
  const out = new Map<string, Gvk>();
  const strs = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  for (const rule of Array.isArray(rules) ? rules : []) {
    if (!isObject(rule)) continue;
    const groups = strs(rule.apiGroups);
    const versions = strs(rule.apiVersions);
    if (groups.some((g) => g.includes('*')) || versions.some((v) => v.includes('*'))) continue;
    const resources = strs(rule.resources).filter((r) => !/[*/]/.test(r));
    let count = 0;
    for (const g of [...groups].sort())
      for (const v of [...versions].sort())
        for (const r of [...resources].sort()) {
          const t = registry.lookup(g, v, r);
          if (!t) continue;
          out.set(`${t.group}/${t.version}/${t.kind}`, { group: t.group, version: t.version, kind: t.kind });
          if (++count === MAX_TYPES_TO_CHECK) return sorted(out);
        }
  }
  return sorted(out);
}

const sorted = (m: Map<string, Gvk>): Gvk[] =>
  [...m.values()].sort(
    (a, b) =>
      a.group.localeCompare(b.group) || a.version.localeCompare(b.version) || a.kind.localeCompare(b.kind),
  );

/** The warnings of a policy's validations, as the status controller writes them. */
export function typeCheckPolicy(policy: Obj, registry: Registry, store: Store): ExpressionWarning[] {
  const spec = (policy.spec ?? {}) as Obj;
  const gvks = typesToCheck(policy, registry);
  if (gvks.length === 0) return [];
  const pk = spec.paramKind as Obj | undefined;
  const paramGvk = isObject(pk)
    ? { ...groupVersion(String(pk.apiVersion ?? '')), kind: String(pk.kind ?? '') }
    : undefined;
  const paramSchema = paramGvk ? schemaOf(paramGvk, store) : undefined;
  const variables = (Array.isArray(spec.variables) ? spec.variables : []).filter(isObject).map((v) => ({
    name: String(v.name ?? ''),
    expression: String(v.expression ?? ''),
  }));
  const envs: { gvk: Gvk; env: AdmissionCelEnv }[] = [];
  for (const gvk of gvks) {
    const schema = schemaOf(gvk, store);
    if (!schema) continue;
    const env = registerKubernetesLibraries(
      new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false }),
    );
    const types = new SchemaTypes(env, builtinSpec().schemas);
    const object = types.typeOf(schema, 0);
    const params = paramSchema ? types.typeOf(paramSchema, 0) : undefined;
    envs.push({
      gvk,
      env: new AdmissionCelEnv({
        // kube declares params only when their schema is known.
        params: params !== undefined,
        authorizer: true,
        variables,
        typed: { env, object, ...(params && { params }) },
      }),
    });
  }
  const check = (expression: string): string | undefined => {
    const issues: string[] = [];
    for (const { gvk, env } of envs) {
      const c = env.compile(expression);
      if (c.error) issues.push(`${gvkString(gvk)}: ${c.error.replace(/^compilation failed: /, '')}\n`);
    }
    return issues.length > 0 ? issues.join('\n') : undefined;
  };
  const warnings: ExpressionWarning[] = [];
  (Array.isArray(spec.validations) ? spec.validations : []).forEach((v, i) => {
    if (!isObject(v)) return;
    const w = check(String(v.expression ?? ''));
    if (w) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: w });
    if (typeof v.messageExpression === 'string' && v.messageExpression) {
      const m = check(v.messageExpression);
      if (m) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: m });
    }
  });
  return warnings;
}
