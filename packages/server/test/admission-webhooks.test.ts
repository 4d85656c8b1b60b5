/**
 * Admission webhooks end to end: kubectl 1.32 against the server, with a real HTTPS webhook
 * server (its own CA) answering. Each test works in a namespace of its own, which its webhooks
 * select, so that tests do not see each other's webhooks.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from './kubectl.js';
import { allow, deny, patch, startWebhookServer, type WebhookServer } from './webhook-server.js';

let env: KubectlEnv;
let hooks: WebhookServer;
beforeAll(async () => {
  [env, hooks] = await Promise.all([startKubectlEnv({ controllers: false }), startWebhookServer()]);
});
afterAll(async () => {
  await Promise.all([env?.stop(), hooks?.close()]);
});

const apply = (obj: object) => env.ok(['apply', '-f', '-'], { input: JSON.stringify(obj) });
const create = (obj: object, args: string[] = []) =>
  env.run(['create', '-f', '-', ...args], { input: JSON.stringify(obj) });
const getJson = async (...args: string[]) => JSON.parse(await env.ok(['get', ...args, '-o', 'json']));

/** A webhook of `path` on the test server, selecting namespace `ns`. */
function webhook(name: string, path: string, ns: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
    rules: [
      { operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] },
    ],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}
const config = (kind: 'Mutating' | 'Validating', name: string, webhooks: object[]) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: `${kind}WebhookConfiguration`,
  metadata: { name },
  webhooks,
});
const configMap = (name: string, ns: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...extra },
  data: { a: 'b' },
});
async function namespace(ns: string, labels: Record<string, string> = {}) {
  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels } });
}

describe('mutating admission webhooks', () => {
  it('default an object through a JSONPatch, and see every field of the AdmissionReview', async () => {
    await namespace('mut');
    hooks.handle('/default', patch([{ op: 'add', path: '/data/injected', value: 'yes' }]));
    await apply(config('Mutating', 'defaulter', [webhook('default.example.com', '/default', 'mut')]));
    expect((await create(configMap('cm', 'mut'))).code).toBe(0);
    const created = await getJson('configmap', 'cm', '-n', 'mut');
    expect(created.data).toEqual({ a: 'b', injected: 'yes' });
    // What the registry sets after mutating admission (its BeforeCreate) is on the patched object.
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.creationTimestamp).toEqual(expect.any(String));

    const [review] = hooks.received('/default');
    expect(review.query).toBe('timeout=10s');
    expect(review.apiVersion).toBe('admission.k8s.io/v1');
    const r = review.request;
    expect(r.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(r).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'cm',
      namespace: 'mut',
      operation: 'CREATE',
      userInfo: { username: expect.any(String) },
      object: { kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'mut' }, data: { a: 'b' } },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    });
    expect(r.subResource).toBeUndefined();

    // An update carries the old object.
    await env.ok(['label', 'configmap', 'cm', '-n', 'mut', 'x=y']);
    const update = hooks.received('/default').at(-1).request;
    expect(update.operation).toBe('UPDATE');
    expect(update.oldObject.metadata.labels).toBeUndefined();
    expect(update.object.metadata.labels).toEqual({ x: 'y' });
    expect(update.options.kind).toBe('UpdateOptions');
    await env.ok(['delete', 'mutatingwebhookconfiguration', 'defaulter']);
  });

  it('reinvoke a webhook with reinvocationPolicy IfNeeded when a later webhook changed the object', async () => {
    await namespace('reinvoke');
    hooks.handle('/first', allow());
    hooks.handle('/second', patch([{ op: 'add', path: '/metadata/labels', value: { second: 'yes' } }]));
    await apply(
      config('Mutating', 'reinvoke', [
        webhook('first.example.com', '/first', 'reinvoke', { reinvocationPolicy: 'IfNeeded' }),
        webhook('second.example.com', '/second', 'reinvoke', { reinvocationPolicy: 'Never' }),
      ]),
    );
    expect((await create(configMap('cm', 'reinvoke'))).code).toBe(0);
    const first = hooks.received('/first');
    expect(first).toHaveLength(2);
    expect(first[0].request.object.metadata.labels).toBeUndefined();
    expect(first[1].request.object.metadata.labels).toEqual({ second: 'yes' });
    // A webhook with reinvocationPolicy Never is called once.
    expect(hooks.received('/second')).toHaveLength(1);
    await env.ok(['delete', 'mutatingwebhookconfiguration', 'reinvoke']);
  });
});

