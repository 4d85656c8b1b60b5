import { ApiError } from 'kubeloop/api';
import { beforeEach, describe, expect, it } from 'vitest';
import { Registry } from '../../registry/registry.js';
import { Store } from '../../storage/store.js';
import type { Obj } from '../../util/object.js';
import type { AdmissionOptions } from '../options.js';
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
});
