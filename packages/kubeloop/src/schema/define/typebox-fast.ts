/**
 * The builders operators call at the top of their modules (`Type.Object`, `Type.String`,
 * `Type.Optional`, …), written out here so that declaring a resource does not load TypeBox's
 * bundle (vendor/typebox.cjs: ~25-40 ms of start CPU and ~2.4 MB of transient heap, for a few dozen
 * calls that each make one small object).
 *
 * Each one is TypeBox 1.4.3's own builder, step for step: in TypeBox these builders are one
 * `Memory.Create(hidden, enumerable, options)` or `Memory.Update(current, hidden, enumerable)`
 * of their arguments (system/memory/create.mjs, update.mjs), which `create` and `update` below
 * repeat: the same own properties in the same order, TypeBox's markers (`~kind`, `~optional`,
 * `~unsafe`) non-enumerable, writable and configurable. Those steps read no argument's kind, so
 * they are exact for any object argument (a Deferred, a Ref, a schema of the bundle's: TypeBox
 * itself only copies it); the two builders that do look at a kind (`Object` reads `~optional` of
 * each property, `Record` the kind of its key) look exactly as TypeBox looks. An argument TypeBox
 * would refuse or treat otherwise (a Record key that is not a string, integer or number schema, an
 * invalid literal, a non-object where an object is expected) goes to the bundle's builder, so its
 * errors stay TypeBox's own.
 *
 * TypeBox's `Settings` (`immutableTypes` freezes each type, `enumerableKind` makes the markers
 * enumerable) would change these objects; the bundle does not export them (its root exports only
 * the builders, a test checks it), so they are always TypeBox's defaults, which these builders
 * follow. Not counted in TypeBox's `Memory.Metrics`.
 */

/** A builder of the bundle, by name, for the arguments the fast builders leave to it. */
export type Bundled = (name: string) => (...args: unknown[]) => unknown;

type Obj = Record<PropertyKey, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null;

/**
 * An own, writable, configurable data property as TypeBox's `Memory` defines them: a marker of
 * TypeBox's (`~kind`, …) not enumerable, any other property enumerable.
 */
function define(target: object, key: PropertyKey, value: unknown, enumerable: boolean): void {
  Object.defineProperty(target, key, { configurable: true, writable: true, enumerable, value });
}

/** `Memory.Create` under TypeBox's default settings: enumerable then options spread, `~kind` hidden. */
function create(kind: string, enumerable: object, options: unknown): Obj {
  const result: Obj = { ...enumerable, ...(options as object) };
  define(result, '~kind', kind, false);
  return result;
}

/** TypeBox's `Guard.IsUnsafePropertyKey`: keys `Memory.Update` never copies. */
const unsafeKey = (key: PropertyKey) => key === '__proto__' || key === 'constructor' || key === 'prototype';

const ownKeys = (v: object): PropertyKey[] => [
  ...Object.getOwnPropertyNames(v),
  ...Object.getOwnPropertySymbols(v),
];

/**
 * `Memory.Update` under TypeBox's default settings: `current`'s own properties (descriptors
 * kept) but those `hidden` or `enumerable` redefine, then `hidden`'s as markers, then
 * `enumerable`'s as plain data properties.
 */
function update(current: object, hidden: Obj, enumerable: object): Obj {
  const result: Obj = {};
  const hiddenKeys = ownKeys(hidden);
  const enumerableKeys = ownKeys(enumerable);
  for (const key of ownKeys(current)) {
    if (unsafeKey(key) || hiddenKeys.includes(key) || enumerableKeys.includes(key)) continue;
    Object.defineProperty(result, key, Object.getOwnPropertyDescriptor(current, key)!);
  }
  for (const key of hiddenKeys) if (!unsafeKey(key)) define(result, key, hidden[key], false);
  for (const key of enumerableKeys) if (!unsafeKey(key)) define(result, key, (enumerable as Obj)[key], true);
  return result;
}

