/**
 * TypeBox speaks JSON Schema (draft 2020-12); a CRD speaks Kubernetes' OpenAPI v3 dialect, which
 * must also be *structural*: one type per field, nothing specified only inside `anyOf`/`allOf`,
 * no references. This pass rewrites what has a Kubernetes equivalent and refuses, naming the
 * field, what Kubernetes would refuse.
 *
 * | TypeBox emits                              | Kubernetes gets                                   |
 * |--------------------------------------------|---------------------------------------------------|
 * | `const: x` (Literal)                       | `enum: [x]`                                       |
 * | `enum` without `type` (Enum)               | `type` inferred from the values                   |
 * | `anyOf: [T, {type: null}]` (Union w/ Null) | `T` + `nullable: true`                            |
 * | `anyOf` of literals                        | one `enum`                                        |
 * | `anyOf: [integer, string]`                 | `x-kubernetes-int-or-string`                      |
 * | `anyOf` of same-typed schemas              | a merged skeleton + `anyOf` of value validations  |
 * | `allOf` (Intersect)                        | a merged skeleton + the members' validations      |
 * | `patternProperties: {'^.*$': V}` (Record)  | `additionalProperties: V`                         |
 * | `additionalProperties: true`               | `x-kubernetes-preserve-unknown-fields: true`      |
 * | `additionalProperties: false`              | dropped: Kubernetes prunes unknown fields anyway  |
 * | `{}` (Unknown, Any)                        | `x-kubernetes-preserve-unknown-fields: true`      |
 * | `exclusiveMinimum: n`                      | `minimum: n, exclusiveMinimum: true`              |
 * | `$ref`, `$defs`, `patternProperties`, tuples, `type: null`, `if`/`then`, `dependentRequired`, … | an error naming the field |
 */
import type { JSONSchemaProps } from '../types.js';
import {
  ANY_KEY_PATTERNS,
  DROPPED,
  INT_OR_STRING_ANY_OF,
  isIntOrStringAnyOf,
  isObj,
  join,
  jsonEqual,
  mergeResidue,
  type Obj,
  REFUSED,
  reorder,
  residueOf,
  SCALAR_KEYWORDS,
  skeletonOf,
  TYPES,
  typeOfValues,
} from './dialect-keywords.js';

/** One thing the dialect pass could not translate. */
export interface DialectProblem {
  /** Where, as a path into the object (`spec.ports[*].name`; `[*]` is any item or map value). */
  readonly path: string;
  /** The JSON Schema keyword at fault, when one is. */
  readonly keyword?: string;
  readonly message: string;
}

/** Thrown when a TypeBox schema cannot become a Kubernetes structural schema. */
export class SchemaDialectError extends Error {
  override readonly name = 'SchemaDialectError';
  constructor(
    readonly problems: readonly DialectProblem[],
    context = '',
  ) {
    super(
      `${context ? `${context}: ` : ''}the schema cannot be expressed as a Kubernetes structural schema:\n${problems
        .map((p) => `  - ${p.path || '<root>'}: ${p.message}`)
        .join('\n')}`,
    );
  }
}

/** Options of {@link toKubernetesSchema}. */
export interface DialectOptions {
  /** The path of the schema inside the object, used in messages (e.g. `spec`). */
  path?: string;
}

class Pass {
  readonly problems: DialectProblem[] = [];

  refuse(path: string, message: string, keyword?: string): void {
    this.problems.push({ path, message, ...(keyword !== undefined && { keyword }) });
  }

