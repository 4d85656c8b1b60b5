/**
 * TypeBox's builders, from vendor/typebox.cjs: the installed TypeBox's 373 ES modules as one
 * CommonJS file (scripts/bundle-typebox.mjs; a test checks it is current). Through Node's ES
 * module loader TypeBox took ~220 ms of CPU and ~14 MB of RSS to load, as one file ~25-40 ms
 * (compiling 665 KB and running every module's body) and ~2.4 MB of heap. The schemas are the
 * same objects TypeBox builds (a test compares them); the types are TypeBox's own.
 *
 * An operator calls the builders only while its modules load, and mostly the plain ones
 * (`Object`, `String`, `Integer`, `Optional`, `Array`, `Union`, …), each one small object. Those
 * are written out in typebox-fast.ts, step for step as TypeBox builds them, so that declaring the
 * sample operator's Foo loads no bundle: its Foo chunk imports in ~49 ms instead of ~87 ms (CPU
 * ~51 vs ~88 ms, heap after it 6.2 vs 8.7 MB), and the operator's start takes 0.89-0.92x the CPU
 * (e.g. 270 vs 305 ms) with ~2 MB less RSS at rest (61.6 vs 63.7 MB; bench/dist/benchmarks/
 * operator-start.js against main, three runs of 8-16 alternating starts; its time to the first
 * status, 0.89-1.01x, was within the noise of a shared machine). Every other builder, and the
 * arguments only TypeBox can judge, go to the bundle: it is loaded on such a call and leaves the
 * module cache a second after the last one (so its ~2 MB do not stay for good), and loads again
 * on the next. Schemas are plain data (no function or prototype of the bundle), so those of the
 * fast builders and of one load serve the builders of the next.
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
