import { defineResource, type Static, Type } from 'kubeloop';

/**
 * GenericDaemon (`mydomain.com/v1beta1`), seed 003's kind: a daemon — the container `image` — run
 * by a DaemonSet on every node labelled `daemon=<label>`. The schema below is the kind's whole
 * validation: the API server rejects an object outside it (an `image` missing, as the seed's CRD
 * requires), and `kubeloop generate` writes the CRD from it.
 */
export const GenericDaemon = defineResource({
  group: 'mydomain.com',
  version: 'v1beta1',
  kind: 'GenericDaemon',
  description: 'GenericDaemon runs a daemon on the nodes labelled daemon=<label>.',
  spec: Type.Object({
    label: Type.Optional(
      Type.String({
        description:
          'The value of the nodes\' "daemon" label that selects where the daemon runs; empty or absent: every node.',
      }),
    ),
    image: Type.String({ minLength: 1, description: 'The container image of the daemon.' }),
  }),
  status: Type.Object({
    installed: Type.Optional(
      Type.Integer({ description: "How many nodes run the daemon, ready (the DaemonSet's numberReady)." }),
    ),
  }),
  printerColumns: [
    { name: 'Label', type: 'string', jsonPath: '.spec.label' },
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'Installed', type: 'integer', jsonPath: '.status.installed' },
    // Declared columns replace the default ones (Name, Age): Age is asked for again.
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

/** A GenericDaemon object, as read from the API. */
export type GenericDaemon = Static<typeof GenericDaemon>;

/** The example `kubeloop generate` writes to `config/samples` (and `kubeloop dev` applies): the seed's syslog. */
export const genericDaemonSample: GenericDaemon = {
  apiVersion: 'mydomain.com/v1beta1',
  kind: 'GenericDaemon',
  metadata: { name: 'syslog', namespace: 'default' },
  spec: { label: 'logs', image: 'mbessler/syslogdocker' },
};
