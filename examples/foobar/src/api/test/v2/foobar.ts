import { defineResource, type Static, Type } from 'kubeloop';
import { FooBarSpecV1, FooBarStatus } from '../v1/foobar.js';

/**
 * FooBar's v2 spec: the target's fields grouped under `target` (its name and type), so that
 * the next ones (a port, credentials) have a place. Every v1 object has exactly one v2 form
 * and back, so the conversion loses nothing (src/webhooks/foobar.ts).
 */
export const FooBarSpecV2 = Type.Object({
  target: Type.Object({
    name: Type.String({ minLength: 1, description: 'What the FooBar registers with the external registry.' }),
    type: Type.Optional(
      Type.String({
        description: 'How the registry serves the target (default http); the registry may refuse one.',
      }),
    ),
  }),
});

const ready = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
} as const;
const age = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' } as const;

/**
 * FooBar (`test.example.com`), seed 000's kind in two versions: v1 (the seed's `{target, type}`)
 * and v2 (`{target: {name, type}}`), both served, stored at v2. The schemas are the kind's whole
 * validation: the API server refuses an object outside them (a FooBar without a target), so a
 * malformed object never reaches the operator's cache (the seed's cache that never synced).
 * The operator works at v2; a v1 object is converted by the conversion webhook.
 */
export const FooBar = defineResource({
  group: 'test.example.com',
  kind: 'FooBar',
  description: 'FooBar registers a target with an external registry, through an internal FooBarTask.',
  versions: {
    v1: {
      spec: FooBarSpecV1,
      status: FooBarStatus,
      printerColumns: [
        { name: 'Target', type: 'string', jsonPath: '.spec.target' },
        { name: 'Type', type: 'string', jsonPath: '.spec.type' },
        ready,
        age,
      ],
    },
    v2: {
      spec: FooBarSpecV2,
      status: FooBarStatus,
      storage: true,
      printerColumns: [
        { name: 'Target', type: 'string', jsonPath: '.spec.target.name' },
        { name: 'Type', type: 'string', jsonPath: '.spec.target.type' },
        ready,
        age,
      ],
    },
  },
});

/** A FooBar at v2, the version the operator reads and the one stored. */
export type FooBar = Static<typeof FooBar>;

/** FooBar at v1, for clients written against the seed's version. */
export const FooBarV1 = FooBar.at('v1');
/** A FooBar at v1. */
export type FooBarV1 = Static<typeof FooBarV1>;

/** The sample `kubeloop generate` writes to config/samples at v2. */
export const fooBarSample: FooBar = {
  apiVersion: 'test.example.com/v2',
  kind: 'FooBar',
  metadata: { name: 'foobar-v2-sample', namespace: 'default' },
  spec: { target: { name: 'api.example.com', type: 'tcp' } },
};
