/**
 * TypeBox's builders, from vendor/typebox.cjs: the installed TypeBox's 373 ES modules as one
 * CommonJS file (scripts/bundle-typebox.mjs; a test checks it is current). Every operator loads
 * them at start, to declare its resources; through Node's ES module loader that took ~220 ms of
 * CPU and ~14 MB of RSS, as one file ~25 ms and ~4 MB. The schemas are the same objects TypeBox
 * builds (a test compares them); the types are TypeBox's own.
 *
 * An operator calls the builders only while its modules load, yet the bundle (~2 MB of heap)
 * stayed for good: `Type` forwards each call to the bundle, which leaves the module cache a second
 * after the last call and loads again on the next. Schemas are plain data (no function or
 * prototype of the bundle), so those of one load serve the builders of the next.
 */
import type * as TypeBox from 'typebox';
import { transientModule } from '../../util/transient-module.js';
import { fastBuilders } from './typebox-fast.js';

type TypeBuilder = typeof TypeBox.Type;

const bundle = transientModule<typeof TypeBox>('../../../vendor/typebox.cjs', import.meta.url);
/** The bundle's builders, loaded if need be, kept for another second. */
const builders = (): TypeBuilder => bundle().Type;

/**
 * The names of the bundle's `Type`, in its order (a test checks them against TypeBox's), known
 * without loading it. All are functions but `ExtendsResult` (an object of constants).
 */
const NAMES = [
  'Instantiate',
  'Extends',
  'ExtendsResult',
  'Script',
  'Capitalize',
  'Conditional',
  'ConstructorParameters',
  'Evaluate',
  'Exclude',
  'Extract',
  'Index',
  'InstanceType',
  'Interface',
  'KeyOf',
  'Lowercase',
  'Mapped',
  'Module',
  'NonNullable',
  'Omit',
  'Parameters',
  'Partial',
  'Pick',
  'ReadonlyObject',
  'ReadonlyType',
  'Required',
  'ReturnType',
  'Uncapitalize',
  'Uppercase',
  'With',
  'Codec',
  'Decode',
  'DecodeBuilder',
  'Encode',
  'EncodeBuilder',
  'IsCodec',
  'Immutable',
  'IsImmutable',
  'IsOptional',
  'Optional',
  'IsReadonly',
  'Readonly',
  'IsRefine',
  'Refine',
  'Any',
  'IsAny',
  'Array',
  'IsArray',
  'BigInt',
  'IsBigInt',
  'Boolean',
  'IsBoolean',
  'Call',
  'IsCall',
  'Constructor',
  'IsConstructor',
  'Cyclic',
  'IsCyclic',
  'Enum',
  'IsEnum',
  'IsEnumValue',
  'Function',
  'IsFunction',
  'Generic',
  'IsGeneric',
  'Identifier',
  'IsIdentifier',
  'Dependent',
  'IsDependent',
  'Infer',
  'IsInfer',
  'Integer',
  'IsInteger',
  'Intersect',
  'IsIntersect',
  'IsLiteral',
  'Literal',
  'IsNever',
  'Never',
  'IsNull',
  'Null',
  'IsNumber',
  'Number',
  'IsObject',
  'Object',
  'IsParameter',
  'Parameter',
  'IsRecord',
  'Record',
  'RecordKey',
  'RecordPattern',
  'RecordValue',
  'IsRef',
  'Ref',
  'IsRest',
  'Rest',
  'IsKind',
  'IsSchema',
  'IsString',
  'String',
  'IsSymbol',
  'Symbol',
  'IsTemplateLiteral',
  'TemplateLiteral',
  'IsThis',
  'This',
  'IsTuple',
  'Tuple',
  'IsUndefined',
  'Undefined',
  'IsUnion',
  'Union',
  'IsUnknown',
  'Unknown',
  'IsUnsafe',
  'Unsafe',
  'IsVoid',
  'Void',
] as const;

/** The bundle's builder of that name (the bundle loaded if need be). */
const bundled = (name: string) =>
  (builders() as unknown as Record<string, (...args: unknown[]) => unknown>)[name]!;

function facade(): TypeBuilder {
  const fast = fastBuilders(bundled);
  const out: Record<string, unknown> = {};
  for (const name of NAMES) {
    if (name === 'ExtendsResult') {
      Object.defineProperty(out, name, {
        enumerable: true,
        get: () => (builders() as unknown as Record<string, unknown>)[name],
      });
    } else {
      out[name] = fast[name] ?? ((...args: unknown[]) => bundled(name)(...args));
    }
  }
  return out as unknown as TypeBuilder;
}

/**
 * TypeBox's type builder (`Type.Object`, `Type.String`, …), the one `typebox` exports.
 *
 * @example
 * ```ts
 * const spec = Type.Object({ replicas: Type.Integer({ minimum: 1 }) });
 * ```
 */
export const Type: TypeBuilder = facade();
