/**
 * Children labeled at creation: the client a shard's reconcile gets puts the shard label of the
 * parent it reconciles on every object of an owned kind it creates or applies with a controller
 * reference to the controller's primary kind. The child is then in the shard's `owns`
 * informers from its first event (a read of it right after the create is served from the
 * cache), and the sharder has no label to write — kubernetes-controller-sharding labels at
 * creation with a mutating webhook; the SDK can do it in the client.
 */
import type { ResourceApi } from '../../client/api.js';
import type { Client } from '../../client/client.js';
import type { ResourceDescriptor } from '../../client/descriptor.js';
import type { KubeObject } from '../../client/types.js';
import { controllerRefTo } from './sharder.js';

const sameKind = (a: ResourceDescriptor, b: ResourceDescriptor) => a.group === b.group && a.kind === b.kind;

/**
 * `client` with `label=shard` added to the objects of the `owns` kinds that it creates or
 * applies whose controller owner is of the `primary` kind. Objects without such a reference,
 * and every other request, pass unchanged.
 */
export function labelingChildren(
  client: Client,
  primary: ResourceDescriptor,
  owns: readonly ResourceDescriptor[],
  label: string,
  shard: string,
): Client {
  const labeled = <O>(obj: O): O => {
    const o = obj as KubeObject;
    if (!controllerRefTo(o, primary) || o.metadata?.labels?.[label] === shard) return obj;
    return { ...o, metadata: { ...o.metadata, labels: { ...o.metadata?.labels, [label]: shard } } } as O;
  };
  const wrap = <T extends KubeObject>(api: ResourceApi<T>): ResourceApi<T> => {
    if (!owns.some((k) => sameKind(k, api.descriptor))) return api;
    return new Proxy(api, {
      get: (target, prop, receiver) => {
        if (prop === 'create')
          return (obj: T, ...rest: unknown[]) => target.create(labeled(obj), ...(rest as []));
        if (prop === 'apply')
          return (obj: T, ...rest: unknown[]) =>
            (target.apply as (o: T, ...r: unknown[]) => Promise<T>)(labeled(obj), ...rest);
        if (prop === 'inNamespace') return (ns: string) => wrap(target.inNamespace(ns));
        return Reflect.get(target, prop, receiver);
      },
    });
  };
  return new Proxy(client, {
    get: (target, prop, receiver) => {
      if (prop === 'api') return (...args: Parameters<Client['api']>) => wrap(target.api(...args));
      if (prop === 'forObject') return (obj: KubeObject) => wrap(target.forObject(obj));
      // Object-level writes call `this.forObject`, which this proxy answers.
      return Reflect.get(target, prop, receiver);
    },
  });
}
