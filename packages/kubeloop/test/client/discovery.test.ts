import { eventually, simpleCrd } from '@kubeloop/server/testing';
import { CustomResourceDefinition, type DiscoveredResource } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientEnv, startClientEnv } from './helpers.js';

let t: ClientEnv;
beforeAll(async () => {
  t = await startClientEnv();
});
afterAll(() => t.stop());

const find = (rs: DiscoveredResource[], group: string, plural: string) =>
  rs.filter((r) => r.group === group && r.plural === plural);

describe('discovery: preferred resources', () => {
  it('lists every resource once, at its group preferred version, without subresources', async () => {
    const { resources, failed } = await t.client.discovery.preferredResources();
    expect(failed.size).toBe(0);
    expect(find(resources, '', 'pods')).toEqual([
      expect.objectContaining({
        version: 'v1',
        kind: 'Pod',
        namespaced: true,
        subresources: expect.arrayContaining(['status']),
      }),
    ]);
    expect(find(resources, 'apps', 'deployments')).toHaveLength(1);
    expect(resources.some((r) => r.plural.includes('/'))).toBe(false);
    // The version is the one /apis names preferred (autoscaling serves v2 and v1).
    const apis = (await t.client.request('GET', '/apis')) as {
      groups: Array<{ name: string; preferredVersion: { version: string } }>;
    };
    const autoscaling = apis.groups.find((g) => g.name === 'autoscaling');
    expect(find(resources, 'autoscaling', 'horizontalpodautoscalers').map((r) => r.version)).toEqual([
      autoscaling?.preferredVersion.version,
    ]);
  });

  it('follows CustomResourceDefinitions as they come and go', async () => {
    const crd = simpleCrd('gadgets', 'Gadget', 'discovery.example.com');
    crd.spec.versions.push({ ...crd.spec.versions[0], name: 'v1beta1', storage: false });
    const crds = t.client.api(CustomResourceDefinition);
    await crds.create(crd);
    await eventually(
      async () =>
        find((await t.client.discovery.preferredResources()).resources, 'discovery.example.com', 'gadgets')
          .length === 1,
      10_000,
      'the CRD discovered',
    );
    const [gadget] = find(
      (await t.client.discovery.preferredResources()).resources,
      'discovery.example.com',
      'gadgets',
    );
    // v1 ranks above v1beta1 (kube-aware version order): the preferred version.
    expect(gadget).toMatchObject({ version: 'v1', kind: 'Gadget', namespaced: true });
    expect(gadget?.verbs).toEqual(expect.arrayContaining(['list', 'watch', 'delete']));
    await crds.delete(crd.metadata.name);
    await eventually(
      async () =>
        find((await t.client.discovery.preferredResources()).resources, 'discovery.example.com', 'gadgets')
          .length === 0,
      10_000,
      'the CRD forgotten',
    );
  });
});
