/**
 * Writes to `/status` follow each kind's status strategy, as kube-apiserver 1.32's: a built-in
 * kind's status write may change the metadata its strategy does not reset (a Deployment's
 * annotations, which kube's deployment controller writes through deployments/status), while a
 * custom resource's keeps the whole stored object but its status.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { establish, simpleCrd } from './crd/support.js';
import { httpClient } from './http.js';
import { type KubectlEnv, startKubectlEnv } from './kubectl.js';

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;

const NS = '/namespaces/default';
const MERGE = 'application/merge-patch+json';
const FINALIZER = 'example.com/hold';

/** A status write that also tries to change labels, annotations, finalizers and the spec. */
const metaChanges = {
  labels: { changed: 'yes' },
  annotations: { note: 'written-through-status' },
  finalizers: [FINALIZER],
};

beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
  await establish(http, simpleCrd('gizmos', 'Gizmo', 'example.com', { subresources: { status: {} } }));
});
afterAll(async () => {
  await env.stop();
});

/** The managedFields entry `manager` wrote through `/status`. */
function statusEntry(obj: any, manager: string): any {
  return obj.metadata.managedFields.find((e: any) => e.manager === manager && e.subresource === 'status');
}

describe('status writes', () => {
  it('Deployment (kubectl patch --subresource=status): keeps annotations and finalizers, resets labels and spec', async () => {
    const created = await http.post(`/apis/apps/v1${NS}/deployments`, {
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    expect(created.status).toBe(201);
    const patch = {
      metadata: metaChanges,
      spec: { replicas: 5 },
      status: { observedGeneration: 1 },
    };
    const out = await env.ok([
      'patch',
      'deployment',
      'web',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(patch),
      '-o',
      'json',
      '--show-managed-fields',
    ]);
    const d = JSON.parse(out);
    expect(d.metadata.labels).toEqual({ app: 'web' });
    expect(d.metadata.annotations).toEqual({ note: 'written-through-status' });
    expect(d.metadata.finalizers).toEqual([FINALIZER]);
    expect(d.spec.replicas).toBe(1);
    expect(d.status.observedGeneration).toBe(1);
    // A status write does not bump the generation, though the annotations changed.
    expect(d.metadata.generation).toBe(created.json.metadata.generation);
    // kube's field manager: the writer owns what it changed, but not what the strategy resets
    // (spec, metadata.labels).
    const entry = statusEntry(d, 'kubectl-patch');
    expect(entry.operation).toBe('Update');
    expect(entry.fieldsV1).toEqual({
      'f:metadata': {
        'f:annotations': { '.': {}, 'f:note': {} },
        'f:finalizers': { '.': {}, 'v:"example.com/hold"': {} },
      },
      'f:status': { 'f:observedGeneration': {} },
    });
    const stored = await http.get(`/apis/apps/v1${NS}/deployments/web`);
    expect(stored.json.metadata.annotations).toEqual({ note: 'written-through-status' });
  });

  it('Deployment: an annotation written to the main resource bumps the generation (kube copies them to the ReplicaSets); a label does not', async () => {
    const before = (await http.get(`/apis/apps/v1${NS}/deployments/web`)).json.metadata.generation as number;
    await env.ok(['annotate', 'deployment', 'web', 'team=blue']);
    const annotated = JSON.parse(await env.ok(['get', 'deployment', 'web', '-o', 'json']));
    expect(annotated.metadata.generation).toBe(before + 1);
    await env.ok(['label', 'deployment', 'web', 'tier=front']);
    const labelled = JSON.parse(await env.ok(['get', 'deployment', 'web', '-o', 'json']));
    expect(labelled.metadata.generation).toBe(before + 1);
  });

  it('Pod (Python client, replace_namespaced_pod_status): keeps labels and annotations, resets owner references and spec', async () => {
    const created = await http.post(`/api/v1${NS}/pods`, {
      metadata: { name: 'p1', labels: { app: 'p' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    expect(created.status).toBe(201);
    const script = `
import json, kubernetes
kubernetes.config.load_kube_config()
api = kubernetes.client.CoreV1Api()
pod = api.read_namespaced_pod('p1', 'default')
pod.metadata.labels = {'app': 'p', 'changed': 'yes'}
pod.metadata.annotations = {'note': 'written-through-status'}
pod.metadata.owner_references = [kubernetes.client.V1OwnerReference(api_version='v1', kind='ConfigMap', name='owner', uid='0b0a6d43-5a6b-4f4e-9a43-3f7b6f0e2a11')]
pod.spec.active_deadline_seconds = 30
pod.status.message = 'from python'
out = api.replace_namespaced_pod_status('p1', 'default', pod, field_manager='py-status')
print(json.dumps(api.api_client.sanitize_for_serialization(out)))
`;
    const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', script], {
      env: { ...process.env, KUBECONFIG: env.kubeconfigPath },
    });
    const p = JSON.parse(stdout);
    expect(p.metadata.labels).toEqual({ app: 'p', changed: 'yes' });
    expect(p.metadata.annotations).toEqual({ note: 'written-through-status' });
    expect(p.metadata.ownerReferences).toBeUndefined();
    expect(p.spec.activeDeadlineSeconds).toBeUndefined();
    expect(p.status.message).toBe('from python');
    const entry = statusEntry(p, 'py-status');
    expect(entry.fieldsV1['f:metadata']).toEqual({
      'f:annotations': { '.': {}, 'f:note': {} },
      'f:labels': { 'f:changed': {} },
    });
    expect(entry.fieldsV1['f:spec']).toBeUndefined();
  });

  it('ReplicaSet (PUT): keeps labels, annotations and finalizers, resets the spec', async () => {
    const created = await http.post(`/apis/apps/v1${NS}/replicasets`, {
      metadata: { name: 'rs1', labels: { app: 'rs' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'rs' } },
        template: {
          metadata: { labels: { app: 'rs' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    expect(created.status).toBe(201);
    const body = structuredClone(created.json);
    body.metadata = { ...body.metadata, ...metaChanges, labels: { app: 'rs', ...metaChanges.labels } };
    body.spec.replicas = 3;
    body.status = { replicas: 0, observedGeneration: 1 };
    const res = await http.put(`/apis/apps/v1${NS}/replicasets/rs1/status`, body);
    expect(res.status).toBe(200);
    expect(res.json.metadata.labels).toEqual({ app: 'rs', changed: 'yes' });
    expect(res.json.metadata.annotations).toEqual(metaChanges.annotations);
    expect(res.json.metadata.finalizers).toEqual([FINALIZER]);
    expect(res.json.spec.replicas).toBe(1);
    expect(res.json.status.observedGeneration).toBe(1);
  });

  it('Service (spec-only strategy): keeps annotations, resets the spec', async () => {
    const created = await http.post(`/api/v1${NS}/services`, {
      metadata: { name: 'svc1' },
      spec: { ports: [{ port: 80 }], selector: { app: 's' } },
    });
    expect(created.status).toBe(201);
    const res = await http.patch(
      `/api/v1${NS}/services/svc1/status`,
      { metadata: { annotations: metaChanges.annotations }, spec: { selector: { app: 'other' } } },
      MERGE,
    );
    expect(res.status).toBe(200);
    expect(res.json.metadata.annotations).toEqual(metaChanges.annotations);
    expect(res.json.spec.selector).toEqual({ app: 's' });
  });

  it('custom resource: keeps the whole stored object but its status', async () => {
    const path = `/apis/example.com/v1${NS}/gizmos`;
    const created = await http.post(path, {
      apiVersion: 'example.com/v1',
      kind: 'Gizmo',
      metadata: { name: 'g1', labels: { app: 'g' } },
      spec: { size: 1 },
    });
    expect(created.status).toBe(201);
    const res = await http.patch(
      `${path}/g1/status?fieldManager=cr-status`,
      { metadata: metaChanges, spec: { size: 9 }, status: { ready: true } },
      MERGE,
    );
    expect(res.status).toBe(200);
    expect(res.json.metadata.labels).toEqual({ app: 'g' });
    expect(res.json.metadata.annotations).toBeUndefined();
    expect(res.json.metadata.finalizers).toBeUndefined();
    expect(res.json.spec).toEqual({ size: 1 });
    expect(res.json.status).toEqual({ ready: true });
    expect(statusEntry(res.json, 'cr-status').fieldsV1).toEqual({ 'f:status': { '.': {}, 'f:ready': {} } });
  });

  it('VolumeAttachment (ResetObjectMetaForStatus): resets labels, annotations, finalizers and spec', async () => {
    const path = '/apis/storage.k8s.io/v1/volumeattachments';
    const created = await http.post(path, {
      metadata: { name: 'va1', labels: { app: 'va' } },
      spec: { attacher: 'csi.example.com', nodeName: 'node-1', source: { persistentVolumeName: 'pv1' } },
    });
    expect(created.status).toBe(201);
    const res = await http.patch(
      `${path}/va1/status`,
      { metadata: metaChanges, spec: { nodeName: 'node-2' }, status: { attached: true } },
      MERGE,
    );
    expect(res.status).toBe(200);
    expect(res.json.metadata.labels).toEqual({ app: 'va' });
    expect(res.json.metadata.annotations).toBeUndefined();
    expect(res.json.metadata.finalizers).toBeUndefined();
    expect(res.json.spec.nodeName).toBe('node-1');
    expect(res.json.status.attached).toBe(true);
  });
});
