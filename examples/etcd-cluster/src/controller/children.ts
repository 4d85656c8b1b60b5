/**
 * The Kubernetes objects an EtcdCluster runs on, as etcd-operator lays them out: a StatefulSet
 * (stable member names `<cluster>-<ordinal>`), a headless Service giving each member a stable DNS
 * name for its peers, a client Service, and a PodDisruptionBudget that keeps a majority up.
 */
import type { PodDisruptionBudget, Service, StatefulSet } from 'kubeloop/client';
import { setControllerReference } from 'kubeloop/runtime';
import type { EtcdCluster } from '../api/etcd/v1alpha1/etcdcluster.js';

/** The label carrying the cluster's name on its pods. */
export const CLUSTER_LABEL = 'etcd.cloud.io/cluster';
export const CLIENT_PORT = 2379;
export const PEER_PORT = 2380;

const ref = (c: EtcdCluster) => ({
  name: c.metadata?.name ?? '',
  namespace: c.metadata?.namespace ?? 'default',
});

/** The labels of a cluster's pods (and its Services' selector). */
export const podLabels = (c: EtcdCluster): Record<string, string> => ({
  app: 'etcd',
  [CLUSTER_LABEL]: ref(c).name,
});

/** The majority of `n` members: how many must be up for the cluster to accept writes. */
export const quorum = (n: number): number => Math.floor(n / 2) + 1;

/** The name of member `ordinal` (its pod's, as the StatefulSet names it). */
export const memberName = (c: EtcdCluster, ordinal: number): string => `${ref(c).name}-${ordinal}`;

/** Where member `name` is reached by its peers, through the headless Service. */
export const peerURL = (c: EtcdCluster, name: string): string =>
  `http://${name}.${ref(c).name}.${ref(c).namespace}.svc:${PEER_PORT}`;

/**
 * The headless Service `<cluster>`: the StatefulSet's governing Service, one DNS name per member
 * pod. Not-ready pods are published too: a joining member must reach its peers before it is ready.
 */
export function peerService(c: EtcdCluster): Service {
  return setControllerReference(c, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { ...ref(c), labels: podLabels(c) },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: podLabels(c),
      ports: [
        { name: 'peer', port: PEER_PORT, targetPort: PEER_PORT },
        { name: 'client', port: CLIENT_PORT, targetPort: CLIENT_PORT },
      ],
    },
  });
}

/** The Service `<cluster>-client` that clients of etcd use: ready members only. */
export function clientService(c: EtcdCluster): Service {
  return setControllerReference(c, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `${ref(c).name}-client`, namespace: ref(c).namespace, labels: podLabels(c) },
    spec: { selector: podLabels(c), ports: [{ name: 'client', port: CLIENT_PORT, targetPort: CLIENT_PORT }] },
  });
}

/** The PodDisruptionBudget keeping a majority of the `members` current members running through evictions. */
export function disruptionBudget(c: EtcdCluster, members: number): PodDisruptionBudget {
  return setControllerReference(c, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: ref(c),
    spec: { minAvailable: quorum(members), selector: { matchLabels: podLabels(c) } },
  });
}

/**
 * The StatefulSet of `replicas` members. Its replicas follow the membership (never ahead of it by
 * more than the member being added): the operator, not the StatefulSet, paces the cluster's size.
 * `Parallel` pod management: the operator already orders the members, and a recreated pod must
 * not wait for its lower ordinals.
 */
export function statefulSet(c: EtcdCluster, replicas: number): StatefulSet {
  const { name, namespace } = ref(c);
  return setControllerReference(c, {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace, labels: podLabels(c) },
    spec: {
      replicas,
      serviceName: name,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: podLabels(c) },
      template: {
        metadata: { labels: podLabels(c) },
        spec: {
          containers: [
            {
              name: 'etcd',
              image: `quay.io/coreos/etcd:v${c.spec.version}`,
              command: [
                '/usr/local/bin/etcd',
                '--name=$(POD_NAME)',
                `--listen-peer-urls=http://0.0.0.0:${PEER_PORT}`,
                `--listen-client-urls=http://0.0.0.0:${CLIENT_PORT}`,
                `--initial-advertise-peer-urls=http://$(POD_NAME).${name}.${namespace}.svc:${PEER_PORT}`,
                `--advertise-client-urls=http://$(POD_NAME).${name}.${namespace}.svc:${CLIENT_PORT}`,
              ],
              env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
              ports: [
                { name: 'client', containerPort: CLIENT_PORT },
                { name: 'peer', containerPort: PEER_PORT },
              ],
            },
          ],
        },
      },
    },
  });
}