describe('reinvocation of the built-in plugins', () => {
  it('runs them again after a webhook changed a pod, without doing their work twice', async () => {
    await namespace('pods');
    await apply({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default', namespace: 'pods' },
    });
    hooks.handle('/pod-label', patch([{ op: 'add', path: '/metadata/labels', value: { touched: 'yes' } }]));
    await apply(
      config('Mutating', 'pods', [
        webhook('pod-label.example.com', '/pod-label', 'pods', {
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        }),
      ]),
    );
    expect(
      (
        await create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p', namespace: 'pods' },
          spec: { containers: [{ name: 'c', image: 'busybox' }] },
        })
      ).code,
    ).toBe(0);
    const pod = await getJson('pod', 'p', '-n', 'pods');
    expect(pod.metadata.labels).toEqual({ touched: 'yes' });
    expect(pod.spec.volumes.filter((v: any) => v.name.startsWith('kube-api-access-'))).toHaveLength(1);
    expect(pod.spec.containers[0].volumeMounts).toHaveLength(1);
    // The webhook saw the pod as the built-in plugins left it (service account, token volume).
    expect(hooks.received('/pod-label')[0].request.object.spec.serviceAccountName).toBe('default');
    await env.ok(['delete', 'mutatingwebhookconfiguration', 'pods']);
  });
});