  /** A schema node (a field's full schema). */
  node(input: unknown, path: string): Obj {
    if (!isObj(input)) {
      this.refuse(
        path,
        typeof input === 'boolean'
          ? `a boolean schema (${input}) is not supported: use Kube.Any() to accept any value`
          : 'not a schema object',
      );
      return {};
    }
    const s = input;
    // TypeBox keeps refinements (JavaScript functions) in a non-enumerable key: no schema can carry them.
    if (Object.hasOwn(s, '~refine'))
      this.refuse(
        path,
        'Type.Refine runs JavaScript, which a CRD cannot carry: express the check as a CEL rule (x-kubernetes-validations)',
        'refine',
      );
    if (s.type === undefined && !s['x-kubernetes-int-or-string']) {
      if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) return this.union(s, path);
      if (Array.isArray(s.allOf)) return this.intersect(s, path);
    }
    const out = this.keywords(s, path, false);
    if (out.type === undefined && !out['x-kubernetes-int-or-string']) {
      const keys = Object.keys(out).filter(
        (k) => !['description', 'title', 'example', 'default'].includes(k),
      );
      if (keys.length === 0 || (keys.length === 1 && out['x-kubernetes-preserve-unknown-fields'] === true))
        out['x-kubernetes-preserve-unknown-fields'] = true;
      else if (
        !out['x-kubernetes-preserve-unknown-fields'] ||
        keys.some((k) => !k.startsWith('x-kubernetes'))
      )
        this.refuse(
          path,
          'has no type: Kubernetes needs exactly one type per field (use Kube.Any() to accept any value)',
          'type',
        );
    }
    return out;
  }

  /** Value validations inside anyOf/allOf/oneOf/not beside a type: no structural rewriting. */
  junctor(input: unknown, path: string): Obj {
    if (!isObj(input)) {
      this.refuse(path, 'not a schema object');
      return {};
    }
    return this.keywords(input, path, true);
  }

  private keywords(s: Obj, path: string, inJunctor: boolean): Obj {
    const out: Obj = {};
    const sub = (v: unknown, p: string) => (inJunctor ? this.junctor(v, p) : this.node(v, p));
    for (const [key, value] of Object.entries(s)) {
      if (key.startsWith('~') || DROPPED.has(key)) continue;
      const refused = REFUSED[key];
      if (refused !== undefined) {
        this.refuse(path, refused, key);
        continue;
      }
      switch (key) {
        case 'type':
          this.type(value, out, path);
          break;
        case 'nullable':
          if (value === true) out.nullable = true;
          break;
        case 'const':
          // Merged with any enum below.
          break;
        case 'enum':
          if (!Array.isArray(value)) this.refuse(path, 'enum must be a list', 'enum');
          else out.enum = [...value];
          break;
        case 'required':
          if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
            this.refuse(path, 'required must be a list of property names', 'required');
          else if (value.length > 0) out.required = [...new Set(value as string[])];
          break;
        case 'exclusiveMinimum':
        case 'exclusiveMaximum':
          this.exclusive(key, value, s, out, path);
          break;
        case 'minimum':
        case 'maximum':
          if (typeof value === 'bigint') out[key] = Number(value);
          else if (out[key] === undefined) out[key] = value;
          break;
        case 'uniqueItems':
          if (value === true)
            this.refuse(
              path,
              "uniqueItems is refused by Kubernetes (quadratic cost): use x-kubernetes-list-type 'set' (Kube.ListSet) or 'map' (Kube.ListMap)",
              key,
            );
          break;
        case 'items':
          if (Array.isArray(value))
            this.refuse(path, 'Kubernetes does not support tuples: use Type.Array with one item schema', key);
          else out.items = sub(value, `${path}[*]`);
          break;
        case 'properties':
          if (!isObj(value)) this.refuse(path, 'properties must be an object', key);
          else {
            const props: Obj = {};
            for (const [name, prop] of Object.entries(value)) props[name] = sub(prop, join(path, name));
            // `properties: {}` (an empty Type.Object) prunes exactly what no properties prunes.
            if (Object.keys(props).length > 0) out.properties = props;
          }
          break;
        case 'additionalProperties':
          this.additionalProperties(value, s, out, path, inJunctor);
          break;
        case 'patternProperties':
          this.patternProperties(value, s, out, path, inJunctor);
          break;
        case 'anyOf':
        case 'allOf':
        case 'oneOf':
          if (!Array.isArray(value)) this.refuse(path, `${key} must be a list`, key);
          else if (s['x-kubernetes-int-or-string'] && key === 'anyOf' && isIntOrStringAnyOf(value))
            out.anyOf = INT_OR_STRING_ANY_OF();
          else out[key] = value.map((v, i) => this.junctor(v, `${path}(${key}[${i}])`));
          break;
        case 'not':
          out.not = this.junctor(value, `${path}(not)`);
          break;
        case 'x-kubernetes-validations':
          if (!Array.isArray(value) || value.some((r) => !isObj(r) || typeof r.rule !== 'string'))
            this.refuse(path, 'x-kubernetes-validations must be a list of { rule, message?, … }', key);
          else if (value.length > 0) out[key] = value.map((r) => ({ ...(r as Obj) }));
          break;
        default:
          if (SCALAR_KEYWORDS.has(key)) {
            if (value !== undefined) out[key] = typeof value === 'bigint' ? Number(value) : value;
          } else this.refuse(path, `"${key}" is not part of Kubernetes' schema dialect`, key);
      }
    }
    if (s.const !== undefined) {
      const enumValues = out.enum as unknown[] | undefined;
      if (enumValues && !enumValues.some((v) => jsonEqual(v, s.const)))
        this.refuse(path, 'const is not one of enum: no value can match', 'const');
      out.enum = [s.const];
    }
    if (
      !inJunctor &&
      out.type === undefined &&
      Array.isArray(out.enum) &&
      !out['x-kubernetes-int-or-string']
    ) {
      const t = typeOfValues(out.enum as unknown[]);
      if (t) out.type = t;
      else
        this.refuse(
          path,
          'enum values of different JSON types cannot share one field in Kubernetes (one type per field)',
          'enum',
        );
    }
    return reorder(out);
  }

  private type(value: unknown, out: Obj, path: string): void {
    let types = Array.isArray(value) ? [...value] : [value];
    if (types.includes('null')) {
      if (types.length === 1) {
        this.refuse(
          path,
          'type null is refused by Kubernetes: use nullable (Kube.Nullable(T) or Type.Union([T, Type.Null()]))',
          'type',
        );
        return;
      }
      out.nullable = true;
      types = types.filter((t) => t !== 'null');
    }
    if (types.length === 2 && types.includes('integer') && types.includes('string')) {
      out['x-kubernetes-int-or-string'] = true;
      out.anyOf = INT_OR_STRING_ANY_OF();
      return;
    }
    if (types.length !== 1) {
      this.refuse(
        path,
        `a field of types ${types.join(', ')} cannot be structural (one type per field)`,
        'type',
      );
      return;
    }
    const t = types[0];
    if (typeof t !== 'string' || !TYPES.has(t)) {
      this.refuse(
        path,
        `type ${JSON.stringify(t)} is not a JSON type Kubernetes stores (object, array, string, integer, number, boolean)`,
        'type',
      );
      return;
    }
    out.type = t;
  }

  private exclusive(
    key: 'exclusiveMinimum' | 'exclusiveMaximum',
    value: unknown,
    s: Obj,
    out: Obj,
    path: string,
  ) {
    const bound = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
    if (typeof value === 'boolean') {
      if (value) out[key] = true;
      return;
    }
    const n = typeof value === 'bigint' ? Number(value) : value;
    if (typeof n !== 'number') {
      this.refuse(path, `${key} must be a number`, key);
      return;
    }
    // JSON Schema 2020's numeric form; OpenAPI v3.0 pairs a bound with a boolean. Keep the stricter.
    const inclusive = typeof s[bound] === 'bigint' ? Number(s[bound]) : s[bound];
    if (typeof inclusive === 'number') {
      const exclusiveIsStricter = bound === 'minimum' ? n >= inclusive : n <= inclusive;
      if (!exclusiveIsStricter) return;
    }
    out[bound] = n;
    out[key] = true;
  }

  private additionalProperties(value: unknown, s: Obj, out: Obj, path: string, inJunctor: boolean): void {
    if (value === false) return; // Kubernetes prunes (or, with kubectl, rejects) unknown fields anyway.
    if (value === true) {
      if (!inJunctor) out['x-kubernetes-preserve-unknown-fields'] = true;
      return;
    }
    if (isObj(s.properties) && Object.keys(s.properties).length > 0) {
      this.refuse(
        path,
        'Kubernetes refuses additionalProperties beside properties: a field is either an object with known properties or a map',
        'additionalProperties',
      );
      return;
    }
    out.additionalProperties = inJunctor ? this.junctor(value, `${path}[*]`) : this.node(value, `${path}[*]`);
  }

  private patternProperties(value: unknown, s: Obj, out: Obj, path: string, inJunctor: boolean): void {
    if (!isObj(value)) {
      this.refuse(path, 'patternProperties must be an object', 'patternProperties');
      return;
    }
    const entries = Object.entries(value);
    if (entries.length === 0) return;
    const [pattern, schema] = entries[0]!;
    if (entries.length > 1 || !ANY_KEY_PATTERNS.has(pattern)) {
      this.refuse(
        path,
        `patternProperties is refused by Kubernetes; a map's keys cannot be constrained by a pattern (${entries
          .map(([p]) => JSON.stringify(p))
          .join(', ')}): use Kube.Map(V) with a CEL rule such as { rule: "self.all(k, k.matches('…'))" }`,
        'patternProperties',
      );
      return;
    }
    if (s.additionalProperties !== undefined && s.additionalProperties !== false) {
      this.refuse(
        path,
        'patternProperties beside additionalProperties cannot be expressed',
        'patternProperties',
      );
      return;
    }
    if (isObj(s.properties) && Object.keys(s.properties).length > 0) {
      this.refuse(
        path,
        'Kubernetes refuses a map (Record) beside properties: a field is either an object with known properties or a map',
        'patternProperties',
      );
      return;
    }
    out.additionalProperties = inJunctor
      ? this.junctor(schema, `${path}[*]`)
      : this.node(schema, `${path}[*]`);
  }

  /** A TypeBox Union (anyOf/oneOf without a type of its own). */
  private union(s: Obj, path: string): Obj {
    const key = Array.isArray(s.anyOf) ? 'anyOf' : 'oneOf';
    const own = { ...s };
    delete own[key];
    let nullable = false;
    const branches: unknown[] = [];
    for (const b of s[key] as unknown[]) {
      if (isObj(b) && b.type === 'null' && Object.keys(b).every((k) => k === 'type' || k === 'description'))
        nullable = true;
      else branches.push(b);
    }
    if (branches.length === 0) {
      this.refuse(path, 'type null is refused by Kubernetes: a field must have a type besides null', 'type');
      return {};
    }
    const converted = branches.map((b) => this.node(b, path));
    let out: Obj;
    if (converted.length === 1) out = converted[0]!;
    else out = this.combine(converted, path, key);
    // Options given to the Union itself (description, default, CEL rules) apply to the field.
    const ownOut = this.keywords(own, path, false);
    for (const [k, v] of Object.entries(ownOut)) {
      if (k === 'x-kubernetes-validations' && Array.isArray(out[k]))
        out[k] = [...(out[k] as unknown[]), ...(v as unknown[])];
      else out[k] = v;
    }
    if (nullable) out.nullable = true;
    return reorder(out);
  }

  private combine(converted: Obj[], path: string, key: 'anyOf' | 'oneOf'): Obj {
    if (converted.some((c) => c.type === undefined && c['x-kubernetes-preserve-unknown-fields'] === true))
      return { 'x-kubernetes-preserve-unknown-fields': true };
    // Literals of one type: a single enum.
    const literal = (c: Obj) =>
      Array.isArray(c.enum) && Object.keys(c).every((k) => k === 'type' || k === 'enum');
    const types = new Set(converted.map((c) => (c['x-kubernetes-int-or-string'] ? 'int-or-string' : c.type)));
    if (converted.every(literal) && types.size === 1) {
      const values: unknown[] = [];
      for (const c of converted)
        for (const v of c.enum as unknown[]) if (!values.some((x) => jsonEqual(x, v))) values.push(v);
      return { type: converted[0]!.type, enum: values };
    }
    if (converted.length === 2 && types.size === 2 && types.has('integer') && types.has('string'))
      return this.intOrString(converted, path);
    if (types.size !== 1 || types.has(undefined)) {
      this.refuse(
        path,
        `a union of ${[...types].map((t) => t ?? 'untyped').join(' and ')} cannot be expressed in a structural schema (Kubernetes needs one type per field; only int-or-string and null are special): use Kube.Any() to accept any value, or a CEL rule`,
        key,
      );
      return {};
    }
    const skeleton = this.mergeSkeletons(
      converted.map((c) => skeletonOf(c)),
      path,
      'union',
    );
    const residues = converted.map((c) => residueOf(c));
    if (residues.some((r) => Object.keys(r).length === 0)) return skeleton;
    if (residues.every((r) => jsonEqual(r, residues[0]))) return { ...skeleton, ...residues[0] };
    if (residues.some((r) => r.additionalProperties !== undefined)) {
      this.refuse(
        path,
        'a union of maps whose values differ cannot be expressed in a structural schema',
        key,
      );
      return skeleton;
    }
    return { ...skeleton, [key]: residues };
  }

  private intOrString(converted: Obj[], path: string): Obj {
    const out: Obj = { 'x-kubernetes-int-or-string': true, anyOf: INT_OR_STRING_ANY_OF() };
    // Keywords of one JSON type apply to that type only, so they can sit beside the anyOf.
    const allowed: Record<string, Set<string>> = {
      integer: new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']),
      string: new Set(['pattern', 'minLength', 'maxLength']),
    };
    for (const c of converted) {
      const t = c.type as string;
      for (const [k, v] of Object.entries(c)) {
        if (k === 'type' || k === 'description') continue;
        if (allowed[t]?.has(k)) out[k] = v;
        else
          this.refuse(
            path,
            `int-or-string: "${k}" of the ${t} branch cannot be expressed; use a CEL rule (x-kubernetes-validations)`,
            k,
          );
      }
    }
    return out;
  }

  /** A TypeBox Intersect (allOf without a type of its own). */
  private intersect(s: Obj, path: string): Obj {
    const own = { ...s };
    delete own.allOf;
    const converted = (s.allOf as unknown[]).map((b) => this.node(b, path));
    const types = new Set(converted.map((c) => c.type));
    if (types.size !== 1 || types.has(undefined)) {
      this.refuse(
        path,
        `an intersection of ${[...types].map((t) => t ?? 'untyped').join(' and ')} cannot be expressed in a structural schema`,
        'allOf',
      );
      return {};
    }
    const out = this.mergeSkeletons(
      converted.map((c) => skeletonOf(c)),
      path,
      'intersection',
    );
    let node: Obj = out;
    const extra: Obj[] = [];
    for (const r of converted.map((c) => residueOf(c))) {
      if (Object.keys(r).length === 0) continue;
      // Each member's constraints join the merged node where they do not collide, else stay in allOf.
      const merged = mergeResidue(node, r);
      if (merged) node = merged;
      else extra.push(r);
    }
    if (extra.length > 0) node.allOf = extra;
    for (const [k, v] of Object.entries(this.keywords(own, path, false))) node[k] = v;
    return reorder(node);
  }

  /** Merges the skeletons (types, properties, items) of alternatives or members into one. */
  private mergeSkeletons(skeletons: Obj[], path: string, what: 'union' | 'intersection'): Obj {
    const out: Obj = {};
    for (const s of skeletons) {
      for (const [k, v] of Object.entries(s)) {
        const prev = out[k];
        if (prev === undefined) {
          out[k] = v;
          continue;
        }
        if (k === 'properties') {
          const merged: Obj = { ...(prev as Obj) };
          for (const [name, prop] of Object.entries(v as Obj)) {
            const p = merged[name];
            merged[name] =
              p === undefined ? prop : this.mergeSkeletons([p as Obj, prop as Obj], join(path, name), what);
          }
          out.properties = merged;
        } else if (k === 'items' || k === 'additionalProperties') {
          out[k] =
            isObj(prev) && isObj(v)
              ? this.mergeSkeletons([prev, v], `${path}[*]`, what)
              : jsonEqual(prev, v)
                ? v
                : this.conflict(path, k, what);
        } else if (k === 'x-kubernetes-validations' && what === 'intersection') {
          out[k] = [...(prev as unknown[]), ...(v as unknown[])];
        } else if (k === 'description' || k === 'title' || k === 'example') {
          // Documentation of the first alternative wins.
        } else if (!jsonEqual(prev, v)) this.conflict(path, k, what);
      }
    }
    return out;
  }

  private conflict(path: string, keyword: string, what: string): undefined {
    this.refuse(
      path,
      `the ${what}'s alternatives disagree on "${keyword}", which Kubernetes needs once per field (structural schema)`,
      keyword,
    );
    return undefined;
  }
}

export function toKubernetesSchema(schema: unknown, options: DialectOptions = {}): JSONSchemaProps {
  const pass = new Pass();
  const out = pass.node(schema, options.path ?? '');
  if (pass.problems.length > 0) throw new SchemaDialectError(pass.problems);
  return out as JSONSchemaProps;
}

/** Like {@link toKubernetesSchema}, but returns the problems instead of throwing. */
export function checkKubernetesSchema(
  schema: unknown,
  options: DialectOptions = {},
): { schema: JSONSchemaProps; problems: DialectProblem[] } {
  const pass = new Pass();
  const out = pass.node(schema, options.path ?? '');
  return { schema: out as JSONSchemaProps, problems: pass.problems };
}
