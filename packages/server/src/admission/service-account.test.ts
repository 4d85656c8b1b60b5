import { describe, expect, it } from 'vitest';
import type { ResourceType } from '../registry/types.js';
import { objectKey, Store } from '../storage/store.js';
import type { Obj } from '../util/object.js';
import { serviceAccountAdmission } from './service-account.js';

const pods = { group: '', resource: 'pods' } as ResourceType;
const pod = (): Obj => ({
  metadata: { name: 'p', namespace: 'fresh' },
  spec: { containers: [{ name: 'a' }] },
});
const saKey = (name: string) => objectKey('', 'serviceaccounts', 'fresh', name);

describe('the ServiceAccount admission plugin', () => {
  it('waits for a namespace’s default service account, as kube’s plugin retries its lookup', async () => {
    const store = Store.open();
    const admit = serviceAccountAdmission(store);
    const obj = pod();
    let settled = false;
    const admitted = Promise.resolve(admit('CREATE', pods, obj)).then(() => {
      settled = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    // The service account controller creates it a moment after the namespace.
    await store.create(saKey('default'), {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default', namespace: 'fresh', uid: 'u' },
    });
    await admitted;
    expect((obj.spec as Obj).serviceAccountName).toBe('default');
    expect((obj.spec as Obj).volumes).toHaveLength(1);
  });

  it('does not wait for a service account other than default', async () => {
    const obj = pod();
    (obj.spec as Obj).serviceAccountName = 'builder';
    await expect(serviceAccountAdmission(Store.open())('CREATE', pods, obj)).rejects.toMatchObject({
      code: 403,
      message:
        'pods "p" is forbidden: error looking up service account fresh/builder: serviceaccount "builder" not found',
    });
  });

  it('passes other kinds and operations synchronously', () => {
    const admit = serviceAccountAdmission(Store.open());
    expect(admit('UPDATE', pods, pod())).toBeUndefined();
    expect(admit('CREATE', { group: '', resource: 'configmaps' } as ResourceType, {})).toBeUndefined();
  });
});
