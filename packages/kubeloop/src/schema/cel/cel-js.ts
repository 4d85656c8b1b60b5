/**
 * cel-js, loaded when a CEL rule is first compiled or evaluated rather than with the schema
 * code: most resources declare no `x-kubernetes-validations`, and an operator that validates
 * its CRD at start (`defineResource`) otherwise carries cel-js's 14 modules (~160 KB of source,
 * ~1 MB of heap) for nothing. Rules are checked synchronously (`defineResource`, `validate`), so
 * it is loaded with `require()` of its ES module (Node ≥ 20.19 / 22.12): the same module
 * instance that an `import` of cel-js gets, so its classes are the ones callers use. On a Node
 * without `require()` of ES modules it is imported with this module, as before.
 */
import { createRequire } from 'node:module';

type CelJs = typeof import('@marcbachmann/cel-js');

const SPECIFIER = '@marcbachmann/cel-js';
let mod: CelJs | undefined = (process.features as { require_module?: boolean }).require_module
  ? undefined
  : await import(SPECIFIER);

/** The cel-js module, loaded on first call. */
export function celJs(): CelJs {
  mod ??= createRequire(import.meta.url)(SPECIFIER) as CelJs;
  return mod;
}

/** Whether cel-js is loaded (for the test that nothing without rules loads it). */
export function celJsLoaded(): boolean {
  return mod !== undefined;
}
