import { Client, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 1 } });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
});

const volume = (
  name: string,
  size: string,
  policy: 'Retain' | 'Delete' | 'Recycle',
  storageClassName = 'manual',
): PersistentVolume => ({
  metadata: { name, labels: { size } },
  spec: {
    capacity: { storage: size },
    accessModes: ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: policy,
    storageClassName,
    hostPath: { path: `/data/${name}` },
  },
});
const claim = (name: string, size: string, storageClassName?: string): PersistentVolumeClaim => ({
  metadata: { name },
  spec: {
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: size } },
    ...(storageClassName !== undefined && { storageClassName }),
  },
});

describe('persistent volume controller', () => {
  it('starts with a default StorageClass "standard" that claims without a class get', async () => {
    const sc = await eventually(() => client.api(StorageClass).get('standard'));
    expect(sc).toMatchObject({
      provisioner: 'kubeloop.dev/local',
      metadata: { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    });
    expect(await k.ok(['get', 'storageclass'])).toMatch(
      /\nstandard \(default\)\s+kubeloop.dev\/local\s+Delete\s+Immediate\s+false\s+\S+\n/,
    );
    const created = await client.api(PersistentVolumeClaim, 'default').create(claim('defaulted', '1Gi'));
    expect(created.spec?.storageClassName).toBe('standard');
    const explicit = await client.api(PersistentVolumeClaim, 'default').create(claim('none', '1Gi', ''));
    expect(explicit.spec?.storageClassName).toBe('');
  });

  it('binds a claim to the smallest Available volume that fits, and releases and keeps it (Retain) when the claim goes', async () => {
    const pvs = client.api(PersistentVolume);
    await pvs.create(volume('big', '10Gi', 'Retain'));
    await pvs.create(volume('small', '2Gi', 'Retain'));
    await pvs.create(volume('tiny', '500Mi', 'Retain'));
    await eventually(async () => (await pvs.get('tiny')).status?.phase === 'Available');
    const claims = client.api(PersistentVolumeClaim, 'default');
    const c = await claims.create(claim('data', '1Gi', 'manual'));
    const bound = await eventually(async () => {
      const got = await claims.get('data');
      return got.status?.phase === 'Bound' ? got : undefined;
    });
    expect(bound.spec?.volumeName).toBe('small');
    expect(bound.status).toMatchObject({ accessModes: ['ReadWriteOnce'], capacity: { storage: '2Gi' } });
    expect(bound.metadata?.annotations).toMatchObject({
      'pv.kubernetes.io/bind-completed': 'yes',
      'pv.kubernetes.io/bound-by-controller': 'yes',
    });
    const pv = await eventually(async () => {
      const v = await pvs.get('small');
      return v.status?.phase === 'Bound' ? v : undefined;
    });
    expect(pv.spec?.claimRef).toMatchObject({
      kind: 'PersistentVolumeClaim',
      namespace: 'default',
      name: 'data',
      uid: c.metadata?.uid,
    });
    expect(await k.ok(['get', 'pvc', 'data'])).toMatch(/\ndata\s+Bound\s+small\s+2Gi\s+RWO\s+manual\s/);

    await claims.delete('data');
    await eventually(async () => (await pvs.get('small')).status?.phase === 'Released');
    expect((await pvs.get('big')).status?.phase).toBe('Available');
  });

  it('provisions a volume for a claim of the default class, and deletes it with the claim', async () => {
    const claims = client.api(PersistentVolumeClaim, 'default');
    const c = await claims.create(claim('dynamic', '3Gi'));
    const bound = await eventually(async () => {
      const got = await claims.get('dynamic');
      return got.status?.phase === 'Bound' ? got : undefined;
    });
    const pvName = `pvc-${c.metadata?.uid}`;
    expect(bound.spec?.volumeName).toBe(pvName);
    expect(bound.metadata?.annotations?.['volume.kubernetes.io/storage-provisioner']).toBe(
      'kubeloop.dev/local',
    );
    const pv = await eventually(async () => {
      const v = await client.api(PersistentVolume).get(pvName);
      return v.status?.phase === 'Bound' ? v : undefined;
    });
    expect(pv.spec).toMatchObject({
      capacity: { storage: '3Gi' },
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'standard',
    });
    expect(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe('kubeloop.dev/local');
    const events = await k.ok([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=dynamic',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    expect(events).toContain('ProvisioningSucceeded');

    await claims.delete('dynamic');
    await eventually(async () => {
      try {
        await client.api(PersistentVolume).get(pvName);
        return false;
      } catch {
        return true;
      }
    });
  });

  it('waits for the first consumer of a WaitForFirstConsumer class, then provisions on its node', async () => {
    await client.api(StorageClass).create({
      metadata: { name: 'lazy' },
      provisioner: 'kubeloop.dev/local',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    const claims = client.api(PersistentVolumeClaim, 'default');
    await claims.create(claim('later', '1Gi', 'lazy'));
    await eventually(async () =>
      (
        await k.ok([
          'get',
          'events',
          '--field-selector',
          'involvedObject.name=later',
          '-o',
          'jsonpath={.items[*].reason}',
        ])
      ).includes('WaitForFirstConsumer'),
    );
    expect((await claims.get('later')).status?.phase).toBe('Pending');
    await client.api(Pod, 'default').create({
      metadata: { name: 'user' },
      spec: {
        containers: [{ name: 'c', image: 'nginx' }],
        volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'later' } }],
      },
    });
    const bound = await eventually(async () => {
      const got = await claims.get('later');
      return got.status?.phase === 'Bound' ? got : undefined;
    });
    expect(bound.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBeTruthy();
  });
});

describe('storage object in-use protection', () => {
  it('keeps a claim a pod mounts Terminating until the pod is gone', async () => {
    const claims = client.api(PersistentVolumeClaim, 'default');
    const created = await claims.create(claim('guarded', '1Gi'));
    expect(created.metadata?.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    await eventually(async () => (await claims.get('guarded')).status?.phase === 'Bound');
    const volumeName = (await claims.get('guarded')).spec?.volumeName ?? '';
    expect((await client.api(PersistentVolume).get(volumeName)).metadata?.finalizers).toEqual([
      'kubernetes.io/pv-protection',
    ]);
    const pods = client.api(Pod, 'default');
    await pods.create({
      metadata: { name: 'mounter' },
      spec: {
        containers: [{ name: 'c', image: 'nginx', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'guarded' } }],
      },
    });
    await eventually(async () => (await pods.get('mounter')).spec?.nodeName !== undefined);
    await k.ok(['delete', 'pvc', 'guarded', '--wait=false']);
    // In use: it stays, Terminating, with its finalizer (and so does its volume).
    const held = await claims.get('guarded');
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    expect(await k.ok(['get', 'pvc', 'guarded', '--no-headers'])).toMatch(/^guarded\s+Terminating\s/);
    await pods.delete('mounter', { gracePeriodSeconds: 0 });
    await eventually(
      async () => {
        try {
          await claims.get('guarded');
          return false;
        } catch {
          return true;
        }
      },
      10_000,
      'the claim to go once no pod uses it',
    );
    // Its volume (reclaim policy Delete) goes too once it is no longer bound.
    await eventually(
      async () => {
        try {
          await client.api(PersistentVolume).get(volumeName);
          return false;
        } catch {
          return true;
        }
      },
      10_000,
      'the volume to go',
    );
  });
});