describe('validating admission webhooks', () => {
  it('deny with the webhook’s code and message, and pass the warnings on to kubectl', async () => {
    await namespace('val');
    hooks.handle('/deny', (rv) =>
      rv.request.object.data?.field === 'wrong'
        ? deny({ code: 418, message: 'spec.field: wrong' })(rv)
        : allow({ warnings: ['this configmap is watched'] })(rv),
    );
    await apply(config('Validating', 'denier', [webhook('deny.example.com', '/deny', 'val')]));
    const denied = await create({ ...configMap('bad', 'val'), data: { field: 'wrong' } }, ['-v=6']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain(
      'admission webhook "deny.example.com" denied the request: spec.field: wrong',
    );
    expect(denied.stderr).toMatch(/ 418 /);
    const ok = await create(configMap('good', 'val'));
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain('Warning: this configmap is watched');
    await env.ok(['delete', 'validatingwebhookconfiguration', 'denier']);
  });

  it('fail closed or open as failurePolicy says, for a webhook that is down or too slow', async () => {
    await namespace('fail');
    hooks.handle('/slow', () => ({ never: true }));
    const downUrl = 'https://127.0.0.1:1/down';
    await apply(
      config('Validating', 'failing', [
        webhook('slow.example.com', '/slow', 'fail', {
          timeoutSeconds: 1,
          objectSelector: { matchLabels: { hook: 'slow' } },
        }),
        {
          ...webhook('down.example.com', '/down', 'fail', {
            objectSelector: { matchLabels: { hook: 'down' } },
          }),
          clientConfig: { url: downUrl, caBundle: hooks.caBundle },
        },
      ]),
    );
    const slow = await create(configMap('slow', 'fail', { labels: { hook: 'slow' } }));
    expect(slow.stderr).toContain(
      `Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "${hooks.url('/slow')}?timeout=1s": context deadline exceeded`,
    );
    const down = await create(configMap('down', 'fail', { labels: { hook: 'down' } }));
    expect(down.stderr).toContain(
      `Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post "${downUrl}?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused`,
    );
    // With failurePolicy Ignore, both let the request through.
    const cfg = await getJson('validatingwebhookconfiguration', 'failing');
    for (const h of cfg.webhooks) h.failurePolicy = 'Ignore';
    await env.ok(['replace', '-f', '-'], { input: JSON.stringify(cfg) });
    expect((await create(configMap('slow', 'fail', { labels: { hook: 'slow' } }))).code).toBe(0);
    expect((await create(configMap('down', 'fail', { labels: { hook: 'down' } }))).code).toBe(0);
    const metrics = await env.ok(['get', '--raw', '/metrics']);
    expect(metrics).toMatch(
      /apiserver_admission_webhook_rejection_count\{name="down.example.com",type="validating",operation="CREATE",error_type="calling_webhook_error",rejection_code="503"\} 1/,
    );
    expect(metrics).toMatch(
      /apiserver_admission_webhook_fail_open_count\{name="slow.example.com",type="validating"\} 1/,
    );
    await env.ok(['delete', 'validatingwebhookconfiguration', 'failing']);
  });

  it('reach only the namespaces and objects their selectors select', async () => {
    await namespace('sel-on', { policy: 'strict' });
    await namespace('sel-off');
    hooks.handle('/strict', deny({ message: 'strict namespace' }));
    await apply(
      config('Validating', 'selectors', [
        webhook('strict.example.com', '/strict', 'unused', {
          namespaceSelector: { matchLabels: { policy: 'strict' } },
          objectSelector: { matchExpressions: [{ key: 'exempt', operator: 'DoesNotExist' }] },
        }),
      ]),
    );
    expect((await create(configMap('cm', 'sel-off'))).code).toBe(0);
    expect((await create(configMap('cm', 'sel-on'))).stderr).toContain(
      'admission webhook "strict.example.com" denied the request: strict namespace',
    );
    expect((await create(configMap('free', 'sel-on', { labels: { exempt: 'yes' } }))).code).toBe(0);
    // The object selector also matches on the old object: removing the label is judged.
    expect((await env.run(['label', 'configmap', 'free', '-n', 'sel-on', 'exempt-'])).stderr).toContain(
      'strict namespace',
    );
    await env.ok(['delete', 'validatingwebhookconfiguration', 'selectors']);
  });

  it('see dry runs as dry runs', async () => {
    await namespace('dry');
    hooks.handle('/dry', allow());
    await apply(
      config('Validating', 'dry', [
        webhook('dry.example.com', '/dry', 'dry', { sideEffects: 'NoneOnDryRun' }),
      ]),
    );
    expect((await create(configMap('cm', 'dry'), ['--dry-run=server'])).code).toBe(0);
    const [review] = hooks.received('/dry');
    expect(review.request.dryRun).toBe(true);
    expect(review.request.options.dryRun).toEqual(['All']);
    expect((await env.run(['get', 'configmap', 'cm', '-n', 'dry'])).code).not.toBe(0);
    await env.ok(['delete', 'validatingwebhookconfiguration', 'dry']);
  });
});

describe('DELETE and custom resources', () => {
  it('show a DELETE its old object and DeleteOptions (validating) and no object (mutating)', async () => {
    await namespace('del');
    await create(configMap('keep', 'del'));
    hooks.handle('/del-validate', deny({ message: 'keep it' }));
    hooks.handle('/del-mutate', allow());
    const onDelete = {
      rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    };
    await apply(
      config('Validating', 'deletes', [webhook('del.example.com', '/del-validate', 'del', onDelete)]),
    );
    await apply(
      config('Mutating', 'deletes', [webhook('del-mutate.example.com', '/del-mutate', 'del', onDelete)]),
    );
    const r = await env.run(['delete', 'configmap', 'keep', '-n', 'del', '--grace-period=5']);
    expect(r.stderr).toContain('admission webhook "del.example.com" denied the request: keep it');
    const validating = hooks.received('/del-validate').at(-1).request;
    expect(validating).toMatchObject({
      operation: 'DELETE',
      name: 'keep',
      object: null,
      oldObject: { kind: 'ConfigMap', metadata: { name: 'keep' } },
      options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', gracePeriodSeconds: 5 },
    });
    expect(validating.userInfo.username).not.toBe('');
    const mutating = hooks.received('/del-mutate').at(-1).request;
    expect(mutating).toMatchObject({ operation: 'DELETE', object: null, oldObject: null });
    expect((await getJson('configmap', 'keep', '-n', 'del')).metadata.name).toBe('keep');
    await env.ok(['delete', 'validatingwebhookconfiguration', 'deletes']);
    await env.ok(['delete', 'mutatingwebhookconfiguration', 'deletes']);
  });

  it('default and prune a custom resource again after a patch, and match another version as Equivalent', async () => {
    await namespace('cr');
    const version = (name: string, storage: boolean) => ({
      name,
      served: true,
      storage,
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: {
              type: 'object',
              properties: { size: { type: 'integer', default: 1 }, color: { type: 'string' } },
            },
          },
        },
      },
    });
    await apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
        versions: [version('v1', true), version('v2', false)],
      },
    });
    await env.ok(['wait', '--for=condition=Established', 'crd/gadgets.example.com', '--timeout=20s']);
    hooks.handle('/gadget', patch([{ op: 'replace', path: '/spec', value: { color: 'red', unknown: 'x' } }]));
    await apply(
      config('Mutating', 'gadgets', [
        webhook('gadget.example.com', '/gadget', 'cr', {
          rules: [
            {
              operations: ['CREATE'],
              apiGroups: ['example.com'],
              apiVersions: ['v1'],
              resources: ['gadgets'],
            },
          ],
        }),
      ]),
    );
    const gadget = (v: string) => ({
      apiVersion: `example.com/${v}`,
      kind: 'Gadget',
      metadata: { name: `g-${v}`, namespace: 'cr' },
      spec: { size: 3 },
    });
    expect((await create(gadget('v1'))).code).toBe(0);
    const g1 = await getJson('gadgets.v1.example.com', 'g-v1', '-n', 'cr');
    expect(g1.spec).toEqual({ color: 'red', size: 1 });
    expect(g1.metadata.generation).toBe(1);
    // Created through v2, which no rule names: matched as v1 (matchPolicy Equivalent).
    expect((await create(gadget('v2'))).code).toBe(0);
    const review = hooks.received('/gadget').at(-1).request;
    expect(review).toMatchObject({
      kind: { group: 'example.com', version: 'v1', kind: 'Gadget' },
      resource: { group: 'example.com', version: 'v1', resource: 'gadgets' },
      requestKind: { group: 'example.com', version: 'v2', kind: 'Gadget' },
      requestResource: { group: 'example.com', version: 'v2', resource: 'gadgets' },
      object: { apiVersion: 'example.com/v1' },
    });
    expect((await getJson('gadgets.v2.example.com', 'g-v2', '-n', 'cr')).spec).toEqual({
      color: 'red',
      size: 1,
    });
    await env.ok(['delete', 'mutatingwebhookconfiguration', 'gadgets']);
  });
});

