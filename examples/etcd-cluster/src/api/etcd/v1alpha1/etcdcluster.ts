import { defineResource, type Static, Type } from 'kubeloop';

/** A condition of the cluster (`metav1.Condition`'s shape). */
const Condition = Type.Object({
  type: Type.String(),
  status: Type.String({ enum: ['True', 'False', 'Unknown'] }),
  reason: Type.String(),
  message: Type.String(),
  lastTransitionTime: Type.String({ format: 'date-time' }),
  observedGeneration: Type.Optional(Type.Integer()),
});

/** A member of the etcd cluster, as the member API lists it and the operator records it. */
const Member = Type.Object({
  name: Type.String({ description: 'The member (and its pod): <cluster>-<ordinal>.' }),
  id: Type.String({ description: 'The member ID the member API gave it.' }),
  podUID: Type.Optional(
    Type.String({
      description:
        'The UID of the pod the member ran in when last seen ready; a pod of the same name with another UID lost its data, so the member is replaced.',
    }),
  ),
});

/**
 * EtcdCluster (`etcd.cloud.io/v1alpha1`): an etcd cluster of `spec.size` members, run by a
 * StatefulSet. The operator changes the membership one member at a time and records it in
 * `status.members`. The schema below is the kind's whole validation: the API server rejects an
 * object outside it, and `kubeloop generate` writes the CRD from it.
 */
export const EtcdCluster = defineResource({
  group: 'etcd.cloud.io',
  version: 'v1alpha1',
  kind: 'EtcdCluster',
  description: 'EtcdCluster is an etcd cluster run by a StatefulSet, its membership managed by the operator.',
  spec: Type.Object({
    size: Type.Integer({
      minimum: 1,
      maximum: 9,
      default: 3,
      description: 'The number of members. An odd number keeps a majority through the loss of (size-1)/2.',
    }),
    version: Type.String({
      default: '3.5.17',
      description: 'The etcd version (the image tag) of the members.',
    }),
  }),
  status: Type.Object({
    phase: Type.Optional(
      Type.Union([
        Type.Literal('Creating'),
        Type.Literal('Scaling'),
        Type.Literal('Recovering'),
        Type.Literal('Running'),
      ]),
    ),
    size: Type.Optional(Type.Integer({ description: 'The number of members of the cluster now.' })),
    readyMembers: Type.Optional(Type.Integer({ description: 'The members whose pod is ready.' })),
    selector: Type.Optional(
      Type.String({ description: 'The label selector of the pods (for the scale subresource).' }),
    ),
    members: Type.Optional(Type.Array(Member)),
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'The generation of the spec the controller last reconciled.' }),
    ),
    conditions: Type.Optional(Type.Array(Condition)),
  }),
  scale: {
    specReplicasPath: '.spec.size',
    statusReplicasPath: '.status.size',
    labelSelectorPath: '.status.selector',
  },
  printerColumns: [
    { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
    { name: 'Members', type: 'integer', jsonPath: '.status.size' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyMembers' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  ],
});

/** An EtcdCluster object, as read from the API. */
export type EtcdCluster = Static<typeof EtcdCluster>;

/** A member as `status.members` records it. */
export type MemberStatus = NonNullable<NonNullable<EtcdCluster['status']>['members']>[number];

/** The example `kubeloop generate` writes to `config/samples` (and `kubeloop dev` applies). */
export const etcdClusterSample: EtcdCluster = {
  apiVersion: 'etcd.cloud.io/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'example', namespace: 'default' },
  spec: { size: 3, version: '3.5.17' },
};
