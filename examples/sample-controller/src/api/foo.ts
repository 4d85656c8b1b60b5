import { defineResource, type Static, Type } from 'kubeloop';

/**
 * A Foo asks for a Deployment named `spec.deploymentName` running `spec.replicas` copies of
 * nginx (kubernetes/sample-controller's kind). The schema is the whole validation: the API
 * server rejects a Foo outside its bounds before the controller ever sees it.
 */
export const Foo = defineResource({
  group: 'samplecontroller.k8s.io',
  version: 'v1alpha1',
  kind: 'Foo',
  // k8s.io groups are reserved to Kubernetes; sample-controller's CRD carries this same notice.
  annotations: {
    'api-approved.kubernetes.io':
      "unapproved, experimental-only; please get an approval from Kubernetes API reviewers if you're trying to develop a CRD in the *.k8s.io or *.kubernetes.io groups",
  },
  description: 'Foo is a specification for a Foo resource: a Deployment of nginx it owns.',
  spec: Type.Object({
    deploymentName: Type.String({ minLength: 1, description: 'Name of the Deployment the Foo owns.' }),
    replicas: Type.Integer({ minimum: 1, maximum: 10, description: 'Pods of the Deployment.' }),
  }),
  status: Type.Object({
    availableReplicas: Type.Optional(
      Type.Integer({ description: 'Available pods of the Deployment, as it reports them.' }),
    ),
  }),
  printerColumns: [
    { name: 'Deployment', type: 'string', jsonPath: '.spec.deploymentName' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' },
  ],
});

/** A Foo object, as read from the API. */
export type Foo = Static<typeof Foo>;