describe('matchConditions', () => {
  it('skip a webhook when a condition is false, and fail or skip on an error as failurePolicy says', async () => {
    await namespace('cond');
    hooks.handle('/cond', deny({ message: 'matched' }));
    const conditions = [
      {
        name: 'not-excluded',
        expression: "!has(object.metadata.labels) || !('skip' in object.metadata.labels)",
      },
      { name: 'by-admin', expression: "request.userInfo.username != 'nobody'" },
      {
        name: 'may-create',
        expression: "authorizer.group('').resource('configmaps').namespace('cond').check('create').allowed()",
      },
      { name: 'data-key', expression: "object.data.key == 'x'" },
    ];
    await apply(
      config('Validating', 'conditions', [
        webhook('cond.example.com', '/cond', 'cond', { matchConditions: conditions }),
      ]),
    );
    // All true: called, and it denies.
    expect((await create({ ...configMap('a', 'cond'), data: { key: 'x' } })).stderr).toContain(
      'admission webhook "cond.example.com" denied the request: matched',
    );
    // One false: not called, even though another errs.
    expect((await create(configMap('b', 'cond', { labels: { skip: 'yes' } }))).code).toBe(0);
    // An error and none false: under Fail, the request fails with the error as a 403.
    const failed = await create(configMap('c', 'cond'));
    expect(failed.stderr).toContain(
      "configmaps \"c\" is forbidden: expression 'object.data.key == 'x'' resulted in error: no such key: key",
    );
    const cfg = await getJson('validatingwebhookconfiguration', 'conditions');
    cfg.webhooks[0].failurePolicy = 'Ignore';
    await env.ok(['replace', '-f', '-'], { input: JSON.stringify(cfg) });
    expect((await create(configMap('c', 'cond'))).code).toBe(0);
    expect(hooks.received('/cond')).toHaveLength(1);
    await env.ok(['delete', 'validatingwebhookconfiguration', 'conditions']);
  });

  it('are compiled when the configuration is written: an invalid one is refused, as kube refuses it', async () => {
    const conditions = [
      { name: 'not-bool', expression: 'object.metadata.name' },
      { name: 'syntax', expression: 'object.metadata.name ==' },
      { name: 'no-params', expression: 'params.x == 1' },
      { name: '', expression: 'true' },
    ];
    const bad = config('Mutating', 'bad-conditions', [
      webhook('bad.example.com', '/cond', 'cond', { matchConditions: conditions }),
    ]);
    const r = await env.run(['apply', '-f', '-'], { input: JSON.stringify(bad) });
    expect(r.code).not.toBe(0);
    const p = 'webhooks[0].matchConditions';
    expect(r.stderr).toContain('The MutatingWebhookConfiguration "bad-conditions" is invalid:');
    expect(r.stderr).toContain(
      `${p}[0].expression: Invalid value: "object.metadata.name": must evaluate to bool but got dyn`,
    );
    expect(r.stderr).toContain(
      `${p}[1].expression: Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:24: Syntax error:`,
    );
    expect(r.stderr).toContain(
      `${p}[2].expression: Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'`,
    );
    expect(r.stderr).toContain(`${p}[3].name: Required value`);
    expect((await env.run(['get', 'mutatingwebhookconfiguration', 'bad-conditions'])).code).not.toBe(0);
  });
});

