/**
 * ValidatingAdmissionPolicy through kubectl 1.32: a policy and its binding deny, warn (kubectl
 * prints `Warning: …`) or let through as kube-apiserver does, with kube's messages and codes;
 * params come from ConfigMaps named or selected by the binding; messageExpression, variables,
 * matchConditions and failurePolicy behave as kube's. Each test works in its own namespace,
 * which its policy selects by label.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let env: KubectlEnv;
beforeAll(async () => {
  env = await startKubectlEnv({ controllers: false });
});
afterAll(async () => {
  await env?.stop();
});

const apply = (...objs: object[]) =>
  env.ok(['create', '-f', '-'], { input: objs.map((o) => JSON.stringify(o)).join('\n') });

/** A namespace labelled for the test's policy. */
const namespace = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels: { 'vap-test': name } },
});

/** A policy on deployments of namespace `ns`, with `spec` merged in. */
const policy = (name: string, ns: string, spec: Record<string, unknown>) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name },
  spec: {
    matchConstraints: {
      namespaceSelector: { matchLabels: { 'vap-test': ns } },
      resourceRules: [
        {
          apiGroups: ['apps'],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['deployments'],
        },
      ],
    },
    ...spec,
  },
});

const binding = (
  name: string,
  policyName: string,
  actions: string[],
  extra: Record<string, unknown> = {},
) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name },
  spec: { policyName, validationActions: actions, ...extra },
});

