/**
 * The registry entry of `Binding` (core/v1 `bindings`): its resource type and
 * validation, its answer (it is not stored).
 */
import { coreKind } from '../shared/define.js';
import type { ResourceType, VirtualResource } from '../types.js';

/**
 * `bindings` (`POST /api/v1/namespaces/<ns>/bindings`): the older form of `pods/<name>/binding`,
 * with the pod named by the Binding's own name. Answers a Success Status.
 */
const bindings: VirtualResource = {
  async create(obj, ctx) {
    const meta = obj.metadata as { name?: unknown } | undefined;
    const pods = { group: '', version: 'v1', resource: 'pods', subresource: 'binding' };
    await ctx.postSubresource(pods, ctx.namespace, String(meta?.name ?? ''), obj);
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  },
};

/** `Binding` (core/v1 `bindings`): how the registry serves, validates and prints it. */
export const bindingKind: ResourceType = coreKind({
  resource: 'bindings',
  kind: 'Binding',
  verbs: ['create'],
  virtual: bindings,
});
