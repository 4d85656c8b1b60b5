/**
 * The bundled definitions describe Kubernetes 1.32, not the 1.27 spec they started from: fields
 * added since are accepted under kubectl's default strict field validation, fields a 1.32 server
 * does not know are still rejected, `$ref` fields carry their own descriptions (what
 * `kubectl explain` prints), and the patch metadata of the new list fields is the Go struct tags'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { patchMetaForDefinition } from '../patch/patch-meta.js';
import { type KubectlEnv, startKubectlEnv } from '../testing/index.js';
import { builtinSpec } from './builtin.js';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv();
});

afterAll(async () => {
  await env?.stop();
});

const job = (name: string, spec: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } },
      ...spec,
    },
  });

describe('fields added in Kubernetes 1.28–1.32 pass strict field validation', () => {
  it('creates a Job with podReplacementPolicy, backoffLimitPerIndex, maxFailedIndexes and successPolicy', async () => {
    const out = await env.ok(['create', '-f', '-'], {
      input: job('indexed', {
        completionMode: 'Indexed',
        completions: 3,
        podReplacementPolicy: 'Failed',
        backoffLimitPerIndex: 1,
        maxFailedIndexes: 1,
        successPolicy: { rules: [{ succeededIndexes: '0-1', succeededCount: 2 }] },
      }),
    });
    expect(out).toContain('job.batch/indexed created');
    const stored = JSON.parse(await env.ok(['get', 'job', 'indexed', '-o', 'json']));
    expect(stored.spec.podReplacementPolicy).toBe('Failed');
    expect(stored.spec.backoffLimitPerIndex).toBe(1);
    expect(stored.spec.maxFailedIndexes).toBe(1);
    expect(stored.spec.successPolicy).toEqual({ rules: [{ succeededIndexes: '0-1', succeededCount: 2 }] });
  });

  it('round-trips a defaulted Job through `get -o yaml | replace -f -`', async () => {
    await env.ok(['create', '-f', '-'], { input: job('roundtrip', {}) });
    const yaml = await env.ok(['get', 'job', 'roundtrip', '-o', 'yaml']);
    const replaced = await env.run(['replace', '-f', '-'], { input: yaml });
    expect(replaced.stderr).toBe('');
    expect(replaced.stdout).toContain('job.batch/roundtrip replaced');
  });

  it('creates a Pod whose init container is a sidecar (restartPolicy: Always)', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'with-sidecar', namespace: 'default' },
      spec: {
        initContainers: [{ name: 'proxy', image: 'envoy', restartPolicy: 'Always' }],
        containers: [{ name: 'app', image: 'busybox' }],
      },
    };
    const out = await env.ok(['create', '-f', '-'], { input: JSON.stringify(pod) });
    expect(out).toContain('pod/with-sidecar created');
    const stored = JSON.parse(await env.ok(['get', 'pod', 'with-sidecar', '-o', 'json']));
    expect(stored.spec.initContainers[0].restartPolicy).toBe('Always');
  });

  it('creates a PVC with volumeAttributesClassName and a Service with trafficDistribution', async () => {
    const pvc = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'default' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        volumeAttributesClassName: 'gold',
        resources: { requests: { storage: '1Gi' } },
      },
    };
    expect(await env.ok(['create', '-f', '-'], { input: JSON.stringify(pvc) })).toContain(
      'persistentvolumeclaim/data created',
    );
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'near', namespace: 'default' },
      spec: { ports: [{ port: 80 }], selector: { app: 'x' }, trafficDistribution: 'PreferClose' },
    };
    expect(await env.ok(['create', '-f', '-'], { input: JSON.stringify(svc) })).toContain(
      'service/near created',
    );
  });

  it('still rejects fields a 1.32 server does not have: removed ones and later ones', async () => {
    // PodResourceClaim.source was replaced in 1.31; PodSpec.hostnameOverride arrived in 1.34.
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'too-new', namespace: 'default' },
      spec: {
        hostnameOverride: 'x',
        resourceClaims: [{ name: 'gpu', source: { resourceClaimName: 'gpu' } }],
        containers: [{ name: 'app', image: 'busybox' }],
      },
    };
    const r = await env.run(['create', '-f', '-'], { input: JSON.stringify(pod) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('unknown field "spec.hostnameOverride"');
    expect(r.stderr).toContain('unknown field "spec.resourceClaims[0].source"');
  });
});

describe('kubectl explain', () => {
  it('shows the description of a $ref field itself, not of the type it refers to', async () => {
    const out = await env.ok(['explain', 'deployment.metadata']);
    expect(out).toContain("Standard object's metadata.");
    expect(out).toContain('FIELDS:');
  });

  it('explains a field added since 1.27', async () => {
    const out = await env.ok(['explain', 'job.spec.podReplacementPolicy']);
    expect(out).toContain('FIELD: podReplacementPolicy <string>');
    expect(out).toContain('podReplacementPolicy specifies when to create replacement Pods.');
  });
});

describe('bundled definitions', () => {
  const schemas = builtinSpec().schemas;
  const property = (definition: string, name: string) =>
    (schemas.get(definition)?.properties as Record<string, Record<string, unknown>> | undefined)?.[name];

  it('say where they come from', () => {
    expect(builtinSpec().source).toMatch(/^Kubernetes v1\.32\.0: .*@kubernetes\/client-node 1\.1\.3/);
  });

  it('type new fields as the Go types do and create their new definitions', () => {
    expect(property('io.k8s.api.batch.v1.JobSpec', 'backoffLimitPerIndex')).toMatchObject({
      type: 'integer',
      format: 'int32',
    });
    expect(property('io.k8s.api.core.v1.LinuxContainerUser', 'uid')).toMatchObject({
      type: 'integer',
      format: 'int64',
    });
    expect(property('io.k8s.api.core.v1.PersistentVolumeClaimSpec', 'resources')).toMatchObject({
      allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.VolumeResourceRequirements' }],
    });
    expect(schemas.get('io.k8s.api.batch.v1.SuccessPolicy')).toMatchObject({
      required: ['rules'],
      type: 'object',
    });
    expect(schemas.has('io.k8s.api.core.v1.ClaimSource')).toBe(false);
  });

  it('carry the struct tags of new list fields and of $ref fields', () => {
    const pod = patchMetaForDefinition('io.k8s.api.core.v1.Pod');
    const hostIPs = pod?.field('status')?.field('hostIPs');
    expect([hostIPs?.strategy, hostIPs?.mergeKey, hostIPs?.listType]).toEqual(['merge', 'ip', 'atomic']);
    const claims = pod?.field('status')?.field('resourceClaimStatuses');
    expect([claims?.strategy, claims?.mergeKey, claims?.listMapKeys]).toEqual([
      'merge,retainKeys',
      'name',
      ['name'],
    ]);
    const mounts = pod?.field('status')?.field('containerStatuses')?.items()?.field('volumeMounts');
    expect([mounts?.strategy, mounts?.mergeKey]).toEqual(['merge', 'mountPath']);
    expect(property('io.k8s.api.apps.v1.DeploymentSpec', 'strategy')?.['x-kubernetes-patch-strategy']).toBe(
      'retainKeys',
    );
  });
});