const deployment = (name: string, ns: string, replicas: number, labels: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns, labels: { app: name, ...labels } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

const create = (obj: object) => env.run(['create', '-f', '-'], { input: JSON.stringify(obj) });

describe('ValidatingAdmissionPolicy', () => {
  it('denies with the failed expression, its message or messageExpression, and the reason as status code', async () => {
    await apply(
      namespace('vap-deny'),
      policy('max-replicas', 'vap-deny', {
        validations: [
          { expression: 'object.spec.replicas <= 5' },
          { expression: "object.metadata.name != 'forbidden'", message: 'the name forbidden is forbidden' },
          {
            expression: "!has(object.metadata.labels.tier) || object.metadata.labels.tier != 'gold'",
            messageExpression: "'tier ' + object.metadata.labels.tier + ' is reserved'",
            reason: 'Forbidden',
          },
        ],
      }),
      binding('max-replicas-binding', 'max-replicas', ['Deny']),
    );
    expect(await create(deployment('small', 'vap-deny', 2))).toMatchObject({ code: 0 });
    const r = await create(deployment('big', 'vap-deny', 6));
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      // kubectl prints a 422 with causes as kube's docs show: the cause has no field.
      `The deployments "big" is invalid: : ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5`,
    );
    expect((await create(deployment('forbidden', 'vap-deny', 1))).stderr).toContain(
      `denied request: the name forbidden is forbidden`,
    );
    const gold = await create(deployment('gold', 'vap-deny', 1, { tier: 'gold' }));
    expect(gold.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "STDIN": deployments.apps "gold" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: tier gold is reserved`,
    );
    // Updates are checked too; the object is left as it was. (A `kubectl scale` would not be:
    // it writes `deployments/scale`, which the rule's `deployments` does not name.)
    const scaled = await env.run([
      'patch',
      'deployment',
      'small',
      '-n',
      'vap-deny',
      '--type=merge',
      '-p',
      '{"spec":{"replicas":9}}',
    ]);
    expect(scaled.code).toBe(1);
    expect(scaled.stderr).toContain('failed expression: object.spec.replicas <= 5');
    expect((await env.run(['scale', 'deployment', 'small', '-n', 'vap-deny', '--replicas=2'])).code).toBe(0);
    expect(
      await env.ok(['get', 'deployment', 'small', '-n', 'vap-deny', '-o', 'jsonpath={.spec.replicas}']),
    ).toBe('2');
    // Each denial is counted as kube counts it.
    const metrics = await env.ok(['get', '--raw', '/metrics']);
    expect(metrics).toContain(
      'apiserver_validating_admission_policy_check_total{policy="max-replicas",policy_binding="max-replicas-binding",error_type="no_error",enforcement_action="deny"} 4',
    );
    // Other namespaces are not selected.
    await env.ok(['create', 'namespace', 'vap-other']);
    expect(await create(deployment('big', 'vap-other', 6))).toMatchObject({ code: 0 });
  });

  it('warns with kube text, which kubectl prints, and admits', async () => {
    await apply(
      namespace('vap-warn'),
      policy('warn-replicas', 'vap-warn', {
        variables: [{ name: 'replicas', expression: 'object.spec.replicas' }],
        validations: [
          {
            expression: 'variables.replicas <= 3',
            messageExpression: "'replicas ' + string(variables.replicas) + ' above 3'",
          },
        ],
      }),
      binding('warn-replicas-binding', 'warn-replicas', ['Warn', 'Audit']),
    );
    const r = await create(deployment('many', 'vap-warn', 4));
    expect(r).toMatchObject({ code: 0, stdout: 'deployment.apps/many created\n' });
    expect(r.stderr.trim()).toBe(
      `Warning: Validation failed for ValidatingAdmissionPolicy 'warn-replicas' with binding 'warn-replicas-binding': replicas 4 above 3`,
    );
    const quiet = await create(deployment('few', 'vap-warn', 1));
    expect(quiet).toMatchObject({ code: 0, stderr: '' });
  });

  it('reads params from a ConfigMap by name or by selector, with parameterNotFoundAction', async () => {
    await apply(namespace('vap-params'));
    await apply(
      policy('param-replicas', 'vap-params', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        validations: [
          {
            expression: 'object.spec.replicas <= int(params.data.maxReplicas)',
            messageExpression:
              "'at most ' + params.data.maxReplicas + ' replicas (' + params.metadata.name + ')'",
          },
        ],
      }),
      binding('by-name', 'param-replicas', ['Deny'], {
        paramRef: { name: 'limits', namespace: 'vap-params', parameterNotFoundAction: 'Deny' },
      }),
    );
    // No param yet: the binding denies, as its parameterNotFoundAction says.
    // Policies and bindings are in force from the response that created them on.
    const missing = (await create(deployment('a', 'vap-params', 1))).stderr.trim();
    expect(missing).toBe(
      `The deployments "a" is invalid: : ValidatingAdmissionPolicy 'param-replicas' with binding 'by-name' denied request: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`,
    );
    await env.ok(['create', 'configmap', 'limits', '-n', 'vap-params', '--from-literal=maxReplicas=3']);
    expect(await create(deployment('a', 'vap-params', 3))).toMatchObject({ code: 0 });
    expect((await create(deployment('b', 'vap-params', 4))).stderr).toContain(
      `with binding 'by-name' denied request: at most 3 replicas (limits)`,
    );
    // A binding selecting params by label: each selected ConfigMap is checked; none selected → Allow.
    await env.ok(['delete', 'validatingadmissionpolicybinding', 'by-name']);
    await apply(
      binding('by-selector', 'param-replicas', ['Deny'], {
        paramRef: { selector: { matchLabels: { limits: 'yes' } }, parameterNotFoundAction: 'Allow' },
      }),
    );
    expect(await create(deployment('c', 'vap-params', 8))).toMatchObject({ code: 0 });
    await env.ok(['create', 'configmap', 'strict', '-n', 'vap-params', '--from-literal=maxReplicas=2']);
    await env.ok(['label', 'configmap', 'strict', '-n', 'vap-params', 'limits=yes']);
    expect((await create(deployment('d', 'vap-params', 3))).stderr).toContain(
      `with binding 'by-selector' denied request: at most 2 replicas (strict)`,
    );
  });

  it('skips requests its matchConditions exclude', async () => {
    await apply(
      namespace('vap-conditions'),
      policy('labelled-only', 'vap-conditions', {
        matchConditions: [
          {
            name: 'checked',
            expression: "has(object.metadata.labels.checked) && object.metadata.labels.checked == 'true'",
          },
        ],
        validations: [
          { expression: 'object.spec.replicas == 1', message: 'checked deployments run one replica' },
        ],
      }),
      binding('labelled-only-binding', 'labelled-only', ['Deny']),
    );
    expect((await create(deployment('checked', 'vap-conditions', 2, { checked: 'true' }))).stderr).toContain(
      'denied request: checked deployments run one replica',
    );
    expect(await create(deployment('unchecked', 'vap-conditions', 2))).toMatchObject({ code: 0 });
  });

  it('applies failurePolicy to runtime errors: Fail denies with the error, Ignore admits', async () => {
    const spec = (failurePolicy: string) => ({
      failurePolicy,
      validations: [{ expression: "object.metadata.annotations['owner'] != ''" }],
    });
    await apply(
      namespace('vap-fail'),
      namespace('vap-ignore'),
      policy('needs-owner-fail', 'vap-fail', spec('Fail')),
      policy('needs-owner-ignore', 'vap-ignore', spec('Ignore')),
      binding('needs-owner-fail', 'needs-owner-fail', ['Deny']),
      binding('needs-owner-ignore', 'needs-owner-ignore', ['Deny']),
    );
    const r = await create(deployment('x', 'vap-fail', 1));
    expect(r.stderr.trim()).toBe(
      `The deployments "x" is invalid: : ValidatingAdmissionPolicy 'needs-owner-fail' with binding 'needs-owner-fail' denied request: expression 'object.metadata.annotations['owner'] != ''' resulted in error: no such key: annotations`,
    );
    expect(await create(deployment('x', 'vap-ignore', 1))).toMatchObject({ code: 0 });
  });

  it('reports type errors against the matched kinds in the policy status', async () => {
    await apply(
      policy('typo', 'vap-typo', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        validations: [
          { expression: 'object.spec.replicass > 1' },
          {
            expression: 'object.spec.replicas <= int(params.data.max)',
            messageExpression: "'max ' + params.dataa.max",
          },
          { expression: "object.metadata.labels['app'] != ''" },
        ],
      }),
    );
    const status = await eventually(async () => {
      const p = JSON.parse(await env.ok(['get', 'validatingadmissionpolicy', 'typo', '-o', 'json']));
      return p.status?.observedGeneration === 1 ? p.status : undefined;
    });
    expect(status).toEqual({
      observedGeneration: 1,
      typeChecking: {
        expressionWarnings: [
          {
            fieldRef: 'spec.validations[0].expression',
            warning:
              "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n",
          },
          {
            fieldRef: 'spec.validations[1].messageExpression',
            warning:
              "apps/v1, Kind=Deployment: ERROR: <input>:1:16: undefined field 'dataa'\n | 'max ' + params.dataa.max\n | ...............^\n",
          },
        ],
      },
    });
  });

  it('type-checks against a custom resource kind by its CRD schema', async () => {
    await apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.vap.example.com' },
      spec: {
        group: 'vap.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
              },
            },
          },
        ],
      },
    });
    await env.ok(['wait', '--for=condition=Established', 'crd/widgets.vap.example.com']);
    await apply({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'widget-size' },
      spec: {
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['vap.example.com'],
              apiVersions: ['v1'],
              operations: ['CREATE'],
              resources: ['widgets'],
            },
          ],
        },
        variables: [{ name: 'size', expression: 'object.spec.size' }],
        validations: [
          { expression: 'variables.size <= 10 && object.metadata.name != ""' },
          { expression: "object.spec.size == 'big'" },
        ],
      },
    });
    const status = await eventually(async () => {
      const p = JSON.parse(await env.ok(['get', 'validatingadmissionpolicy', 'widget-size', '-o', 'json']));
      return p.status?.observedGeneration === 1 ? p.status : undefined;
    });
    expect(status.typeChecking.expressionWarnings).toEqual([
      {
        fieldRef: 'spec.validations[1].expression',
        warning:
          "vap.example.com/v1, Kind=Widget: ERROR: <input>:1:18: found no matching overload for '_==_' applied to '(int, string)'\n | object.spec.size == 'big'\n | .................^\n",
      },
    ]);
  });

  it('refuses a policy whose expressions do not compile, as kube validates it', async () => {
    const r = await env.run(['create', '-f', '-'], {
      input: JSON.stringify(
        policy('broken', 'vap-broken', {
          validations: [{ expression: 'object.spec.replicas >' }, { expression: "'not a bool'" }],
        }),
      ),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `The ValidatingAdmissionPolicy "broken" is invalid: \n* spec.validations[0].expression: Invalid value: "object.spec.replicas >": compilation failed: ERROR: <input>:1:`,
    );
    expect(r.stderr).toContain(
      `* spec.validations[1].expression: Invalid value: "'not a bool'": must evaluate to bool but got string`,
    );
    const b = await env.run(['create', '-f', '-'], {
      input: JSON.stringify(
        binding('bad-binding', 'broken', ['Deny', 'Warn'], {
          paramRef: { name: 'x', selector: {}, parameterNotFoundAction: 'Deny' },
        }),
      ),
    });
    expect(b.stderr).toBe(
      `The ValidatingAdmissionPolicyBinding "bad-binding" is invalid: \n* spec.paramRef.name: Forbidden: name and selector are mutually exclusive\n* spec.paramRef.selector: Forbidden: name and selector are mutually exclusive\n* spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)\n`,
    );
  });

  it('gives the Python client the 422 Status it parses', async () => {
    await apply(
      namespace('vap-python'),
      policy('py-replicas', 'vap-python', {
        validations: [{ expression: 'object.spec.replicas <= 2', message: 'two replicas at most' }],
      }),
      binding('py-replicas', 'py-replicas', ['Deny']),
    );
    const script = `
import json, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
body = json.loads(sys.argv[2])
try:
    client.AppsV1Api().create_namespaced_deployment("vap-python", body)
    print(json.dumps({"error": "no exception"}))
except ApiException as e:
    print(json.dumps({"status": e.status, "reason": e.reason, "body": json.loads(e.body)}))
`;
    const pyEnv: NodeJS.ProcessEnv = { ...process.env };
    delete pyEnv.PYTHONPATH;
    delete pyEnv.PYTHONHOME;
    const { stdout } = await promisify(execFile)(
      '/usr/bin/python3',
      ['-c', script, env.kubeconfigPath, JSON.stringify(deployment('py', 'vap-python', 3))],
      { env: pyEnv, timeout: 30_000 },
    );
    const message =
      "ValidatingAdmissionPolicy 'py-replicas' with binding 'py-replicas' denied request: two replicas at most";
    expect(JSON.parse(stdout)).toEqual({
      status: 422,
      reason: 'Unprocessable Entity',
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `deployments.apps "py" is forbidden: ${message}`,
        reason: 'Invalid',
        details: { name: 'py', group: 'apps', kind: 'deployments', causes: [{ message }] },
        code: 422,
      },
    });
  });
});
