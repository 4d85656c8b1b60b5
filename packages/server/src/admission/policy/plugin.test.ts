import { ApiError } from 'kubeloop/api';
import { beforeEach, describe, expect, it } from 'vitest';
import { Registry } from '../../registry/registry.js';
import { Store } from '../../storage/store.js';
import type { Obj } from '../../util/object.js';
import { Registry as PromRegistry } from '../../util/prom-client.js';
import type { AdmissionOptions } from '../options.js';
import { policyMetrics } from './metrics.js';
import { validatingAdmissionPolicy } from './plugin.js';

const AR = '/admissionregistration.k8s.io';
let store: Store;
const registry = new Registry();
const configmaps = registry.lookup('', 'v1', 'configmaps')!;

const policy = (name: string, spec: Obj) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name, generation: 1 },
  spec: {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['*'], resources: ['configmaps'] }],
    },
    ...spec,
  },
});
const binding = (name: string, policyName: string, validationActions: string[]) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name },
  spec: { policyName, validationActions },
});
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } });

async function install(p: Obj, b: Obj): Promise<void> {
  await store.create(`${AR}/validatingadmissionpolicies/${(p.metadata as Obj).name}`, p as never);
  await store.create(`${AR}/validatingadmissionpolicybindings/${(b.metadata as Obj).name}`, b as never);
}

beforeEach(async () => {
  store = Store.open({});
  await store.create('/core/namespaces/ns', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'ns' },
  } as never);
});

const opts = (): AdmissionOptions & { warnings: string[]; auditAnnotations: Record<string, string> } => ({
  warnings: [],
  auditAnnotations: {},
  user: { username: 'alice', groups: ['dev', 'system:authenticated'] },
});

