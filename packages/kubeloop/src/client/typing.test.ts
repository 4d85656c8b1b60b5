/**
 * Compile-time checks of the typed API (`tsc -p tsconfig.tests.json` type-checks this file;
 * the runtime part only makes sure nothing here is executed against a server).
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { ResourceApi } from './api.js';
import { ConfigMap, Deployment, Namespace, Pod } from './builtin-kinds.js';
import type { Client } from './client.js';
import type { ResourceDescriptor } from './descriptor.js';
import type { KubeObject, MergePatch, ObjectList } from './types.js';
import type { WatchEvent } from './watch.js';

interface Foo extends KubeObject {
  spec?: { replicas?: number };
  status?: { ready?: boolean };
}

describe('typed resource API', () => {
  it('types built-in kinds from kubernetes-types and custom kinds from their descriptor', () => {
    const typecheck = (client: Client) => {
      expectTypeOf(client.api(Pod)).toEqualTypeOf<ResourceApi<Pod>>();
      expectTypeOf(client.api(Deployment, 'x').get('y')).resolves.toEqualTypeOf<Deployment>();
      expectTypeOf(client.api(ConfigMap).list()).resolves.toEqualTypeOf<ObjectList<ConfigMap>>();
      expectTypeOf(client.api(Namespace).watch()).toMatchTypeOf<AsyncIterable<WatchEvent<Namespace>>>();
      const FooKind: ResourceDescriptor<Foo> = { group: 'example.com', version: 'v1', kind: 'Foo' };
      expectTypeOf(client.api(FooKind).get('a')).resolves.toEqualTypeOf<Foo>();
      expectTypeOf(client.api<Foo>({ group: 'example.com', version: 'v1', kind: 'Foo' })).toEqualTypeOf<
        ResourceApi<Foo>
      >();

      const deployments = client.api(Deployment);
      void deployments.patch('web', { spec: { replicas: 3 } });
      void deployments.patch('web', { metadata: { labels: { gone: null } } });
      // @ts-expect-error replicas is a number
      void deployments.patch('web', { spec: { replicas: 'three' } });
      // @ts-expect-error a JSON patch needs type: 'json'
      void deployments.patch('web', [{ op: 'remove', path: '/spec/replicas' }]);
      void deployments.patch('web', [{ op: 'remove', path: '/spec/replicas' }], { type: 'json' });
      // @ts-expect-error apply needs a fieldManager
      void deployments.apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } }, {});
      void client.patchStatus({} as Foo, { ready: true });
      // @ts-expect-error status.ready is a boolean
      void client.patchStatus({} as Foo, { ready: 'yes' });
      expectTypeOf<MergePatch<Foo>>().toMatchTypeOf<{ spec?: { replicas?: number | null } | null }>();
    };
    expectTypeOf(typecheck).toBeFunction();
  });
});
