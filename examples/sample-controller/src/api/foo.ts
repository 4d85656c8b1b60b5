import { defineResource, type Static, Type } from 'kubeloop';

const status = Type.Object({
  availableReplicas: Type.Optional(
    Type.Integer({ description: 'Available pods of the Deployment, as it reports them.' }),
  ),
});

/**
 * A Foo asks for a Deployment named `spec.deploymentName` running `spec.replicas` copies of
 * nginx (kubernetes/sample-controller's kind). The schema validates each Foo alone; the
 * webhooks (src/webhooks.ts) default `replicas` and refuse a Deployment another Foo owns.
 *
 * Two versions: v1alpha1, the storage version and so the hub of conversions (as kubebuilder's
 * multi-version tutorial makes the stored version the hub), which the controller works with; and
 * v1, which groups the Deployment's fields under `spec.deployment`, converted by the operator's
 * `/convert` (src/conversion.ts).
 */
export const Foo = defineResource({
  group: 'samplecontroller.k8s.io',
  kind: 'Foo',
  // k8s.io groups are reserved to Kubernetes; sample-controller's CRD carries this same notice.
  annotations: {
    'api-approved.kubernetes.io':
      "unapproved, experimental-only; please get an approval from Kubernetes API reviewers if you're trying to develop a CRD in the *.k8s.io or *.kubernetes.io groups",
  },
  versions: {
    v1alpha1: {
      storage: true,
      description: 'Foo is a specification for a Foo resource: a Deployment of nginx it owns.',
      spec: Type.Object({
        deploymentName: Type.String({ minLength: 1, description: 'Name of the Deployment the Foo owns.' }),
        replicas: Type.Integer({ minimum: 1, maximum: 10, description: 'Pods of the Deployment.' }),
      }),
      status,
      printerColumns: [
        { name: 'Deployment', type: 'string', jsonPath: '.spec.deploymentName' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' },
      ],
    },
    v1: {
      description: 'Foo is a specification for a Foo resource: a Deployment of nginx it owns.',
      spec: Type.Object({
        deployment: Type.Object(
          {
            name: Type.String({ minLength: 1, description: 'Name of the Deployment the Foo owns.' }),
            replicas: Type.Integer({ minimum: 1, maximum: 10, description: 'Pods of the Deployment.' }),
          },
          { description: 'The Deployment the Foo owns.' },
        ),
      }),
      status,
      printerColumns: [
        { name: 'Deployment', type: 'string', jsonPath: '.spec.deployment.name' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.deployment.replicas' },
        { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' },
      ],
    },
  },
});

/** A Foo object (v1alpha1, the storage version), as read from the API. */
export type Foo = Static<typeof Foo>;

/** Foo at v1. */
export const FooV1 = Foo.at('v1');
/** A Foo object at v1. */
export type FooV1 = Static<typeof FooV1>;
