/**
 * Compilation of admission CEL expressions (k8s.io/apiserver/pkg/admission/plugin/cel: compile.go,
 * composition.go): one environment per set of declared variables, expressions type-checked once
 * with cel-go's error texts, `variables.<name>` compiled in order (each sees the ones before it)
 * and evaluated lazily, at most once per activation.
 */
import { Environment, EvaluationError } from '@marcbachmann/cel-js';
import {
  type CelJsError,
  celGoMessage,
  formatCompileIssue,
  registerKubernetesLibraries,
} from 'kubeloop/schema';
import { registerAuthorizerLibrary } from './authorizer.js';
import { FALLBACK, fastProgram } from './fast-path.js';
import { EnvironmentReads } from './reads.js';
import { registerAdmissionTypes } from './types.js';

/**
 * What expressions are evaluated against: an `AdmissionActivation` (kept structural here so that
 * this module, which the registry's validation imports, does not import the request's types).
 */
export interface CelActivation {
  /** The variables' values, with `variables` of `env`. */
  context(env: AdmissionCelEnv): object;
}

/** A named expression: a policy's `variables[i]`. */
export interface NamedExpression {
  name: string;
  expression: string;
}

/** What an admission environment declares besides `object`, `oldObject`, `request` and `namespaceObject`. */
export interface AdmissionCelEnvOptions {
  /** Declare `params` (a policy with `paramKind`). */
  params?: boolean;
  /** Declare `authorizer` and `authorizer.requestResource` (validations, matchConditions; not messageExpression). */
  authorizer?: boolean;
  /** The policy's `variables`, compiled in order into `variables.<name>`. */
  variables?: readonly NamedExpression[];
  /**
   * Typed `object`/`oldObject`/`params` for type checking only (the policy status controller):
   * `env` must already have kube's CEL libraries and the types named here registered, and must
   * not have been cloned yet.
   */
  typed?: { env: Environment; object?: string; params?: string };
}

/** How {@link AdmissionCelEnv.compile} compiles one expression. */
export interface CompileOptions {
  /**
   * The types (cel-go names: `bool`, `string`, `null_type`) the expression may have, as its kind
   * requires; none: any type.
   */
  returnTypes?: readonly string[];
  /**
   * Whether `authorizer` is declared (default true, when the environment has it): kube declares
   * it for validations, matchConditions and variables, not for messageExpression nor auditAnnotations.
   */
  authorizer?: boolean;
}

/** A compiled expression. `error` is the compile error as kube words it (`compilation failed: ERROR: <input>:1:1: …`). */
export interface CompiledExpression {
  readonly expression: string;
  readonly error?: string;
  /** cel-go's name of the expression's type (`bool`, `list(string)`), when it compiled. */
  readonly outputType?: string;
  /**
   * Evaluates the expression. Throws an Error whose message is kube's detail text:
   * `compilation error: …` when it did not compile, `expression '…' resulted in error: …` at run time.
   */
  evaluate(activation: CelActivation): unknown;
}

const PRIMITIVES = new Set([
  'int',
  'uint',
  'double',
  'bool',
  'string',
  'bytes',
  'dyn',
  'null_type',
  'google.protobuf.Timestamp',
  'google.protobuf.Duration',
  'list',
  'map',
]);

/** cel-js type text → cel-go's (`list<string>` → `list(string)`). */
function goTypeName(t: string): string {
  return t.replaceAll('<', '(').replaceAll('>', ')');
}

/** kube's `convertCelTypeToDeclType`: primitives, lists and maps keep their type, the rest is dyn. */
function compositionType(t: string | undefined): string {
  if (!t) return 'dyn';
  return t.replace(/[A-Za-z_][A-Za-z0-9_.]*/g, (id) => (PRIMITIVES.has(id) ? id : 'dyn'));
}

let baseEnv: Environment | undefined;
let evalEnv: Environment | undefined;
let variablesTypes = 0;

function newLibraryEnv(): Environment {
  return registerKubernetesLibraries(
    new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false }),
  );
}

