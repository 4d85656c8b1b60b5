import { defineResource, Kube, type Static, Type } from 'kubeloop';

/**
 * FooBarTask (`test.example.com/v1`): the internal resource seed 000 suggests for a complex
 * user-facing one. The FooBar controller owns one per FooBar and copies the FooBar's wish into
 * it; the FooBarTask controller does the work against the external registry, with its own
 * finalizer and status. Users read FooBars; the task is the operator's bookkeeping, kept apart
 * from what users edit (a `kubectl replace` of a FooBar cannot lose the task's state).
 */
export const FooBarTask = defineResource({
  group: 'test.example.com',
  version: 'v1',
  kind: 'FooBarTask',
  description: 'FooBarTask is the internal work item of a FooBar: one registration in the external registry.',
  spec: Type.Object({
    target: Type.String({ minLength: 1, description: 'The target to register.' }),
    type: Type.String({ minLength: 1, description: 'How the registry serves it.' }),
  }),
  status: Type.Object({
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'The generation of the spec the controller last worked on.' }),
    ),
    conditions: Type.Optional(Kube.Conditions({ description: 'Registered: the registry holds the target.' })),
  }),
  printerColumns: [
    { name: 'Target', type: 'string', jsonPath: '.spec.target' },
    { name: 'Registered', type: 'string', jsonPath: '.status.conditions[?(@.type=="Registered")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

/** A FooBarTask object, as read from the API. */
export type FooBarTask = Static<typeof FooBarTask>;
