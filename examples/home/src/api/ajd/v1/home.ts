import { defineResource, type Static, Type } from 'kubeloop';

/** A room of a Home. */
export const Room = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 63, description: 'The room, e.g. kitchen.' }),
  floor: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Its floor (the defaulter sets 0, the ground floor).' }),
  ),
  area: Type.Optional(Type.Integer({ minimum: 1, description: 'Its area in square metres.' })),
});

/**
 * Home (`ajd.my.domain/v1`), the kind seed 001 scaffolds with
 * `kubebuilder create api --group ajd --version v1 --kind Home` and gives a defaulter and a
 * validator. The schema holds what a schema can say (types, bounds, required fields); the
 * webhooks (src/webhooks/home.ts) what it cannot: the owner defaulted to the user who creates
 * the Home, rooms unique and within the Home's floors, the owner never changing, a locked Home
 * never deleted.
 */
export const Home = defineResource({
  group: 'ajd.my.domain',
  version: 'v1',
  kind: 'Home',
  description: 'Home is a house of rooms; its operator keeps a ConfigMap listing them.',
  spec: Type.Object({
    owner: Type.Optional(
      Type.String({ description: 'Who owns the Home (default: the user who created it).' }),
    ),
    floors: Type.Optional(
      Type.Integer({ minimum: 1, description: 'How many floors it has (default: as its rooms need).' }),
    ),
    locked: Type.Optional(
      Type.Boolean({ description: 'A locked Home cannot be deleted (unlock it first).' }),
    ),
    rooms: Type.Array(Room, { description: 'Its rooms, each name once.' }),
  }),
  status: Type.Object({
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'The generation of the spec last reconciled.' }),
    ),
    rooms: Type.Optional(Type.Integer({ description: 'How many rooms the Home has.' })),
    area: Type.Optional(Type.Integer({ description: "Its rooms' total area in square metres." })),
    configMap: Type.Optional(Type.String({ description: 'The ConfigMap listing its rooms.' })),
  }),
  printerColumns: [
    { name: 'Owner', type: 'string', jsonPath: '.spec.owner' },
    { name: 'Floors', type: 'integer', jsonPath: '.spec.floors' },
    { name: 'Rooms', type: 'integer', jsonPath: '.status.rooms' },
    { name: 'Area', type: 'integer', jsonPath: '.status.area' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

/** A Home object, as read from the API. */
export type Home = Static<typeof Home>;

/** The example `kubeloop generate` writes to `config/samples` (and `kubeloop dev` applies). */
export const homeSample: Home = {
  apiVersion: 'ajd.my.domain/v1',
  kind: 'Home',
  metadata: { name: 'home-sample', namespace: 'default' },
  spec: {
    rooms: [
      { name: 'kitchen', area: 12 },
      { name: 'living-room', area: 30 },
      { name: 'bedroom', floor: 1, area: 15 },
    ],
  },
};