/** Registers what every admission environment has beyond kube's base libraries. */
export function registerAdmissionLibrary(env: Environment): Environment {
  registerAuthorizerLibrary(env);
  registerAdmissionTypes(env);
  env.registerType('kubernetes.variables', LazyVariables);
  return env;
}

function base(): Environment {
  baseEnv ??= registerAdmissionLibrary(newLibraryEnv());
  return baseEnv;
}

/**
 * The environment expressions are run in: every variable dyn (values are plain CEL values), the
 * library's types registered so that functions dispatch on them. Checking is done in typed
 * environments; running needs no types.
 */
function runEnv(): Environment {
  if (!evalEnv) {
    evalEnv = base().clone();
    for (const v of ['object', 'oldObject', 'request', 'namespaceObject', 'params', 'variables'])
      evalEnv.registerVariable(v, 'dyn');
    evalEnv.registerVariable('authorizer', 'kubernetes.authorization.Authorizer');
  }
  return evalEnv;
}

const EVALUATE = Symbol('evaluate');

/**
 * `variables` of one activation: each variable a getter (on the prototype of a class made per
 * environment) that evaluates its expression once, on first read.
 */
export class LazyVariables {
  // Declared, not defined: field definitions on these instances (whose prototypes are made per
  // environment, with a getter per variable) cost V8 four times the plain assignments below,
  // once per request that reads `variables`.
  /** Each variable's value, or its failure, once evaluated (the map made on the first). */
  declare private results: Map<string, unknown> | undefined;
  declare private readonly activation: CelActivation;
  constructor(activation: CelActivation) {
    this.activation = activation;
    this.results = undefined;
  }
  [EVALUATE](name: string, compiled: CompiledExpression): unknown {
    this.results ??= new Map();
    let r = this.results.get(name);
    if (r === undefined) {
      try {
        r = compiled.evaluate(this.activation);
      } catch (e) {
        r = new VariableFailure(variableError(name, compiled, e));
      }
      this.results.set(name, r);
    }
    if (r instanceof VariableFailure) throw new EvaluationError(r.message);
    return r;
  }
}

const isLazyVariables = (v: unknown): boolean => v instanceof LazyVariables;

/** A variable whose evaluation failed: every read of it fails with this message. */
class VariableFailure {
  constructor(readonly message: string) {}
}

/** A class of `variables` with one getter per variable. */
function variablesClass(
  variables: ReadonlyMap<string, CompiledExpression>,
): new (
  a: CelActivation,
) => LazyVariables {
  class Variables extends LazyVariables {}
  // cel-js finds a value's type by its constructor: these are `kubernetes.variables`.
  Object.defineProperty(Variables.prototype, 'constructor', { value: LazyVariables });
  for (const [name, compiled] of variables) {
    Object.defineProperty(Variables.prototype, name, {
      enumerable: true,
      get(this: LazyVariables) {
        return this[EVALUATE](name, compiled);
      },
    });
  }
  return Variables;
}

/** The environment of one policy (or one webhook's matchConditions). */
export class AdmissionCelEnv {
  /** The compiled `variables`, by name, in their order. */
  readonly variables = new Map<string, CompiledExpression>();
  /** What the expressions compiled so far read of `object`, `oldObject` and `params`. */
  readonly reads = new EnvironmentReads();
  private readonly options: AdmissionCelEnvOptions;
  private checkEnvs = new Map<string, Environment>();
  private variableFields: Record<string, string> = {};
  private readonly root: Environment;
  private variablesClass: (new (a: CelActivation) => LazyVariables) | undefined;

  constructor(options: AdmissionCelEnvOptions = {}) {
    this.options = options;
    this.root = options.typed ? registerAdmissionLibrary(options.typed.env) : base();
    for (const v of options.variables ?? []) {
      const compiled = this.compile(v.expression);
      this.variables.set(v.name, compiled);
      this.variableFields = {
        ...this.variableFields,
        [v.name]: compositionType(compiled.outputType?.replaceAll('(', '<').replaceAll(')', '>')),
      };
    }
  }

