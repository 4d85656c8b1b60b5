import { describe, expect, it } from 'vitest';
import type { AuthorizationAttributes } from '../../auth/authorization/types.js';
import {
  type AdmissionAttributes,
  AdmissionCelEnv,
  activationFor,
  compileAdmissionExpression,
} from './index.js';

const attrs = (over: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE',
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  subresource: '',
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  name: 'web',
  namespace: 'default',
  object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3 } },
  userInfo: { username: 'alice', groups: ['dev', 'system:authenticated'] },
  dryRun: false,
  ...over,
});

describe('admission CEL', () => {
  it('evaluates object, oldObject, request, params and namespaceObject', () => {
    const env = new AdmissionCelEnv({ params: true });
    const run = (e: string) =>
      compileAdmissionExpression(e, env, { returnTypes: [] }).evaluate(
        activationFor(attrs(), {
          params: { data: { max: '5' } },
          namespace: { metadata: { name: 'default', labels: { env: 'prod' } } },
        }),
      );
    expect(run('object.spec.replicas <= int(params.data.max)')).toBe(true);
    expect(run('oldObject == null')).toBe(true);
    expect(run('request.operation + " " + request.kind.kind + " " + request.resource.resource')).toBe(
      'CREATE Deployment deployments',
    );
    expect(run('request.userInfo.username')).toBe('alice');
    expect(run('"dev" in request.userInfo.groups')).toBe(true);
    expect(run('namespaceObject.metadata.labels.env')).toBe('prod');
    expect(run('request.dryRun')).toBe(false);
  });

  it('reports compile errors as kube words them, and does not throw', () => {
    const env = new AdmissionCelEnv();
    expect(compileAdmissionExpression('foo == 1', env).error).toBe(
      "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo == 1\n | ^",
    );
    // `params` is declared only for policies with a paramKind.
    expect(compileAdmissionExpression('params.x == 1', env).error).toMatch(
      /undeclared reference to 'params'/,
    );
    expect(compileAdmissionExpression('request.nope == 1', env).error).toMatch(
      /^compilation failed: ERROR: <input>:1:8: undefined field 'nope'/,
    );
    expect(compileAdmissionExpression('"a"', env).error).toBe('must evaluate to bool but got string');
    expect(compileAdmissionExpression('1', env, { returnTypes: ['string', 'null_type'] }).error).toBe(
      'must evaluate to one of [string null_type] but got int',
    );
    const c = compileAdmissionExpression('foo == 1', env);
    expect(() => c.evaluate(activationFor(attrs()))).toThrow(/^compilation error: compilation failed: /);
  });

  it('throws runtime errors with the expression', () => {
    const env = new AdmissionCelEnv();
    const c = compileAdmissionExpression('object.spec.missing > 1', env);
    expect(c.error).toBeUndefined();
    expect(() => c.evaluate(activationFor(attrs()))).toThrow(
      "expression 'object.spec.missing > 1' resulted in error: no such key: missing",
    );
  });

  it('compiles variables in order and evaluates each lazily, once per activation', () => {
    let calls = 0;
    const env = new AdmissionCelEnv({
      variables: [
        { name: 'replicas', expression: 'object.spec.replicas' },
        { name: 'big', expression: 'variables.replicas > 2' },
        { name: 'names', expression: '["a", "b"]' },
        { name: 'broken', expression: 'object.spec.missing' },
      ],
    });
    expect([...env.variables.values()].map((v) => v.outputType)).toEqual([
      'dyn',
      'bool',
      'list(string)',
      'dyn',
    ]);
    // The type of a variable is known to the expressions after it.
    expect(compileAdmissionExpression('variables.names + 1 == 2', env).error).toMatch(
      /found no matching overload/,
    );
    expect(compileAdmissionExpression('variables.nope', env).error).toMatch(/undefined field 'nope'/);
    const a = activationFor(attrs(), {
      authorizer: {
        authorize() {
          calls++;
          return { allowed: true };
        },
      },
    });
    expect(compileAdmissionExpression('variables.big && variables.big', env).evaluate(a)).toBe(true);
    // Not evaluated unless used: a broken variable only fails the expressions that read it.
    expect(compileAdmissionExpression('size(variables.names) == 2', env).evaluate(a)).toBe(true);
    expect(() => compileAdmissionExpression('variables.broken == 1', env).evaluate(a)).toThrow(
      `expression 'variables.broken == 1' resulted in error: composited variable "broken" fails to evaluate: no such key: missing`,
    );
    expect(calls).toBe(0);
  });

  it('answers authorizer checks through the server authorizer', () => {
    const asked: AuthorizationAttributes[] = [];
    const env = new AdmissionCelEnv({ authorizer: true });
    const a = activationFor(attrs(), {
      authorizer: {
        authorize(q) {
          asked.push(q);
          return q.resource?.verb === 'delete'
            ? { allowed: true, reason: 'RBAC: allowed' }
            : { allowed: false, reason: 'no rule' };
        },
      },
    });
    const run = (e: string) => compileAdmissionExpression(e, env, { returnTypes: [] }).evaluate(a);
    expect(
      run(
        "authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('delete').allowed()",
      ),
    ).toBe(true);
    expect(asked[0]).toEqual({
      user: 'alice',
      groups: ['dev', 'system:authenticated'],
      resource: {
        verb: 'delete',
        group: 'apps',
        version: '*',
        resource: 'deployments',
        subresource: '',
        namespace: 'ns',
        name: 'x',
      },
    });
    expect(run("authorizer.group('').resource('pods').check('get').reason()")).toBe('no rule');
    expect(run("authorizer.requestResource.check('delete').allowed()")).toBe(true);
    expect(asked.at(-1)?.resource).toMatchObject({
      resource: 'deployments',
      namespace: 'default',
      name: 'web',
    });
    expect(run("authorizer.serviceAccount('kube-system', 'x').path('/healthz').check('get').allowed()")).toBe(
      false,
    );
    expect(asked.at(-1)).toMatchObject({
      user: 'system:serviceaccount:kube-system:x',
      nonResource: { path: '/healthz', verb: 'get' },
    });
    // messageExpression has no authorizer.
    expect(
      compileAdmissionExpression("authorizer.path('/').check('get').allowed()", env, { authorizer: false })
        .error,
    ).toMatch(/undeclared reference to 'authorizer'/);
  });
});
