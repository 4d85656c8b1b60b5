/**
 * CEL types of schema nodes (`self` typed from the schema) and the CEL values of JSON values
 * (durations, timestamps, int-or-string, objects with their declared fields).
 */
import { Environment } from '@marcbachmann/cel-js';
import type { Structural } from '../structural.js';
import { isObj } from '../util.js';
import { registerKubernetesLibraries } from './library.js';
import { escapeCelName } from './rules.js';

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

export class TypeBuilder {
  private n = 0;
  readonly env: Environment;
  private readonly names = new Map<Structural, string>();
  constructor() {
    this.env = registerKubernetesLibraries(
      new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false }),
    );
  }
  typeOf(s: Structural | undefined, withMeta = false): string {
    if (!s) return 'dyn';
    if (s.intOrString) return 'dyn';
    switch (s.type) {
      case 'string':
        if (s.format === 'byte') return 'bytes';
        if (s.format === 'duration') return 'google.protobuf.Duration';
        if (s.format === 'date' || s.format === 'date-time') return 'google.protobuf.Timestamp';
        return 'string';
      case 'integer':
        return 'int';
      case 'number':
        return 'double';
      case 'boolean':
        return 'bool';
      case 'array':
        return `list<${this.typeOf(s.items)}>`;
      case 'object': {
        if (s.additionalProperties) return `map<string, ${this.typeOf(s.additionalProperties.schema)}>`;
        const meta = withMeta || s.embeddedResource;
        if (!s.properties && !meta)
          return s.preserveUnknownFields ? 'map<string, dyn>' : this.objectType(s, false);
        return this.objectType(s, meta);
      }
      default:
        return 'dyn';
    }
  }
  private objectType(s: Structural, meta: boolean): string {
    const key = meta ? (this.metaKeys.get(s) ?? s) : s;
    const hit = this.names.get(key);
    if (hit) return hit;
    const name = `Object${this.n++}`;
    this.names.set(key, name);
    const fields: Record<string, string> = {};
    for (const [k, p] of Object.entries(s.properties ?? {})) {
      const esc = escapeCelName(k);
      if (esc) fields[esc] = this.typeOf(p);
    }
    if (meta) {
      fields.apiVersion = 'string';
      fields.kind = 'string';
      fields.metadata = this.metaType();
    }
    this.env.registerType(name, { fields });
    return name;
  }
  private readonly metaKeys = new Map<Structural, Structural>();
  private metaName: string | undefined;
  private metaType(): string {
    if (!this.metaName) {
      this.metaName = `ObjectMeta${this.n++}`;
      this.env.registerType(this.metaName, { fields: { name: 'string', generateName: 'string' } });
    }
    return this.metaName;
  }
  /** Registers the root with apiVersion/kind/metadata (kube's `WithTypeAndObjectMeta`). */
  rootType(s: Structural): string {
    this.metaKeys.set(s, { ...s });
    return this.typeOf(s, true);
  }
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

const DurationCtor = (() => {
  const env = new Environment();
  return (env.evaluate('duration("1s")') as object).constructor as new (
    s: bigint,
    n: number,
  ) => unknown;
})();

function genericToCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(genericToCel);
  if (isObj(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = genericToCel(x);
    return out;
  }
  return v;
}

function parseDuration(s: string): unknown {
  const m = /^(-)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$/.exec(s);
  if (!m) return s;
  const secs =
    Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0) + Number(m[5] ?? 0) / 1000;
  const sign = m[1] ? -1 : 1;
  return new DurationCtor(BigInt(Math.trunc(secs) * sign), Math.round((secs % 1) * 1e9) * sign);
}

const jsonKeys = new WeakMap<Structural, Map<string, string>>();

/** CEL field name → JSON property name of an object schema's properties (built once per node). */
function jsonKeysOf(s: Structural): Map<string, string> {
  let m = jsonKeys.get(s);
  if (!m) {
    m = new Map();
    for (const k of Object.keys(s.properties ?? {})) {
      const esc = escapeCelName(k);
      if (esc) m.set(esc, k);
    }
    jsonKeys.set(s, m);
  }
  return m;
}

/**
 * Converts a JSON value into CEL runtime values typed by the schema. `only` limits an object to
 * the fields (by their CEL names) the rules read, so that large objects are not converted whole.
 */
export function toCelValue(
  v: unknown,
  s: Structural | undefined,
  withMeta = false,
  only?: ReadonlySet<string>,
): unknown {
  if (v === null || v === undefined) return null;
  if (!s || s.intOrString) return genericToCel(v);
  switch (s.type) {
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v;
    case 'number':
      return v;
    case 'string':
      if (typeof v !== 'string') return v;
      if (s.format === 'date-time' || s.format === 'date') {
        const d = new Date(v);
        return Number.isNaN(d.getTime()) ? v : d;
      }
      if (s.format === 'duration') return parseDuration(v);
      if (s.format === 'byte') return new Uint8Array(Buffer.from(v, 'base64'));
      return v;
    case 'array':
      return Array.isArray(v) ? v.map((x) => toCelValue(x, s.items)) : v;
    case 'object': {
      if (!isObj(v)) return v;
      const out: Record<string, unknown> = {};
      const meta = withMeta || s.embeddedResource;
      if (only && s.properties) {
        // Convert just the fields the rules read (by their CEL names).
        const keys = jsonKeysOf(s);
        for (const name of only) {
          const k = keys.get(name) ?? name;
          if (!Object.hasOwn(v, k)) continue;
          const x = v[k];
          const prop = s.properties[k];
          if (meta && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) out[k] = genericToCel(x);
          else if (prop) out[name] = toCelValue(x, prop);
          else
            out[k] = s.additionalProperties ? toCelValue(x, s.additionalProperties.schema) : genericToCel(x);
        }
        return out;
      }
      for (const [k, x] of Object.entries(v)) {
        if (meta && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) {
          if (!only || only.has(k)) out[k] = genericToCel(x);
          continue;
        }
        const prop = s.properties?.[k];
        if (prop) {
          const esc = escapeCelName(k);
          if (esc && (!only || only.has(esc))) out[esc] = toCelValue(x, prop);
        } else if (only && !only.has(k)) {
          // not read by any rule
        } else if (s.additionalProperties) {
          out[k] = toCelValue(x, s.additionalProperties.schema);
        } else {
          out[k] = genericToCel(x);
        }
      }
      return out;
    }
    default:
      return genericToCel(v);
  }
}