/** TypeBox's `LiteralTypeName`, or undefined where TypeBox throws `InvalidLiteralValue`. */
function literalType(value: unknown): string | undefined {
  if (typeof value === 'bigint') return 'bigint';
  if (typeof value === 'boolean') return 'boolean';
  if (Number.isFinite(value)) return 'number';
  if (typeof value === 'string') return 'string';
  return undefined;
}

// TypeBox's record key patterns (type/types/record.mjs), from its String, Integer and Number patterns.
const STRING_KEY = '^.*$';
const INTEGER_KEY = '^-?(?:0|[1-9][0-9]*)$';
const NUMBER_KEY = '^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?$';

/** The pattern TypeBox's `FromKey` (engine/record/from_key.mjs) gives a key schema of these kinds. */
function recordPattern(key: Obj): string | undefined {
  if (!('~kind' in key)) return undefined;
  switch (key['~kind']) {
    case 'Integer':
      return INTEGER_KEY;
    case 'Number':
      return NUMBER_KEY;
    case 'String': {
      // TypeBox's FromStringKey: a string's own pattern, if it has one, keys the record.
      const pattern = 'pattern' in key ? key.pattern : undefined;
      return typeof pattern === 'string' || pattern instanceof RegExp ? pattern.toString() : STRING_KEY;
    }
    default:
      return undefined;
  }
}

/**
 * The fast builders, by TypeBox's names; each calls `bundled(name)` for arguments it leaves to
 * TypeBox (see the module comment).
 */
export function fastBuilders(bundled: Bundled): Record<string, (...args: unknown[]) => unknown> {
  const plain = (kind: string, type: string) => (options?: unknown) => create(kind, { type }, options);
  return {
    String: plain('String', 'string'),
    Integer: plain('Integer', 'integer'),
    Number: plain('Number', 'number'),
    Boolean: plain('Boolean', 'boolean'),
    Null: plain('Null', 'null'),
    Array: (items: unknown, options?: unknown) => create('Array', { type: 'array', items }, options),
    Union: (anyOf: unknown, options: unknown = {}) => create('Union', { anyOf }, options),
    Object(properties: unknown, options: unknown = {}) {
      if (!isObject(properties)) return bundled('Object')(properties, options);
      // TypeBox's RequiredArray: every own name whose value is not an object with `~optional`.
      const required = Object.getOwnPropertyNames(properties).filter((k) => {
        const p = properties[k];
        return !(isObject(p) && '~optional' in p);
      });
      const enumerable =
        required.length > 0 ? { type: 'object', required, properties } : { type: 'object', properties };
      return create('Object', enumerable, options);
    },
    Literal(value: unknown, options?: unknown) {
      const type = literalType(value);
      return type === undefined
        ? bundled('Literal')(value, options)
        : create('Literal', { type, const: value }, options);
    },
    Enum(value: unknown, options?: unknown) {
      if (!isObject(value)) return bundled('Enum')(value, options);
      // TypeBox's TypeScriptEnumToEnumValues for an enum object; an array is kept as it is.
      const values = Array.isArray(value)
        ? value
        : Object.getOwnPropertyNames(value)
            .filter((k) => Number.isNaN(Number(k)))
            .map((k) => value[k]);
      return create('Enum', { enum: values }, options);
    },
    Optional(type: unknown) {
      return isObject(type) ? update(type, { '~optional': true }, {}) : bundled('Optional')(type);
    },
    Unsafe(schema: unknown) {
      return isObject(schema) ? update(schema, { '~unsafe': null }, {}) : bundled('Unsafe')(schema);
    },
    Record(key: unknown, value: unknown, options: unknown = {}) {
      const pattern = isObject(key) && isObject(options) ? recordPattern(key) : undefined;
      if (pattern === undefined) return bundled('Record')(key, value, options);
      return update(
        create('Record', { type: 'object', patternProperties: { [pattern]: value } }, undefined),
        {},
        options as Obj,
      );
    },
  };
}
