/**
 * The values admission expressions see (k8s.io/apiserver/pkg/admission/plugin/cel/activation.go):
 * `object`, `oldObject`, `request` (an AdmissionRequest without its objects), `params`,
 * `namespaceObject`, `authorizer` and `variables`. Each is converted to CEL values on first use,
 * once per request, whatever the number of expressions that read it.
 */
import { toCelValue } from 'kubeloop/schema';
import type { Obj } from '../../util/object.js';
import type { AdmissionAttributes } from '../matching.js';
import { AuthorizerValue, type CelAuthorizer, ResourceCheckValue } from './authorizer.js';
import {
  celValue,
  type EnvironmentReads,
  prunedCelValue,
  type ReadTree,
  type TrackedVariable,
} from './reads.js';

/** Makes `variables` for an activation (an `AdmissionCelEnv`: each environment has its own). */
export interface VariablesProvider {
  newVariables(activation: AdmissionActivation): unknown;
  /** What the environment's expressions read of the objects and params (all of them when unset). */
  readonly reads?: EnvironmentReads;
}

/** What an activation needs beyond the request. */
export interface ActivationExtra {
  /** The resource and kind the policy matched the request as (matchPolicy Equivalent); default: the request's. */
  matchedResource?: { group: string; version: string; resource: string };
  matchedKind?: { group: string; version: string; kind: string };
  /** The binding's param (null: none). */
  params?: Obj | null;
  /** The request's namespace (null for cluster-scoped requests and for Namespaces themselves). */
  namespace?: Obj | null;
  /** Answers `authorizer` checks; without it, `authorizer` is unset (an expression using it errors). */
  authorizer?: CelAuthorizer;
}

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** `CreateNamespaceObject`: the namespace's metadata kube exposes, spec and status; timestamps as timestamps. */
function namespaceValue(ns: Obj): unknown {
  const meta = (ns.metadata ?? {}) as Obj;
  const pick: Obj = {};
  for (const k of [
    'name',
    'generateName',
    'namespace',
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'labels',
    'annotations',
    'finalizers',
  ])
    if (meta[k] !== undefined) pick[k] = meta[k];
  const v = toCelValue({ metadata: pick, spec: ns.spec ?? {}, status: ns.status ?? {} }, undefined) as Obj;
  const m = v.metadata as Obj;
  for (const k of ['creationTimestamp', 'deletionTimestamp'])
    if (typeof m[k] === 'string' && TIMESTAMP.test(m[k] as string)) m[k] = new Date(m[k] as string);
  return v;
}

const UNSET: unique symbol = Symbol('unset');

/**
 * The variables of one environment in one activation: getters on the prototype (cel-js reads
 * `context[name]`), each value made on first read and kept in the activation.
 */
class ActivationContext {
  private vars: unknown = UNSET;
  /** The trees the values below were made for (by slot: object, oldObject, params). */
  private readonly trees: (ReadTree | undefined)[] = [undefined, undefined, undefined];
  private readonly values: unknown[] = [undefined, undefined, undefined];
  constructor(
    private readonly a: AdmissionActivation,
    readonly env: VariablesProvider | undefined,
  ) {}
  get object(): unknown {
    return this.tracked('object', 0);
  }
  get oldObject(): unknown {
    return this.tracked('oldObject', 1);
  }
  get params(): unknown {
    return this.tracked('params', 2);
  }
  /**
   * The value of `name` with the parts the environment's expressions read (the whole value when
   * one reads it whole); made again when an expression compiled since reads more.
   */
  private tracked(name: TrackedVariable, slot: number): unknown {
    const tree = this.env?.reads?.tree(name);
    if (tree === undefined || tree === true) return this.a.value(name);
    if (this.trees[slot] === tree) return this.values[slot];
    const source = this.a.source(name);
    const value = source ? prunedCelValue(source, tree) : null;
    this.trees[slot] = tree;
    this.values[slot] = value;
    return value;
  }
  get namespaceObject(): unknown {
    return this.a.value('namespaceObject');
  }
  get request(): unknown {
    return this.a.value('request');
  }
  get authorizer(): unknown {
    return this.a.value('authorizer');
  }
  get variables(): unknown {
    if (!this.env) return undefined;
    if (this.vars === UNSET) this.vars = this.env.newVariables(this.a);
    return this.vars;
  }
}

