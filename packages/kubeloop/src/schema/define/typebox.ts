/**
 * TypeBox's builders, from vendor/typebox.cjs: the installed TypeBox's 373 ES modules as one
 * CommonJS file (scripts/bundle-typebox.mjs; a test checks it is current). Every operator loads
 * them at start, to declare its resources; through Node's ES module loader that took ~220 ms of
 * CPU and ~14 MB of RSS, as one file ~25 ms and ~4 MB. The schemas are the same objects TypeBox
 * builds (a test compares them); the types are TypeBox's own.
 */
import { createRequire } from 'node:module';
import type * as TypeBox from 'typebox';

const bundle = createRequire(import.meta.url)('../../../vendor/typebox.cjs') as typeof TypeBox;

/**
 * TypeBox's type builder (`Type.Object`, `Type.String`, …), the one `typebox` exports.
 *
 * @example
 * ```ts
 * const spec = Type.Object({ replicas: Type.Integer({ minimum: 1 }) });
 * ```
 */
export const Type: typeof TypeBox.Type = bundle.Type;
