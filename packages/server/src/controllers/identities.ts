/**
 * Who each built-in component is to the API server, as in a kubeadm cluster: the controllers of
 * kube-controller-manager act as their own ServiceAccounts in `kube-system`
 * (`--use-service-account-credentials`), bound by the bootstrap policy to their
 * `system:controller:<name>` ClusterRoles, while the manager's shared informers list and watch as
 * `system:kube-controller-manager`; the scheduler is `system:kube-scheduler`, a kubelet
 * `system:node:<name>` in `system:nodes`. A controller that lacks a permission fails as it would
 * in a cluster.
 */

/** A user the API server authenticates a built-in component as. */
export interface Identity {
  readonly username: string;
  readonly groups: readonly string[];
}

/** kube-controller-manager's own user: its shared informers, Events, and the legacy token controller. */
export const CONTROLLER_MANAGER: Identity = {
  username: 'system:kube-controller-manager',
  groups: ['system:authenticated'],
};

/** kube-scheduler's user. */
export const SCHEDULER: Identity = { username: 'system:kube-scheduler', groups: ['system:authenticated'] };

/** The user of the kubelet of `node`. */
export function nodeIdentity(node: string): Identity {
  return { username: `system:node:${node}`, groups: ['system:nodes', 'system:authenticated'] };
}

/**
 * The installer of the cluster's add-ons (metrics-server's APIService, the default StorageClass),
 * in a real cluster an administrator or kind's and minikube's setup, with their rights.
 */
export const ADDON_INSTALLER: Identity = {
  username: 'system:kubeloop:addon-installer',
  groups: ['system:masters', 'system:authenticated'],
};

/** The ServiceAccount `kube-system/<name>` a controller of kube-controller-manager acts as. */
export function controllerServiceAccount(name: string): Identity {
  return {
    username: `system:serviceaccount:kube-system:${name}`,
    groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
  };
}

/**
 * The ServiceAccount of each built-in controller (by its kubeloop controller name), named as
 * kube-controller-manager names them (and the bootstrap policy binds them).
 */
export const CONTROLLER_ACCOUNTS: Readonly<Record<string, string>> = {
  replicaset: 'replicaset-controller',
  replicationcontroller: 'replication-controller',
  deployment: 'deployment-controller',
  daemonset: 'daemon-set-controller',
  statefulset: 'statefulset-controller',
  job: 'job-controller',
  cronjob: 'cronjob-controller',
  disruption: 'disruption-controller',
  resourcequota: 'resourcequota-controller',
  'horizontal-pod-autoscaler': 'horizontal-pod-autoscaler',
  'persistentvolume-binder': 'persistent-volume-binder',
  'persistentvolume-reclaimer': 'persistent-volume-binder',
  'pvc-protection': 'pvc-protection-controller',
  'pv-protection': 'pv-protection-controller',
  csrsigning: 'certificate-controller',
  endpoints: 'endpoint-controller',
  'garbage-collector': 'generic-garbage-collector',
  'clusterrole-aggregation': 'clusterrole-aggregation-controller',
};

/** The ServiceAccount the EndpointSlices of the endpoints controller are written as. */
export const ENDPOINT_SLICE_ACCOUNT = 'endpointslice-controller';
