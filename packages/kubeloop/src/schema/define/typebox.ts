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

type TypeBuilder = typeof TypeBox.Type;

const bundle = transientModule<typeof TypeBox>('../../../vendor/typebox.cjs', import.meta.url);
/** The bundle's builders, loaded if need be, kept for another second. */
const builders = (): TypeBuilder => bundle().Type;

function forwarding(): TypeBuilder {
  const facade: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(builders())) {
    if (typeof value === 'function') {
      facade[name] = (...args: unknown[]) =>
        (builders() as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!(...args);
    } else {
      Object.defineProperty(facade, name, {
        enumerable: true,
        get: () => (builders() as unknown as Record<string, unknown>)[name],
      });
    }
  }
  return facade as unknown as TypeBuilder;
}

/**
 * TypeBox's type builder (`Type.Object`, `Type.String`, …), the one `typebox` exports.
 *
 * @example
 * ```ts
 * const spec = Type.Object({ replicas: Type.Integer({ minimum: 1 }) });
 * ```
 */
export const Type: TypeBuilder = forwarding();