type ValueName = 'object' | 'oldObject' | 'params' | 'namespaceObject' | 'request' | 'authorizer';

/** One request's values, shared by every expression evaluated for it (per param). */
export class AdmissionActivation {
  private firstContext: ActivationContext | undefined;
  private contexts: Map<VariablesProvider | undefined, ActivationContext> | undefined;
  private cache: Partial<Record<ValueName, unknown>> = {};

  constructor(
    readonly attributes: AdmissionAttributes,
    readonly extra: ActivationExtra = {},
  ) {}

  /** The activation with another param (one evaluation per param of a selector): values are kept. */
  withParams(params: Obj | null): AdmissionActivation {
    const next = new AdmissionActivation(this.attributes, { ...this.extra, params });
    next.cache = { ...this.cache };
    delete next.cache.params;
    return next;
  }

  /** The JSON value of `object`, `oldObject` or `params` (undefined or null: none). */
  source(name: TrackedVariable): Obj | null | undefined {
    return name === 'params' ? this.extra.params : this.attributes[name];
  }
  /** One variable's CEL value, made on first use. */
  value(name: ValueName): unknown {
    if (name in this.cache) return this.cache[name];
    let v: unknown;
    switch (name) {
      case 'object':
      case 'oldObject':
      case 'params': {
        const source = this.source(name);
        v = source ? celValue(source) : null;
        break;
      }
      case 'namespaceObject':
        v = this.extra.namespace ? namespaceValue(this.extra.namespace) : null;
        break;
      case 'request':
        v = this.request();
        break;
      case 'authorizer':
        v = this.authorizer();
        break;
    }
    this.cache[name] = v;
    return v;
  }

  /** The request as `request` shows it (`CreateAdmissionRequest`). */
  private request(): unknown {
    const a = this.attributes;
    const kind = this.extra.matchedKind ?? a.kind;
    const resource = this.extra.matchedResource ?? a.resource;
    return toCelValue(
      {
        kind: { group: kind.group, version: kind.version, kind: kind.kind },
        resource: { group: resource.group, version: resource.version, resource: resource.resource },
        subResource: a.subresource,
        requestKind: { ...a.kind },
        requestResource: { ...a.resource },
        requestSubResource: a.subresource,
        name: a.name,
        namespace: a.namespace,
        operation: a.operation,
        userInfo: {
          username: a.userInfo.username,
          uid: a.userInfo.uid ?? '',
          groups: a.userInfo.groups ?? [],
          extra: a.userInfo.extra ?? {},
        },
        dryRun: a.dryRun,
        options: a.options ?? null,
      },
      undefined,
    );
  }

  /** The values of the variables, with `variables` of `env`. */
  context(env?: VariablesProvider): object {
    // Most activations serve one environment (a policy's): that one needs no map.
    const first = this.firstContext;
    if (first && first.env === env) return first;
    if (!first) {
      this.firstContext = new ActivationContext(this, env);
      return this.firstContext;
    }
    this.contexts ??= new Map();
    let ctx = this.contexts.get(env);
    if (!ctx) {
      ctx = new ActivationContext(this, env);
      this.contexts.set(env, ctx);
    }
    return ctx;
  }

  private authorizer(): AuthorizerValue | undefined {
    const authz = this.extra.authorizer;
    if (!authz) return undefined;
    const a = this.attributes;
    const user = { username: a.userInfo.username, groups: a.userInfo.groups ?? [] };
    const parent = new AuthorizerValue(authz, user);
    // `authorizer.requestResource`: the request's group, resource, subresource, namespace and name.
    const rr = new ResourceCheckValue(
      parent,
      a.resource.group,
      a.resource.resource,
      a.subresource,
      a.namespace,
      a.name,
    );
    return new AuthorizerValue(authz, user, rr);
  }
}

/** The activation of one request (see {@link AdmissionActivation}). */
export function activationFor(attrs: AdmissionAttributes, extra?: ActivationExtra): AdmissionActivation {
  return new AdmissionActivation(attrs, extra);
}