describe('webhooks on subresources and behind Services', () => {
  it('judge writes to status and scale, seeing a Scale for scale', async () => {
    await namespace('sub');
    await env.ok(['create', 'deployment', 'web', '-n', 'sub', '--image=nginx', '--replicas=1']);
    hooks.handle('/scale', (rv) =>
      rv.request.object.spec.replicas > 5
        ? deny({ message: 'at most 5 replicas' })(rv)
        : allow({ warnings: [`${rv.request.object.spec.replicas} replicas is a lot`] })(rv),
    );
    hooks.handle('/status', deny({ message: 'status is read-only here' }));
    const rule = (resources: string[]) => ({
      rules: [{ operations: ['UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources }],
    });
    await apply(
      config('Validating', 'subresources', [
        webhook('scale.example.com', '/scale', 'sub', rule(['deployments/scale'])),
        webhook('status.example.com', '/status', 'sub', rule(['deployments/status'])),
      ]),
    );
    expect((await env.run(['scale', 'deployment', 'web', '-n', 'sub', '--replicas=9'])).stderr).toContain(
      'admission webhook "scale.example.com" denied the request: at most 5 replicas',
    );
    // The webhook's warnings on a write through /scale reach kubectl, as kube passes them on.
    expect((await env.run(['scale', 'deployment', 'web', '-n', 'sub', '--replicas=3'])).stderr).toContain(
      'Warning: 3 replicas is a lot',
    );
    expect((await getJson('deployment', 'web', '-n', 'sub')).spec.replicas).toBe(3);
    const scale = hooks.received('/scale').at(-1).request;
    expect(scale).toMatchObject({
      kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      subResource: 'scale',
      requestSubResource: 'scale',
      object: { kind: 'Scale', spec: { replicas: 3 } },
      oldObject: { kind: 'Scale', spec: { replicas: 1 } },
    });
    const status = await env.run([
      'patch',
      'deployment',
      'web',
      '-n',
      'sub',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"observedGeneration":7}}',
    ]);
    expect(status.stderr).toContain(
      'admission webhook "status.example.com" denied the request: status is read-only here',
    );
    // The main resource is not a subresource: its update is not judged by either.
    await env.ok(['label', 'deployment', 'web', '-n', 'sub', 'x=y']);
    await env.ok(['delete', 'validatingwebhookconfiguration', 'subresources']);
  });

  it('call a webhook behind a selector-less Service with an EndpointSlice to 127.0.0.1', async () => {
    await namespace('webhooks');
    await namespace('svc');
    hooks.handle('/svc', deny({ message: 'reached through the service' }));
    await apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'hook', namespace: 'webhooks' },
      spec: { ports: [{ name: 'https', port: 443, targetPort: hooks.port }] },
    });
    const hook = webhook('svc.example.com', '/svc', 'svc');
    hook.clientConfig = {
      service: { namespace: 'webhooks', name: 'hook', path: '/svc' },
      caBundle: hooks.caBundle,
    } as any;
    await apply(config('Validating', 'service', [hook]));
    expect((await create(configMap('cm', 'svc'))).stderr).toContain(
      'failed calling webhook "svc.example.com": failed to call webhook: Post "https://hook.webhooks.svc:443/svc?timeout=10s": no endpoints available for service "hook"',
    );
    await apply({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'hook-1', namespace: 'webhooks', labels: { 'kubernetes.io/service-name': 'hook' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port: hooks.port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    });
    expect((await create(configMap('cm', 'svc'))).stderr).toContain(
      'admission webhook "svc.example.com" denied the request: reached through the service',
    );
    await env.ok(['delete', 'validatingwebhookconfiguration', 'service']);
  });
});

