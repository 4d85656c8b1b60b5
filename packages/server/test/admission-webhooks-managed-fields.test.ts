/**
 * Field ownership around mutating admission, as kube-apiserver 1.32 keeps it: its create, update
 * and patch handlers run the field manager before mutating admission, so a field a mutating
 * webhook adds is owned by no manager (server-side apply may take it without a conflict), and
 * managed fields a webhook corrupts are put back with a warning. kubectl 1.32 against the
 * server, with a real HTTPS webhook server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from './kubectl.js';
import { patch, startWebhookServer, type WebhookServer } from './webhook-server.js';

let env: KubectlEnv;
let hooks: WebhookServer;
beforeAll(async () => {
  [env, hooks] = await Promise.all([startKubectlEnv({ controllers: false }), startWebhookServer()]);
  await env.ok(['create', 'namespace', 'owned']);
});
afterAll(async () => {
  await Promise.all([env?.stop(), hooks?.close()]);
});

const input = (obj: object) => ({ input: JSON.stringify(obj) });
/** The object's managed fields without their times, which only say when. */
async function managedFields(name: string) {
  const cm = JSON.parse(
    await env.ok(['get', 'configmap', name, '-n', 'owned', '-o', 'json', '--show-managed-fields']),
  );
  return {
    data: cm.data,
    entries: (cm.metadata.managedFields ?? []).map(({ time, ...e }: { time: string }) => {
      expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      return e;
    }),
  };
}
async function mutatingWebhook(name: string, path: string, operations: string[]) {
  await env.ok(['apply', '-f', '-'], {
    ...input({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name },
      webhooks: [
        {
          name: `${name}.example.com`,
          clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
          rules: [{ operations, apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'owned' } },
          // Each test's webhook patches only the ConfigMap of its test.
          objectSelector: { matchLabels: { test: name } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    }),
  });
}
const configMap = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'owned', labels: { test: name } },
  data,
});
/** An entry of a write through kubectl's `manager`. */
const update = (manager: string, fields: object) => ({
  manager,
  operation: 'Update',
  apiVersion: 'v1',
  fieldsType: 'FieldsV1',
  fieldsV1: fields,
});
/** The test label every test's ConfigMap is created with. */
const LABELS = { 'f:labels': { '.': {}, 'f:test': {} } };

describe('fields a mutating webhook adds', () => {
  it('are owned by no manager after kubectl create, and server-side apply takes them without a conflict', async () => {
    // Adds data.injected when it is missing, as a defaulting webhook does.
    hooks.handle(
      '/inject',
      patch((review) =>
        review.request.object.data?.injected === undefined
          ? [{ op: 'add', path: '/data/injected', value: 'by-webhook' }]
          : [],
      ),
    );
    await mutatingWebhook('inject', '/inject', ['CREATE', 'UPDATE']);
    await env.ok(['create', '-f', '-'], input(configMap('inject', { a: 'b' })));

    const created = await managedFields('inject');
    expect(created.data).toEqual({ a: 'b', injected: 'by-webhook' });
    // kubectl-create owns what it sent, not data.injected.
    expect(created.entries).toEqual([
      update('kubectl-create', {
        'f:data': { '.': {}, 'f:a': {} },
        'f:metadata': LABELS,
      }),
    ]);
    // The webhook saw the object with the field manager's entry already on it, as kube sends it.
    const [review] = hooks.received('/inject');
    expect(review.request.object.metadata.managedFields).toEqual([
      expect.objectContaining({ manager: 'kubectl-create', operation: 'Update' }),
    ]);

    // Nobody owns data.injected: another manager applies it without --force-conflicts.
    const applied = await env.run(
      ['apply', '--server-side', '--field-manager=tool', '-f', '-'],
      input(configMap('inject', { injected: 'by-tool' })),
    );
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    const after = await managedFields('inject');
    expect(after.data).toEqual({ a: 'b', injected: 'by-tool' });
    // Apply entries come first, as kube sorts them.
    expect(after.entries).toEqual([
      {
        manager: 'tool',
        operation: 'Apply',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:injected': {} }, 'f:metadata': { 'f:labels': { 'f:test': {} } } },
      },
      update('kubectl-create', { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': LABELS }),
    ]);
    // What an Update took from kubectl-create still conflicts: data.a is owned.
    const conflict = await env.run(
      ['apply', '--server-side', '--field-manager=tool', '-f', '-'],
      input(configMap('inject', { a: 'c', injected: 'by-tool' })),
    );
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain(
      'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.a',
    );
    await env.ok(['delete', 'mutatingwebhookconfiguration', 'inject']);
  });

  it('on an update are owned by no manager either (kubectl label)', async () => {
    hooks.handle(
      '/stamp',
      patch((review) =>
        review.request.operation === 'UPDATE' && review.request.object.data?.stamped === undefined
          ? [{ op: 'add', path: '/data/stamped', value: 'yes' }]
          : [],
      ),
    );
    await mutatingWebhook('stamp', '/stamp', ['UPDATE']);
    await env.ok(['create', '-f', '-'], input(configMap('stamp', { a: 'b' })));
    await env.ok(['label', 'configmap', 'stamp', '-n', 'owned', 'x=y']);
    const { data, entries } = await managedFields('stamp');
    expect(data).toEqual({ a: 'b', stamped: 'yes' });
    expect(entries).toEqual([
      update('kubectl-create', { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': LABELS }),
      update('kubectl-label', { 'f:metadata': { 'f:labels': { 'f:x': {} } } }),
    ]);
    await env.ok(['delete', 'mutatingwebhookconfiguration', 'stamp']);
  });
});

describe('managed fields a mutating webhook corrupts', () => {
  it('are put back as the field manager left them, with kube’s warning', async () => {
    hooks.handle(
      '/corrupt',
      patch([{ op: 'replace', path: '/metadata/managedFields/0/operation', value: 'Bogus' }]),
    );
    await mutatingWebhook('corrupt', '/corrupt', ['CREATE']);
    const r = await env.run(['create', '-f', '-'], input(configMap('corrupt', { a: 'b' })));
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      'Warning: .metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: operation must be `Apply` or `Update`\n',
    );
    const { entries } = await managedFields('corrupt');
    expect(entries).toEqual([
      update('kubectl-create', { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': LABELS }),
    ]);
    await env.ok(['delete', 'mutatingwebhookconfiguration', 'corrupt']);
  });
});
