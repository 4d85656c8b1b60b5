/**
 * kubectl's typed generators (`create namespace|configmap|secret|deployment|service`, `run`):
 * unlike `create -f`, these send the object as protobuf (`application/vnd.kubernetes.protobuf`),
 * so they check the server's protobuf decoding end to end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { inCidr } from './support.js';

const NS = 'typed';

let env: KubectlEnv;
const getJson = async (target: string, namespace = NS) =>
  JSON.parse(await env.ok(['get', target, '-n', namespace, '-o', 'json']));

beforeAll(async () => {
  env = await startKubectlEnv();
});
afterAll(async () => {
  await env?.stop();
});

describe('kubectl create <kind> (protobuf requests)', () => {
  it('create namespace', async () => {
    const r = await env.run(['create', 'namespace', NS, '-v=8']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`namespace/${NS} created\n`);
    expect(r.stderr).toContain('Content-Type: application/vnd.kubernetes.protobuf');

    const ns = JSON.parse(await env.ok(['get', 'namespace', NS, '-o', 'json']));
    expect(ns.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(ns.status).toEqual({ phase: 'Active' });
    expect(ns.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': NS });
  });

  it('create configmap --from-literal', async () => {
    expect(
      await env.ok([
        'create',
        'configmap',
        'lit',
        '-n',
        NS,
        '--from-literal=a=1',
        '--from-literal=greeting=hello world',
      ]),
    ).toBe('configmap/lit created\n');
    const cm = await getJson('configmap/lit');
    expect(cm.data).toEqual({ a: '1', greeting: 'hello world' });
    expect(cm.metadata.uid).toBeTruthy();
  });

  it('create secret generic --from-literal', async () => {
    expect(
      await env.ok(['create', 'secret', 'generic', 'creds', '-n', NS, '--from-literal=password=s3cr3t']),
    ).toBe('secret/creds created\n');
    const secret = await getJson('secret/creds');
    expect(secret.type).toBe('Opaque');
    expect(Buffer.from(secret.data.password, 'base64').toString()).toBe('s3cr3t');
  });

  it('create deployment, with the server defaults', async () => {
    expect(
      await env.ok([
        'create',
        'deployment',
        'web',
        '-n',
        NS,
        '--image=nginx:1.27',
        '--replicas=3',
        '--port=80',
      ]),
    ).toBe('deployment.apps/web created\n');
    const dep = await getJson('deploy/web');
    expect(dep.metadata.labels).toEqual({ app: 'web' });
    expect(dep.metadata.generation).toBe(1);
    expect(dep.spec.replicas).toBe(3);
    expect(dep.spec.selector).toEqual({ matchLabels: { app: 'web' } });
    expect(dep.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
    });
    expect(dep.spec.template.spec.containers).toEqual([
      {
        name: 'nginx',
        image: 'nginx:1.27',
        ports: [{ containerPort: 80, protocol: 'TCP' }],
        resources: {},
        imagePullPolicy: 'IfNotPresent',
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
      },
    ]);
  });

  it('create service clusterip allocates an address from the service range', async () => {
    expect(await env.ok(['create', 'service', 'clusterip', 'web', '-n', NS, '--tcp=80:8080'])).toBe(
      'service/web created\n',
    );
    const svc = await getJson('service/web');
    expect(inCidr(svc.spec.clusterIP, '10.96.0.0/12')).toBe(true);
    expect(svc.spec.ports).toEqual([{ name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 }]);
    expect(svc.spec.selector).toEqual({ app: 'web' });
  });

  it('run creates a pending pod', async () => {
    expect(
      await env.ok([
        'run',
        'one',
        '-n',
        NS,
        '--image=busybox:1.36',
        '--labels=app=one',
        '--',
        'sleep',
        '3600',
      ]),
    ).toBe('pod/one created\n');
    const pod = await getJson('pod/one');
    expect(pod.status.phase).toBe('Pending');
    expect(pod.spec.containers[0]).toMatchObject({
      name: 'one',
      image: 'busybox:1.36',
      args: ['sleep', '3600'],
    });
    expect(pod.spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
    });
  });

  it('reports AlreadyExists and invalid names as kubectl prints them', async () => {
    const exists = await env.run(['create', 'namespace', NS]);
    expect(exists).toMatchObject({
      code: 1,
      stderr: `Error from server (AlreadyExists): namespaces "${NS}" already exists\n`,
    });
    const invalid = await env.run(['create', 'configmap', 'Bad_Name', '-n', NS]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toBe(
      "error: failed to create configmap: ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n",
    );
  });
});