describe('CONNECT', () => {
  it('is judged for pods/exec, with the PodExecOptions as the object', async () => {
    await namespace('connect');
    await create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'connect' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    hooks.handle('/exec', deny({ message: 'no exec here' }));
    await apply(
      config('Validating', 'connect', [
        webhook('exec.example.com', '/exec', 'connect', {
          rules: [
            { operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/exec'] },
          ],
        }),
      ]),
    );
    const r = await env.run(['exec', '-n', 'connect', 'p', '-c', 'c', '--', 'ls', '/']);
    expect(r.stderr).toContain('admission webhook "exec.example.com" denied the request: no exec here');
    const review = hooks.received('/exec').at(-1).request;
    expect(review).toMatchObject({
      operation: 'CONNECT',
      kind: { group: '', version: 'v1', kind: 'PodExecOptions' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      subResource: 'exec',
      name: 'p',
      namespace: 'connect',
      object: {
        kind: 'PodExecOptions',
        apiVersion: 'v1',
        container: 'c',
        command: ['ls', '/'],
        stdout: true,
      },
      oldObject: null,
    });
    await env.ok(['delete', 'validatingwebhookconfiguration', 'connect']);
  });
});

describe('pods/eviction', () => {
  it('is judged as the Eviction it posts, and a denial keeps the pod', async () => {
    await namespace('evict');
    await create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'evict' },
      spec: { nodeSelector: { nowhere: 'true' }, containers: [{ name: 'c', image: 'busybox' }] },
    });
    hooks.handle('/evict', deny({ message: 'no evictions here', code: 403 }));
    await apply(
      config('Validating', 'evict', [
        webhook('evict.example.com', '/evict', 'evict', {
          rules: [
            { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'] },
          ],
        }),
      ]),
    );
    const eviction = {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'p', namespace: 'evict' },
    };
    const evict = () =>
      env.run(['create', '--raw', '/api/v1/namespaces/evict/pods/p/eviction', '-f', '-'], {
        input: JSON.stringify(eviction),
      });
    const refused = await evict();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'admission webhook "evict.example.com" denied the request: no evictions here',
    );
    expect((await env.run(['get', 'pod', 'p', '-n', 'evict'])).code).toBe(0);
    expect(hooks.received('/evict').at(-1).request).toMatchObject({
      operation: 'CREATE',
      kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      subResource: 'eviction',
      name: 'p',
      namespace: 'evict',
      object: eviction,
      oldObject: null,
    });
    hooks.handle('/evict', allow());
    expect((await evict()).code).toBe(0);
    expect((await env.run(['get', 'pod', 'p', '-n', 'evict'])).code).toBe(1);
    await env.ok(['delete', 'validatingwebhookconfiguration', 'evict']);
  });
});

