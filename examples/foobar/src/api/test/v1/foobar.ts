import { Kube, Type } from 'kubeloop';

/**
 * FooBar's first version (`test.example.com/v1`), seed 000's kind as its CRD declares it: a
 * `target` (required) and a `type`. The version still served for clients written against it;
 * objects are stored at v2 and converted by the operator's conversion webhook
 * (src/webhooks/foobar.ts). The whole resource, both versions, is declared in ../v2/foobar.ts.
 */
export const FooBarSpecV1 = Type.Object({
  target: Type.String({ minLength: 1, description: 'What the FooBar registers with the external registry.' }),
  type: Type.Optional(
    Type.String({
      description:
        "How the registry serves the target (default http). Which types exist is the registry's business, not the schema's: it may refuse one.",
    }),
  ),
});

/** The status of both versions: what the operator observed, and the internal task doing the work. */
export const FooBarStatus = Type.Object({
  observedGeneration: Type.Optional(
    Type.Integer({ description: 'The generation of the spec the operator last reconciled.' }),
  ),
  task: Type.Optional(Type.String({ description: 'The internal FooBarTask that registers the target.' })),
  conditions: Type.Optional(Kube.Conditions({ description: 'Ready: the target is registered as asked.' })),
});

/** The sample `kubeloop generate` writes to config/samples at v1 (the seed's version). */
export const fooBarSampleV1 = {
  apiVersion: 'test.example.com/v1',
  kind: 'FooBar',
  metadata: { name: 'foobar-sample', namespace: 'default' },
  spec: { target: 'web.example.com', type: 'http' },
} as const;
