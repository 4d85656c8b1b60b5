import { Environment } from '@marcbachmann/cel-js';
import { registerKubernetesLibraries, toCelValue } from 'kubeloop/schema';
import { describe, expect, it } from 'vitest';
import type { AdmissionAttributes } from '../matching.js';
import { activationFor } from './activation.js';
import { AdmissionCelEnv, LazyVariables, registerAdmissionLibrary } from './compile.js';
import { FALLBACK, fastProgram } from './fast-path.js';

/** cel-js alone, as the admission run environment declares the variables. */
const celJs = registerAdmissionLibrary(
  registerKubernetesLibraries(
    new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false }),
  ),
);
for (const v of ['object', 'oldObject', 'request', 'namespaceObject', 'params', 'variables'])
  celJs.registerVariable(v, 'dyn');

const isLazy = (v: unknown) => v instanceof LazyVariables;

/** Objects of several shapes, including ones where the expressions below fail or mean other types. */
const objects: unknown[] = [
  { metadata: { name: 'cm-1', labels: { a: 'b' } }, data: { a: 'x', b: 'y' } },
  { metadata: { name: 'other' }, data: {} },
  { metadata: { name: 'cm-🙂é' }, data: { k: 'v' }, spec: { replicas: 3, ratio: 1.5, list: [1, 2] } },
  { metadata: { name: 'cm-x' } },
  { metadata: { name: 7 }, data: ['a'], spec: { replicas: 2.5, list: [] } },
  { metadata: {}, data: null, spec: { replicas: 2 ** 63, list: [{ a: 1 }] } },
  { metadata: { name: null }, data: { constructor: 'x' }, spec: { replicas: '3' } },
  { metadata: null, spec: { replicas: true } },
  { data: { a: { b: { c: 1 } } }, spec: {} },
  {},
];

/** Expressions: the ones taken here, and a few that are not (they must keep cel-js's answer). */
const expressions = [
  "object.metadata.name.startsWith('cm-')",
  "object.metadata.name.endsWith('x') || object.metadata.name.contains('🙂')",
  'has(object.data) ? object.data : {}',
  'size(has(object.data) ? object.data : {}) <= 1',
  'has(object.metadata.labels)',
  'has(object.spec.replicas) && object.spec.replicas > 2',
  'object.spec.replicas >= 3 && object.spec.replicas != 4',
  'object.spec.replicas + 1 > 3',
  'object.spec.replicas == 3',
  'object.spec.ratio < 2.0',
  'size(object.metadata.name) == 5',
  'size(object.spec.list) == 2',
  "'n: ' + string(size(object.data))",
  '!has(object.data)',
  "object.metadata.name == 'other'",
  'object.data == {}',
  'size([]) == 0',
  'object.data.a.b.c == 1',
  '(object.spec.replicas > 1) == true',
  // Not taken (other constructs): cel-js answers.
  "object.metadata.?name.orValue('') == 'x'",
  "object.data['a'] == 'x'",
  "'x' in object.data",
  'object.spec.list.all(x, x > 0)',
];

/** cel-js's value, or its error message. */
function viaCelJs(expr: string, ctx: object): { value?: unknown; error?: string } {
  try {
    return { value: celJs.parse(expr)(ctx) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

describe('admission CEL fast path', () => {
  it('gives cel-js value wherever it decides, and leaves the rest to cel-js', () => {
    let decided = 0;
    for (const expr of expressions) {
      const fast = fastProgram(celJs.parse(expr).ast, isLazy);
      for (const o of objects) {
        const ctx = { object: toCelValue(o, undefined), oldObject: null };
        const want = viaCelJs(expr, ctx);
        const got = fast?.(ctx) ?? FALLBACK;
        if (got === FALLBACK) {
          if (process.env.FAST_DEBUG) console.log('fallback', expr, JSON.stringify(o), want);
          continue;
        }
        decided++;
        expect({ expr, object: o, got }).toEqual({ expr, object: o, got: want.value });
        expect(want.error).toBeUndefined();
      }
    }
    // Most pairs are decided here; the rest are errors, mixed types and the other constructs.
    expect(decided).toBeGreaterThan(70);
  });

  it('takes the usual validations, and not the constructs it does not know', () => {
    const taken = (e: string) => fastProgram(celJs.parse(e).ast, isLazy) !== undefined;
    expect(taken("object.metadata.name.startsWith('cm-')")).toBe(true);
    expect(taken('size(variables.data) <= 16')).toBe(true);
    expect(taken('has(object.data) ? object.data : {}')).toBe(true);
    expect(taken("object.data['a'] == 'x'")).toBe(false);
    expect(taken("authorizer.group('').resource('pods').check('get').allowed()")).toBe(false);
    expect(taken('object.spec.list.all(x, x > 0)')).toBe(false);
  });

  it('reads variables through the activation, with their failures worded by cel-js', () => {
    const attrs = (object: Record<string, unknown>): AdmissionAttributes => ({
      operation: 'CREATE',
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      subresource: '',
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      name: 'cm-1',
      namespace: 'default',
      object,
      userInfo: { username: 'alice' },
      dryRun: false,
    });
    const env = new AdmissionCelEnv({
      variables: [
        { name: 'data', expression: 'has(object.data) ? object.data : {}' },
        { name: 'first', expression: 'object.data.a' },
      ],
    });
    const size = env.compile('size(variables.data) <= 1', { returnTypes: ['bool'] });
    const first = env.compile("variables.first == 'x'", { returnTypes: ['bool'] });
    expect(size.evaluate(activationFor(attrs({ data: { a: 'x' } })))).toBe(true);
    expect(size.evaluate(activationFor(attrs({ data: { a: 'x', b: 'y' } })))).toBe(false);
    expect(size.evaluate(activationFor(attrs({})))).toBe(true);
    expect(first.evaluate(activationFor(attrs({ data: { a: 'x' } })))).toBe(true);
    expect(() => first.evaluate(activationFor(attrs({ data: {} })))).toThrow(
      `expression 'variables.first == 'x'' resulted in error: composited variable "first" fails to evaluate: no such key: a`,
    );
  });
});