describe('hostile webhook answers', () => {
  it('fail the request with kube’s words and store nothing', async () => {
    await namespace('hostile');
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
    const cases: [string, (rv: any) => any, string][] = [
      [
        'garbage',
        () => ({ raw: 'garbage' }),
        `failed to call webhook: couldn't get version/kind; json parse error`,
      ],
      [
        'wrong-uid',
        () => ({ response: { uid: 'nope', allowed: true } }),
        'received invalid webhook response: expected response.uid=',
      ],
      [
        'wrong-version',
        (rv) => ({ apiVersion: 'admission.k8s.io/v2', response: { uid: rv.request.uid, allowed: true } }),
        'received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v2, Kind=AdmissionReview',
      ],
      [
        'not-a-patch',
        (rv) => ({
          response: { uid: rv.request.uid, allowed: true, patchType: 'JSONPatch', patch: b64({ op: 'add' }) },
        }),
        'received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch',
      ],
      [
        'bad-patch',
        patch([{ op: 'add', path: '/nope/deeper', value: 1 }]),
        'Internal error occurred: add operation does not apply: doc is missing path: "/nope/deeper": missing value',
      ],
      [
        'breaking-patch',
        patch([{ op: 'replace', path: '/metadata', value: 'x' }]),
        'Internal error occurred: json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta',
      ],
      [
        'merge-patch',
        (rv) => ({
          response: {
            uid: rv.request.uid,
            allowed: true,
            patchType: 'MergePatch',
            patch: b64([{ op: 'add', path: '/data/x', value: 'y' }]),
          },
        }),
        'failed calling webhook "merge-patch.example.com": unsupported patch type "MergePatch"',
      ],
    ];
    await apply(
      config(
        'Mutating',
        'hostile',
        cases.map(([name]) =>
          webhook(`${name}.example.com`, `/${name}`, 'hostile', {
            objectSelector: { matchLabels: { case: name } },
          }),
        ),
      ),
    );
    for (const [name, handler, text] of cases) {
      hooks.handle(`/${name}`, handler);
      const r = await create(configMap(name, 'hostile', { labels: { case: name } }));
      expect(r.code, name).not.toBe(0);
      expect(r.stderr, name).toContain(text);
    }
    expect(
      JSON.parse(await env.ok(['get', 'configmaps', '-n', 'hostile', '-l', 'case', '-o', 'json'])).items,
    ).toEqual([]);
    await env.ok(['delete', 'mutatingwebhookconfiguration', 'hostile']);
  });
});

describe('the Python client', () => {
  it("meets an operator's webhooks as on a real cluster: a field injected, a wrong one denied", async () => {
    await namespace('kopf');
    await apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'kopfexamples.kopf.dev' },
      spec: {
        group: 'kopf.dev',
        scope: 'Namespaced',
        names: { plural: 'kopfexamples', singular: 'kopfexample', kind: 'KopfExample' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
              },
            },
          },
        ],
      },
    });
    await env.ok(['wait', '--for=condition=Established', 'crd/kopfexamples.kopf.dev', '--timeout=20s']);
    const rules = {
      rules: [
        { operations: ['CREATE'], apiGroups: ['kopf.dev'], apiVersions: ['v1'], resources: ['kopfexamples'] },
      ],
    };
    hooks.handle('/kopf-mutate', patch([{ op: 'add', path: '/spec/injected', value: 'yes' }]));
    hooks.handle('/kopf-validate', (rv) =>
      rv.request.object.spec.field === 'wrong' ? deny({ message: 'spec.field is wrong' })(rv) : allow()(rv),
    );
    await apply(config('Mutating', 'kopf', [webhook('mutate.kopf.dev', '/kopf-mutate', 'kopf', rules)]));
    await apply(
      config('Validating', 'kopf', [webhook('validate.kopf.dev', '/kopf-validate', 'kopf', rules)]),
    );
    const script = `
import json, kubernetes
kubernetes.config.load_kube_config()
api = kubernetes.client.CustomObjectsApi()
body = lambda name, field: {"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": {"name": name}, "spec": {"field": field}}
out = {"created": api.create_namespaced_custom_object("kopf.dev", "v1", "kopf", "kopfexamples", body("good", "right"))["spec"]}
try:
    api.create_namespaced_custom_object("kopf.dev", "v1", "kopf", "kopfexamples", body("bad", "wrong"))
except kubernetes.client.exceptions.ApiException as e:
    out["status"] = e.status
    out["message"] = json.loads(e.body)["message"]
print(json.dumps(out))
`;
    const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', script], {
      env: { ...process.env, KUBECONFIG: env.kubeconfigPath },
    });
    expect(JSON.parse(stdout)).toEqual({
      created: { field: 'right', injected: 'yes' },
      status: 400,
      message: 'admission webhook "validate.kopf.dev" denied the request: spec.field is wrong',
    });
    await env.ok(['delete', 'mutatingwebhookconfiguration', 'kopf']);
    await env.ok(['delete', 'validatingwebhookconfiguration', 'kopf']);
  });
});
