import type { Json } from './http.js';

/**
 * A one-version (`v1`) namespaced CRD of `group` whose spec and status keep any field: for tests
 * that need some custom kind, not a particular schema. `version` and `names` are merged into the
 * version's entry and the names.
 *
 * @example
 * ```ts
 * const crd = simpleCrd('gadgets', 'Gadget', 'example.com', { subresources: { status: {} } });
 * await establish(httpClient(env), crd);
 * ```
 */
export function simpleCrd(
  plural: string,
  kind: string,
  group = 'example.com',
  version: Record<string, unknown> = {},
  names: Record<string, unknown> = {},
): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, kind, ...names },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
          ...version,
        },
      ],
    },
  };
}