  /** The type-checking environment for the variables compiled so far. */
  private checkEnv(withAuthorizer: boolean): Environment {
    const fields = this.variableFields;
    const key = `${withAuthorizer}|${JSON.stringify(fields)}`;
    let env = this.checkEnvs.get(key);
    if (!env) {
      env = this.root.clone();
      const typed = this.options.typed;
      env.registerVariable('object', typed?.object ?? 'dyn');
      env.registerVariable('oldObject', typed?.object ?? 'dyn');
      env.registerVariable('request', 'kubernetes.AdmissionRequest');
      env.registerVariable('namespaceObject', 'kubernetes.Namespace');
      if (this.options.params) env.registerVariable('params', typed?.params ?? 'dyn');
      if (withAuthorizer && this.options.authorizer)
        env.registerVariable('authorizer', 'kubernetes.authorization.Authorizer');
      const name = `kubernetes.variables${variablesTypes++}`;
      env.registerType(name, { fields });
      env.registerVariable('variables', name);
      this.checkEnvs.set(key, env);
    }
    return env;
  }

  /**
   * Compiles one expression (see {@link CompileOptions}).
   */
  compile(expression: string, options: CompileOptions = {}): CompiledExpression {
    const { returnTypes, authorizer: withAuthorizer = true } = options;
    const fail = (error: string): CompiledExpression => ({
      expression,
      error,
      evaluate() {
        throw new Error(`compilation error: ${error}`);
      },
    });
    let outputType: string;
    try {
      const checked = this.checkEnv(withAuthorizer).check(expression);
      if (!checked.valid)
        return fail(
          `compilation failed: ${formatCompileIssue(expression, checked.error as unknown as CelJsError)}`,
        );
      outputType = goTypeName(checked.type ?? 'dyn');
    } catch (e) {
      return fail(`compilation failed: ${formatCompileIssue(expression, e as CelJsError)}`);
    }
    if (returnTypes && returnTypes.length > 0 && !returnTypes.includes(outputType)) {
      return fail(
        returnTypes.length === 1
          ? `must evaluate to ${returnTypes[0]} but got ${outputType}`
          : `must evaluate to one of [${returnTypes.join(' ')}] but got ${outputType}`,
      );
    }
    const program = runEnv().parse(expression);
    // Before any activation of this environment evaluates it: the values it reads are made
    // with what it reads (see reads.ts).
    this.reads.add(program.ast);
    const env = this;
    // The expression's value without cel-js when it is simple enough (see fast-path.ts).
    const fast = fastProgram(program.ast, isLazyVariables);
    return {
      expression,
      outputType,
      evaluate(activation) {
        const context = activation.context(env);
        if (fast) {
          const v = fast(context);
          if (v !== FALLBACK) return v;
        }
        try {
          return program(context);
        } catch (e) {
          throw new Error(`expression '${expression}' resulted in error: ${runtimeMessage(e)}`);
        }
      },
    };
  }

  /** A fresh `variables` value for one activation. */
  newVariables(activation: CelActivation): LazyVariables {
    this.variablesClass ??= variablesClass(this.variables);
    return new this.variablesClass(activation);
  }
}

function variableError(name: string, compiled: CompiledExpression, e: unknown): string {
  if (compiled.error) return `composited variable "${name}" fails to compile: ${compiled.error}`;
  const msg = (e as Error).message;
  const prefix = `expression '${compiled.expression}' resulted in error: `;
  return `composited variable "${name}" fails to evaluate: ${msg.startsWith(prefix) ? msg.slice(prefix.length) : msg}`;
}

/** cel-go's wording of a runtime error. */
export function runtimeMessage(e: unknown): string {
  if (e instanceof EvaluationError && (e as CelJsError).message.startsWith('composited variable '))
    return (e as CelJsError).message.split('\n')[0] ?? '';
  return celGoMessage(e as CelJsError, 'eval');
}

/**
 * Compiles one admission expression in `env` (see {@link AdmissionCelEnv.compile}): validations
 * and matchConditions return `bool`, messageExpression `string`.
 */
export function compileAdmissionExpression(
  expression: string,
  env: AdmissionCelEnv,
  options: CompileOptions = { returnTypes: ['bool'] },
): CompiledExpression {
  return env.compile(expression, options);
}
