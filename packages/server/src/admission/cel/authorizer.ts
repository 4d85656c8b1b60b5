/**
 * kube's CEL authorizer library (k8s.io/apiserver/pkg/cel/library/authz.go) for admission
 * expressions: `authorizer.group('apps').resource('deployments').namespace('ns').name('x')
 * .check('update').allowed()`, `authorizer.path('/healthz').check('get')`,
 * `authorizer.serviceAccount(ns, name)`, `authorizer.requestResource` and the decision's
 * `allowed()`, `reason()`, `errored()`, `error()`. Checks are answered by the server's authorizer,
 * synchronously, as the request's user (or the named service account).
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { AuthorizationAttributes, AuthorizationDecision } from '../../auth/authorization/types.js';

/** What the library needs of the server's authorizer. */
export interface CelAuthorizer {
  authorize(attributes: AuthorizationAttributes): AuthorizationDecision;
}

/** The user a check is made for. */
export interface CelAuthorizerUser {
  username: string;
  groups?: readonly string[];
}

/** `authorizer`: the request's user before a path or group is chosen. */
export class AuthorizerValue {
  constructor(
    readonly authz: CelAuthorizer,
    readonly user: CelAuthorizerUser,
    /** `authorizer.requestResource`: a check on the request's own resource. */
    readonly requestResource?: ResourceCheckValue,
  ) {}
}

/** `authorizer.path(p)`. */
export class PathCheckValue {
  constructor(
    readonly parent: AuthorizerValue,
    readonly path: string,
  ) {}
}

/** `authorizer.group(g)`. */
export class GroupCheckValue {
  constructor(
    readonly parent: AuthorizerValue,
    readonly group: string,
  ) {}
}

/** `….resource(r)` with its optional subresource, namespace and name. */
export class ResourceCheckValue {
  constructor(
    readonly parent: AuthorizerValue,
    readonly group: string,
    readonly resource: string,
    readonly subresource = '',
    readonly namespace = '',
    readonly name = '',
  ) {}
  with(part: { subresource?: string; namespace?: string; name?: string }): ResourceCheckValue {
    return new ResourceCheckValue(
      this.parent,
      this.group,
      this.resource,
      part.subresource ?? this.subresource,
      part.namespace ?? this.namespace,
      part.name ?? this.name,
    );
  }
}

/** The answer of a `check(verb)`. */
export class DecisionValue {
  constructor(readonly decision: AuthorizationDecision) {}
}

function decide(a: AuthorizerValue, attrs: Omit<AuthorizationAttributes, 'user' | 'groups'>): DecisionValue {
  try {
    return new DecisionValue(
      a.authz.authorize({ user: a.user.username, groups: a.user.groups ?? [], ...attrs }),
    );
  } catch (e) {
    return new DecisionValue({ allowed: false, evaluationError: (e as Error).message });
  }
}

/** Registers the library's types and functions on `env` (before it is cloned). */
export function registerAuthorizerLibrary(env: Environment): void {
  env.registerType('kubernetes.authorization.ResourceCheck', ResourceCheckValue);
  env.registerType('kubernetes.authorization.Authorizer', {
    ctor: AuthorizerValue,
    fields: { requestResource: 'kubernetes.authorization.ResourceCheck' },
  });
  env.registerType('kubernetes.authorization.PathCheck', PathCheckValue);
  env.registerType('kubernetes.authorization.GroupCheck', GroupCheckValue);
  env.registerType('kubernetes.authorization.Decision', DecisionValue);
  const A = 'kubernetes.authorization.Authorizer';
  const R = 'kubernetes.authorization.ResourceCheck';
  const D = 'kubernetes.authorization.Decision';
  env.registerFunction(
    `${A}.path(string): kubernetes.authorization.PathCheck`,
    (a: AuthorizerValue, p: string) => new PathCheckValue(a, p),
  );
  env.registerFunction(
    `${A}.group(string): kubernetes.authorization.GroupCheck`,
    (a: AuthorizerValue, g: string) => new GroupCheckValue(a, g),
  );
  env.registerFunction(
    `${A}.serviceAccount(string, string): ${A}`,
    (a: AuthorizerValue, ns: string, name: string) =>
      new AuthorizerValue(a.authz, {
        username: `system:serviceaccount:${ns}:${name}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
      }),
  );
  env.registerFunction(
    `kubernetes.authorization.GroupCheck.resource(string): ${R}`,
    (g: GroupCheckValue, r: string) => new ResourceCheckValue(g.parent, g.group, r),
  );
  env.registerFunction(`${R}.subresource(string): ${R}`, (r: ResourceCheckValue, s: string) =>
    r.with({ subresource: s }),
  );
  env.registerFunction(`${R}.namespace(string): ${R}`, (r: ResourceCheckValue, s: string) =>
    r.with({ namespace: s }),
  );
  env.registerFunction(`${R}.name(string): ${R}`, (r: ResourceCheckValue, s: string) => r.with({ name: s }));
  env.registerFunction(`${R}.check(string): ${D}`, (r: ResourceCheckValue, verb: string) =>
    decide(r.parent, {
      resource: {
        verb,
        group: r.group,
        version: '*',
        resource: r.resource,
        subresource: r.subresource,
        namespace: r.namespace,
        name: r.name,
      },
    }),
  );
  env.registerFunction(
    `kubernetes.authorization.PathCheck.check(string): ${D}`,
    (p: PathCheckValue, verb: string) => decide(p.parent, { nonResource: { path: p.path, verb } }),
  );
  env.registerFunction(`${D}.allowed(): bool`, (d: DecisionValue) => d.decision.allowed === true);
  env.registerFunction(`${D}.reason(): string`, (d: DecisionValue) => d.decision.reason ?? '');
  env.registerFunction(`${D}.errored(): bool`, (d: DecisionValue) => !!d.decision.evaluationError);
  env.registerFunction(`${D}.error(): string`, (d: DecisionValue) => d.decision.evaluationError ?? '');
}
