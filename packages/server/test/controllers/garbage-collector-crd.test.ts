import { Client, ConfigMap, CustomResourceDefinition, isNotFound, Namespace } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/index.js';
import { startTestEnv } from '../../src/index.js';
import { simpleCrd, withUnreachableV2 } from '../crd/support.js';
import { eventually } from '../kubectl.js';

/**
 * The garbage collector learns kinds from discovery: custom resources defined after it started
 * own dependents, and are forgotten with their CRD.
 */
let cp: ControlPlane;
let client: Client;
beforeAll(async () => {
  cp = await startTestEnv();
  client = new Client(cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await cp.stop();
});

const gone = async (get: () => Promise<unknown>) => {
  try {
    await get();
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
};

describe('garbage collector and custom resources', () => {
  it('collects the dependents of a custom resource of a CRD created after it started', async () => {
    const crd = simpleCrd('sprockets', 'Sprocket', 'gc.example.com');
    await client.api(CustomResourceDefinition).create(crd);
    const Sprocket = {
      group: 'gc.example.com',
      version: 'v1',
      kind: 'Sprocket',
      plural: 'sprockets',
      namespaced: true,
    };
    await client.api(Namespace).create({ metadata: { name: 'gc-crd' } });
    const sprockets = client.api(Sprocket, 'gc-crd');
    const owner = await eventually(
      () =>
        sprockets
          .create({ apiVersion: 'gc.example.com/v1', kind: 'Sprocket', metadata: { name: 'owner' } })
          .catch(() => undefined),
      10_000,
      'the CRD served',
    );
    const cms = client.api(ConfigMap, 'gc-crd');
    const ref = {
      apiVersion: 'gc.example.com/v1',
      kind: 'Sprocket',
      name: 'owner',
      uid: owner.metadata?.uid ?? '',
    };
    await cms.create({ metadata: { name: 'kept', ownerReferences: [ref] } });
    await cms.create({ metadata: { name: 'collected', ownerReferences: [ref] } });
    await sprockets.delete('owner');
    await eventually(() => gone(() => cms.get('collected')), 10_000, 'the dependent collected');
    expect(await gone(() => cms.get('kept'))).toBe(true);

    // Once the CRD is gone its kind is unknown again: a dependent that names it is kept.
    await client.api(CustomResourceDefinition).delete(crd.metadata.name);
    await eventually(
      () => gone(() => client.api(CustomResourceDefinition).get(crd.metadata.name)),
      10_000,
      'the CRD deleted',
    );
    await cms.create({
      metadata: { name: 'unknown-owner', ownerReferences: [{ ...ref, uid: 'no-such-uid' }] },
    });
    const sentinel = await cms.create({ metadata: { name: 'sentinel-owner' } });
    await cms.create({
      metadata: {
        name: 'sentinel',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'sentinel-owner', uid: sentinel.metadata?.uid ?? '' },
        ],
      },
    });
    await cms.delete('sentinel-owner');
    // The collector has handled what came after the unknown-owner dependent.
    await eventually(() => gone(() => cms.get('sentinel')), 10_000, 'the sentinel collected');
    expect((await cms.get('unknown-owner')).metadata?.name).toBe('unknown-owner');
  });

  it("reads an owner at its reference's version, not through the preferred version's conversion webhook", async () => {
    // v2 is preferred but needs a conversion webhook that is not there; the owner is stored at v1.
    const crd = withUnreachableV2(simpleCrd('widgets', 'Widget', 'gc2.example.com'));
    const reads: string[] = [];
    const stop = cp.audit.subscribe(({ user, info }) => {
      if (
        user.username.endsWith(':generic-garbage-collector') &&
        info.resource === 'widgets' &&
        info.verb === 'get'
      )
        reads.push(info.version);
    });
    try {
      await client.api(CustomResourceDefinition).create(crd);
      await client.api(Namespace).create({ metadata: { name: 'gc-versions' } });
      const widgets = client.api(
        { group: 'gc2.example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true },
        'gc-versions',
      );
      const owner = await eventually(
        () =>
          widgets
            .create({ apiVersion: 'gc2.example.com/v1', kind: 'Widget', metadata: { name: 'owner' } })
            .catch(() => undefined),
        10_000,
        'the CRD served',
      );
      const cms = client.api(ConfigMap, 'gc-versions');
      await cms.create({
        metadata: {
          name: 'dependent',
          ownerReferences: [
            {
              apiVersion: 'gc2.example.com/v1',
              kind: 'Widget',
              name: 'owner',
              uid: owner.metadata?.uid ?? '',
            },
          ],
        },
      });
      // Its cache of Widgets (at v2) cannot fill: the collector asks the server whether the owner
      // exists — once its discovery knows the new kind (until then the owner's kind is unknown and
      // the dependent kept), so each check also touches the dependent, which makes it look again.
      let touches = 0;
      await eventually(
        async () => {
          if (reads.length > 0) return true;
          await cms.patch('dependent', { metadata: { labels: { touched: String(++touches) } } });
          await new Promise((r) => setTimeout(r, 200));
          return reads.length > 0;
        },
        30_000,
        'the collector to read the owner',
      );
      expect(new Set(reads)).toEqual(new Set(['v1']));
      expect((await cms.get('dependent')).metadata?.name).toBe('dependent');

      // Found once, the owner is not read again on each update of its dependent (kube's graph
      // builder acts on changed owner references only), though its cache still cannot fill.
      const readsBefore = reads.length;
      for (let i = 0; i < 3; i++)
        await cms.patch('dependent', { metadata: { labels: { again: String(i) } } });
      const anchor = await cms.create({ metadata: { name: 'anchor' } });
      await cms.create({
        metadata: {
          name: 'sentinel',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'anchor', uid: anchor.metadata?.uid ?? '' },
          ],
        },
      });
      await cms.delete('anchor');
      // The collector has handled the ConfigMap events that came before the sentinel's owner went.
      await eventually(() => gone(() => cms.get('sentinel')), 10_000, 'the sentinel collected');
      expect(reads.length).toBe(readsBefore);
    } finally {
      stop();
    }
  });
});
