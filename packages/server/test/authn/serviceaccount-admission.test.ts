/**
 * The ServiceAccount admission plugin, end to end: what a created pod gets (its service account,
 * the projected API access volume and its mounts), the opt-outs, and the refusals, as kubectl
 * and a raw client see them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  httpClient,
  type Json,
  type KubectlEnv,
  manifest,
  startKubectlEnv,
} from '../../src/testing/index.js';

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
});
afterAll(async () => {
  http?.close();
  await env?.stop();
});

const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

const createPod = (ns: string, pod: Record<string, unknown>) =>
  http.post(`/api/v1/namespaces/${ns}/pods`, { apiVersion: 'v1', kind: 'Pod', ...pod });

describe('ServiceAccount admission', () => {
  it('gives a pod the default service account and the kube-api-access volume in every container', async () => {
    await env.ok(['apply', '-f', '-'], {
      input: manifest({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          initContainers: [{ name: 'init', image: 'busybox' }],
          containers: [
            { name: 'a', image: 'nginx' },
            { name: 'b', image: 'nginx' },
          ],
        },
      }),
    });
    const pod: Json = JSON.parse(await env.ok(['get', 'pod', 'web', '-o', 'json']));
    expect(pod.spec.serviceAccountName).toBe('default');
    expect(pod.spec.serviceAccount).toBe('default');
    const [volume] = pod.spec.volumes;
    expect(volume.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(volume.projected).toEqual({
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
    });
    for (const c of [...pod.spec.initContainers, ...pod.spec.containers])
      expect(c.volumeMounts).toEqual([{ name: volume.name, readOnly: true, mountPath: MOUNT }]);
  });

  it('keeps a container’s own mount at the token path, and an existing kube-api-access volume', async () => {
    const r = await createPod('default', {
      metadata: { name: 'own' },
      spec: {
        containers: [
          { name: 'a', image: 'x', volumeMounts: [{ name: 'mine', mountPath: MOUNT }] },
          { name: 'b', image: 'x' },
        ],
        volumes: [{ name: 'mine', emptyDir: {} }],
      },
    });
    expect(r.status, r.text).toBe(201);
    const [a, b] = r.json.spec.containers;
    expect(a.volumeMounts).toEqual([{ name: 'mine', mountPath: MOUNT }]);
    expect(b.volumeMounts).toHaveLength(1);
    expect(r.json.spec.volumes.map((v: Json) => v.name)).toEqual(['mine', b.volumeMounts[0].name]);

    const reused = await createPod('default', {
      metadata: { name: 'reused' },
      spec: {
        containers: [{ name: 'a', image: 'x' }],
        volumes: [{ name: 'kube-api-access-abcde', emptyDir: {} }],
      },
    });
    expect(reused.status, reused.text).toBe(201);
    expect(reused.json.spec.volumes).toEqual([{ name: 'kube-api-access-abcde', emptyDir: {} }]);
    expect(reused.json.spec.containers[0].volumeMounts[0].name).toBe('kube-api-access-abcde');
  });

  it('automountServiceAccountToken: false on the pod or on its service account: no volume', async () => {
    const optOut = await createPod('default', {
      metadata: { name: 'no-token' },
      spec: { automountServiceAccountToken: false, containers: [{ name: 'a', image: 'x' }] },
    });
    expect(optOut.status, optOut.text).toBe(201);
    expect(optOut.json.spec.volumes).toBeUndefined();
    expect(optOut.json.spec.containers[0].volumeMounts).toBeUndefined();

    await http.post('/api/v1/namespaces/default/serviceaccounts', {
      metadata: { name: 'quiet' },
      automountServiceAccountToken: false,
      imagePullSecrets: [{ name: 'registry' }],
    });
    const quiet = await createPod('default', {
      metadata: { name: 'quiet' },
      spec: { serviceAccountName: 'quiet', containers: [{ name: 'a', image: 'x' }] },
    });
    expect(quiet.status, quiet.text).toBe(201);
    expect(quiet.json.spec.volumes).toBeUndefined();
    // The service account's image pull secrets, since the pod names none.
    expect(quiet.json.spec.imagePullSecrets).toEqual([{ name: 'registry' }]);
    // The pod's choice wins over its service account's.
    const wants = await createPod('default', {
      metadata: { name: 'wants' },
      spec: {
        serviceAccountName: 'quiet',
        automountServiceAccountToken: true,
        containers: [{ name: 'a', image: 'x' }],
      },
    });
    expect(wants.json.spec.volumes).toHaveLength(1);
  });

  it('refuses a pod whose service account does not exist, with kube’s message', async () => {
    const r = await env.run([
      'run',
      'orphan',
      '--image=nginx',
      '--overrides={"spec":{"serviceAccountName":"ghost"}}',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'Error from server (Forbidden): pods "orphan" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found',
    );
    const raw = await createPod('default', {
      metadata: { generateName: 'gen-' },
      spec: { serviceAccountName: 'ghost', containers: [{ name: 'a', image: 'x' }] },
    });
    expect(raw.status).toBe(403);
    expect(raw.json).toMatchObject({
      reason: 'Forbidden',
      message:
        'pods "gen-" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found',
      details: { name: 'gen-', kind: 'pods' },
    });
  });

  it('a pod created right after its namespace finds the default service account', async () => {
    for (let i = 0; i < 5; i++) {
      const ns = `fresh-${i}`;
      expect((await http.post('/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);
      const r = await createPod(ns, {
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'a', image: 'x' }] },
      });
      expect(r.status, r.text).toBe(201);
      expect(r.json.spec.serviceAccountName).toBe('default');
    }
  });

  it('leaves mirror pods alone, and refuses ones that reference a service account', async () => {
    const mirror = await createPod('default', {
      metadata: { name: 'static-web', annotations: { 'kubernetes.io/config.mirror': 'abc' } },
      spec: { nodeName: 'node-1', containers: [{ name: 'a', image: 'x' }] },
    });
    expect(mirror.status, mirror.text).toBe(201);
    expect(mirror.json.spec.serviceAccountName).toBeUndefined();
    expect(mirror.json.spec.volumes).toBeUndefined();
    const withSa = await createPod('default', {
      metadata: { name: 'static-sa', annotations: { 'kubernetes.io/config.mirror': 'abc' } },
      spec: { serviceAccountName: 'default', containers: [{ name: 'a', image: 'x' }] },
    });
    expect(withSa.status).toBe(403);
    expect(withSa.json.message).toBe(
      'pods "static-sa" is forbidden: a mirror pod may not reference service accounts',
    );
  });
});
