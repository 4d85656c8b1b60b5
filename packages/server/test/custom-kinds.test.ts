import {
  type ApiError,
  isNoKindMatch,
  isNotFound,
  type KubeObject,
  type NoKindMatchError,
  type ResourceDescriptor,
} from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultBehaviour } from '../src/registry/builtin-kinds.js';
import { ALL_VERBS, type ResourceType } from '../src/registry/types.js';
import { type ClientEnv, rejection, startClientEnv } from '../src/testing/index.js';

interface Widget extends KubeObject {
  spec?: { size?: number; color?: string };
  status?: { ready?: boolean; size?: number };
}

/**
 * Serves a custom kind the way an established CRD will (the CRD controller is a later issue):
 * registered straight into the server's registry, so discovery and the REST verbs see it.
 */
function serve(plural: string, kind: string, namespaced: boolean): ResourceType {
  const type: ResourceType = {
    group: 'example.com',
    version: 'v1',
    resource: plural,
    kind,
    listKind: `${kind}List`,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: [plural.slice(0, 2)],
    categories: [],
    verbs: ALL_VERBS,
    subresources: {
      status: true,
      scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' },
    },
    generation: true,
    nameValidation: 'subdomain',
    allowUnconditionalUpdate: false,
    returnDeletedObject: true,
    behaviour: defaultBehaviour,
  };
  t.env.registry.register(type);
  return type;
}

let t: ClientEnv;
beforeAll(async () => {
  t = await startClientEnv();
});
afterAll(() => t.stop());

describe('custom kinds', () => {
  it('discovers plural, scope and verbs of a kind, refreshing when the kind is unknown', async () => {
    const Widget: ResourceDescriptor<Widget> = { group: 'example.com', version: 'v1', kind: 'Widget' };
    // Not served yet: discovery has not heard of it (and the group/version does not exist).
    const before = await rejection<NoKindMatchError>(t.client.api(Widget, 'default').list());
    expect(isNoKindMatch(before)).toBe(true);
    expect(before.message).toBe('no matches for kind "Widget" in version "example.com/v1"');

    // Another kind of the group gets served first: the client caches that group/version...
    serve('sprockets', 'Sprocket', true);
    expect((await t.client.resolve({ group: 'example.com', version: 'v1', kind: 'Sprocket' })).plural).toBe(
      'sprockets',
    );
    // ...and asks again when a kind is missing from the cached answer.
    serve('widgets', 'Widget', true);
    const resolved = await t.client.resolve(Widget);
    expect(resolved).toMatchObject({ plural: 'widgets', namespaced: true });
    expect(resolved.verbs).toEqual(expect.arrayContaining(['create', 'get', 'list', 'watch', 'patch']));
    const discovered = (await t.client.discovery.resources('example.com', 'v1'))?.find(
      (r) => r.kind === 'Widget',
    );
    expect(discovered?.subresources.slice().sort()).toEqual(['scale', 'status']);
    expect(discovered?.shortNames).toEqual(['wi']);

    const widgets = t.client.api(Widget, 'default');
    const w = await widgets.create({ metadata: { name: 'w1' }, spec: { size: 2, color: 'red' } });
    expect(w).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget', spec: { size: 2 } });
    expect((await widgets.patch('w1', { spec: { color: 'blue' } })).spec).toEqual({ size: 2, color: 'blue' });
    // Custom resources have no strategic merge patch.
    const smp = await rejection<ApiError>(widgets.patch('w1', { spec: { size: 3 } }, { type: 'strategic' }));
    expect([smp.code, smp.reason]).toEqual([415, 'UnsupportedMediaType']);
    const status = await widgets.patchStatus('w1', { status: { ready: true } });
    expect(status.status).toEqual({ ready: true });
    const scaled = await widgets.patchScale('w1', { spec: { replicas: 5 } });
    expect(scaled.spec?.replicas).toBe(5);
    expect((await widgets.get('w1')).spec?.size).toBe(5);

    // Object-level calls find the custom kind from apiVersion/kind.
    const viaObject = await t.client.create<Widget>({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w2' },
      spec: { size: 1 },
    });
    expect(viaObject.metadata?.namespace).toBe('default');
  });

  it('uses a complete descriptor without discovery, and forgets a kind that is no longer served', async () => {
    serve('gadgets', 'Gadget', false);
    const Gadget: ResourceDescriptor<Widget> = {
      group: 'example.com',
      version: 'v1',
      kind: 'Gadget',
      plural: 'gadgets',
      namespaced: false,
    };
    const gadgets = t.client.api(Gadget, 'ignored');
    const g = await gadgets.create({ metadata: { name: 'g1' } });
    expect(g.metadata?.namespace).toBeUndefined();

    const discovered = t.client.api<Widget>({ group: 'example.com', version: 'v1', kind: 'Gadget' });
    expect((await discovered.get('g1')).metadata?.name).toBe('g1');

    t.env.registry.unregister('example.com', 'v1', 'gadgets');
    // The next request 404s without an object name: discovery forgets the group/version, and
    // the request after it learns that the kind is gone.
    const first = await rejection<ApiError>(discovered.get('g1'));
    expect(isNotFound(first)).toBe(true);
    expect(first.details?.name).toBeUndefined();
    expect(isNoKindMatch(await rejection(discovered.get('g1')))).toBe(true);
    expect(isNotFound(await rejection(gadgets.get('g1')))).toBe(true);
  });
});