describe('ValidatingAdmissionPolicy plugin', () => {
  it('audits failed validations in the validation_failure annotation, and publishes auditAnnotations', async () => {
    await install(
      policy('audited', {
        validations: [{ expression: "object.metadata.name != 'bad'" }],
        auditAnnotations: [
          { key: 'who', valueExpression: "request.userInfo.username + ' made ' + object.metadata.name" },
        ],
      }),
      binding('audited-binding', 'audited', ['Audit']),
    );
    const plugin = validatingAdmissionPolicy(store, { registry });
    const o = opts();
    await plugin('CREATE', configmaps, cm('bad'), undefined, o);
    expect(o.auditAnnotations).toEqual({
      'audited/who': 'alice made bad',
      'validation.policy.admission.k8s.io/validation_failure':
        '[{"message":"failed expression: object.metadata.name != \'bad\'","policy":"audited","binding":"audited-binding","expressionIndex":0,"validationActions":["Audit"]}]',
    });
    expect(o.warnings).toEqual([]);
  });

  it('answers authorizer checks as the request user', async () => {
    await install(
      policy('secrets-readers', {
        validations: [
          {
            expression:
              "authorizer.group('').resource('secrets').namespace(request.namespace).check('get').allowed()",
            messageExpression: "request.userInfo.username + ' cannot read secrets'",
            reason: 'Forbidden',
          },
        ],
      }),
      binding('secrets-readers', 'secrets-readers', ['Deny']),
    );
    const asked: string[] = [];
    const plugin = validatingAdmissionPolicy(store, {
      registry,
      authorizer: {
        authorize(q) {
          asked.push(`${q.user} ${q.resource?.verb} ${q.resource?.resource} ${q.resource?.namespace}`);
          return { allowed: q.user === 'bob' };
        },
      },
    });
    let err: unknown;
    try {
      await plugin('CREATE', configmaps, cm('x'), undefined, opts());
    } catch (e) {
      err = e;
    }
    expect(asked).toEqual(['alice get secrets ns']);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message:
        "configmaps \"x\" is forbidden: ValidatingAdmissionPolicy 'secrets-readers' with binding 'secrets-readers' denied request: alice cannot read secrets",
      details: {
        name: 'x',
        kind: 'configmaps',
        causes: [
          {
            message:
              "ValidatingAdmissionPolicy 'secrets-readers' with binding 'secrets-readers' denied request: alice cannot read secrets",
          },
        ],
      },
    });
    await plugin('CREATE', configmaps, cm('x'), undefined, {
      ...opts(),
      user: { username: 'bob', groups: [] },
    });
  });

  it('denies as a configuration error when the paramKind is not served', async () => {
    await install(
      policy('unknown-params', {
        paramKind: { apiVersion: 'example.com/v1', kind: 'Nope' },
        validations: [{ expression: 'true' }],
      }),
      binding('unknown-params', 'unknown-params', ['Deny']),
    );
    const plugin = validatingAdmissionPolicy(store, { registry });
    await expect(async () => plugin('CREATE', configmaps, cm('x'), undefined, opts())).rejects.toThrow(
      `configmaps "x" is forbidden: ValidatingAdmissionPolicy 'unknown-params' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Nope'`,
    );
  });

  it('leaves requests alone when no binding exists, and the admission kinds always', async () => {
    await store.create(
      `${AR}/validatingadmissionpolicies/lonely`,
      policy('lonely', { validations: [{ expression: 'false' }] }) as never,
    );
    const plugin = validatingAdmissionPolicy(store, { registry });
    expect(plugin('CREATE', configmaps, cm('x'), undefined, opts())).toBeUndefined();
  });

  it('gives every binding and param its decisions, warnings, audit annotations and metrics, in order', async () => {
    const param = (name: string, max: string) =>
      store.create(`/core/configmaps/ns/${name}`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'ns', labels: { set: 'a' } },
        data: { max },
      } as never);
    await param('p1', '1');
    await param('p5', '5');
    await install(
      policy('alpha', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        variables: [{ name: 'n', expression: 'object.metadata.name' }],
        validations: [
          { expression: 'size(variables.n) <= int(params.data.max)', message: ' too long ' },
          { expression: "variables.n != 'xx'", messageExpression: "'name ' + variables.n + ' taken'" },
        ],
        auditAnnotations: [{ key: 'max', valueExpression: "'max ' + params.data.max" }],
      }),
      {
        ...binding('alpha-warn', 'alpha', ['Warn', 'Audit']),
        spec: {
          policyName: 'alpha',
          validationActions: ['Warn', 'Audit'],
          paramRef: { selector: { matchLabels: { set: 'a' } }, parameterNotFoundAction: 'Deny' },
        },
      },
    );
    await store.create(`${AR}/validatingadmissionpolicybindings/alpha-deny`, {
      ...binding('alpha-deny', 'alpha', ['Deny']),
      spec: { policyName: 'alpha', validationActions: ['Deny'], paramRef: { name: 'p5' } },
    } as never);
    await install(
      policy('beta', {
        failurePolicy: 'Ignore',
        matchConditions: [{ name: 'not-skipped', expression: "object.metadata.name != 'skip'" }],
        validations: [
          { expression: "object.data.missing == 'x'" },
          { expression: 'false', reason: 'Forbidden', message: 'never' },
        ],
      }),
      binding('beta-binding', 'beta', ['Deny', 'Warn']),
    );
    const prom = new PromRegistry();
    const plugin = validatingAdmissionPolicy(store, { registry, metrics: policyMetrics(prom) });
    const o = opts();
    await expect(async () => plugin('CREATE', configmaps, cm('xx'), undefined, o)).rejects.toMatchObject({
      status: {
        code: 422,
        reason: 'Invalid',
        message:
          "configmaps \"xx\" is forbidden: ValidatingAdmissionPolicy 'alpha' with binding 'alpha-deny' denied request: name xx taken",
      },
    });
    expect(o.warnings).toEqual([
      "Validation failed for ValidatingAdmissionPolicy 'alpha' with binding 'alpha-warn': too long",
      "Validation failed for ValidatingAdmissionPolicy 'alpha' with binding 'alpha-warn': name xx taken",
      "Validation failed for ValidatingAdmissionPolicy 'alpha' with binding 'alpha-warn': name xx taken",
      "Validation failed for ValidatingAdmissionPolicy 'beta' with binding 'beta-binding': never",
    ]);
    expect(o.auditAnnotations).toEqual({
      'alpha/max': 'max 5, max 1',
      'validation.policy.admission.k8s.io/validation_failure': JSON.stringify([
        {
          message: 'too long',
          policy: 'alpha',
          binding: 'alpha-warn',
          expressionIndex: 0,
          validationActions: ['Warn', 'Audit'],
        },
        {
          message: 'name xx taken',
          policy: 'alpha',
          binding: 'alpha-warn',
          expressionIndex: 1,
          validationActions: ['Warn', 'Audit'],
        },
        {
          message: 'name xx taken',
          policy: 'alpha',
          binding: 'alpha-warn',
          expressionIndex: 1,
          validationActions: ['Warn', 'Audit'],
        },
      ]),
    });
    const counts = (await prom.metrics())
      .split('\n')
      .filter((l) => l.startsWith('apiserver_validating_admission_policy_check_total{'));
    expect(counts).toEqual([
      'apiserver_validating_admission_policy_check_total{policy="alpha",policy_binding="alpha-deny",error_type="no_error",enforcement_action="deny"} 1',
      'apiserver_validating_admission_policy_check_total{policy="alpha",policy_binding="alpha-warn",error_type="no_error",enforcement_action="warn"} 3',
      'apiserver_validating_admission_policy_check_total{policy="alpha",policy_binding="alpha-warn",error_type="no_error",enforcement_action="audit"} 3',
      'apiserver_validating_admission_policy_check_total{policy="beta",policy_binding="beta-binding",error_type="invalid_error",enforcement_action="allow"} 1',
      'apiserver_validating_admission_policy_check_total{policy="beta",policy_binding="beta-binding",error_type="no_error",enforcement_action="deny"} 1',
      'apiserver_validating_admission_policy_check_total{policy="beta",policy_binding="beta-binding",error_type="no_error",enforcement_action="warn"} 1',
    ]);
    // Skipped by beta's matchConditions; alpha admits a short name (with the warn binding's p1 too).
    const skipped = opts();
    await plugin('CREATE', configmaps, cm('skip'), undefined, skipped);
    expect(skipped.warnings).toEqual([
      "Validation failed for ValidatingAdmissionPolicy 'alpha' with binding 'alpha-warn': too long",
    ]);
  });

  it('sees the namespace as stored at each request, and fails a request whose namespace is gone', async () => {
    await install(
      policy('ns-labels', {
        validations: [{ expression: "namespaceObject.metadata.?labels.?env.orValue('') != 'frozen'" }],
      }),
      binding('ns-labels-deny', 'ns-labels', ['Deny']),
    );
    const plugin = validatingAdmissionPolicy(store, { registry });
    // (Async: once loaded, the plugin throws its denial as it checks.)
    const create = async () => plugin('CREATE', configmaps, cm('a'), undefined, opts());
    await create();
    const ns = (labels: Record<string, string>) =>
      ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels } }) as never;
    await store.update('/core/namespaces/ns', ns({ env: 'frozen' }));
    await expect(create()).rejects.toThrow(/denied request: failed expression/);
    await store.update('/core/namespaces/ns', ns({ env: 'dev' }));
    await create();
    await store.delete('/core/namespaces/ns');
    await expect(create()).rejects.toMatchObject({ status: { code: 404, reason: 'NotFound' } });
  });

  it('checks each request against the bindings and policies stored at that moment', async () => {
    await install(
      policy('names', {
        validations: [{ expression: "object.metadata.name != 'bad'", message: 'bad name' }],
      }),
      binding('names-deny', 'names', ['Deny']),
    );
    const plugin = validatingAdmissionPolicy(store, { registry });
    const check = async (name = 'bad') => {
      const o = opts();
      try {
        await plugin('CREATE', configmaps, cm(name), undefined, o);
        return o.warnings;
      } catch (e) {
        return (e as ApiError).status.message;
      }
    };
    expect(await check()).toMatch(/with binding 'names-deny' denied request: bad name$/);
    // Changed: the same binding now warns.
    const key = `${AR}/validatingadmissionpolicybindings/names-deny`;
    await store.update(key, { ...binding('names-deny', 'names', ['Warn']) } as never);
    expect(await check()).toEqual([
      "Validation failed for ValidatingAdmissionPolicy 'names' with binding 'names-deny': bad name",
    ]);
    // Another binding added: both act.
    await store.create(
      `${AR}/validatingadmissionpolicybindings/names-audit`,
      binding('names-audit', 'names', ['Deny']) as never,
    );
    expect(await check()).toMatch(/with binding 'names-audit' denied request: bad name$/);
    // One deleted and another made in its place (as many bindings as before).
    await store.delete(`${AR}/validatingadmissionpolicybindings/names-audit`);
    await store.create(
      `${AR}/validatingadmissionpolicybindings/names-other`,
      binding('names-other', 'names', ['Deny']) as never,
    );
    expect(await check()).toMatch(/with binding 'names-other' denied request: bad name$/);
    // The policy changed.
    await store.update(
      `${AR}/validatingadmissionpolicies/names`,
      policy('names', {
        validations: [{ expression: "object.metadata.name != 'worse'", message: 'worse name' }],
      }) as never,
    );
    expect(await check()).toEqual([]);
    expect(await check('worse')).toMatch(/with binding 'names-other' denied request: worse name$/);
    // The policy deleted, its bindings kept: nothing checks; the policy made again: it does.
    await store.delete(`${AR}/validatingadmissionpolicies/names`);
    expect(await check('worse')).toEqual([]);
    await store.create(
      `${AR}/validatingadmissionpolicies/names`,
      policy('names', { validations: [{ expression: "object.metadata.name != 'worst'" }] }) as never,
    );
    expect(await check('worse')).toEqual([]);
    expect(await check('worst')).toMatch(/with binding 'names-other' denied request: failed expression: /);
    await store.delete(`${AR}/validatingadmissionpolicybindings/names-other`);
    await store.delete(key);
    expect(plugin('CREATE', configmaps, cm('worse'), undefined, opts())).toBeUndefined();
  });
});
