/**
 * The API Priority and Fairness configuration objects kube-apiserver 1.32 creates at start
 * (k8s.io/apiserver `pkg/apis/flowcontrol/bootstrap/default.go`, v0.32): the mandatory
 * `exempt` and `catch-all` priority levels and flow schemas, and the suggested ones, in that
 * file's order, each with `apf.kubernetes.io/autoupdate-spec: "true"`.
 */

type Obj = Record<string, unknown>;

/** The annotation that lets the server keep a configuration object's spec at its bootstrap value. */
export const AUTO_UPDATE_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';

const ALL = ['*'];

const limited = (shares: number, lendable: number, queuing?: [number, number, number]): Obj => ({
  type: 'Limited',
  limited: {
    nominalConcurrencyShares: shares,
    limitResponse: queuing
      ? { type: 'Queue', queuing: { queues: queuing[0], handSize: queuing[1], queueLengthLimit: queuing[2] } }
      : { type: 'Reject' },
    lendablePercent: lendable,
  },
});

const groups = (...names: string[]) => names.map((name) => ({ kind: 'Group', group: { name } }));
const users = (...names: string[]) => names.map((name) => ({ kind: 'User', user: { name } }));
const kubeSystemServiceAccounts = (...names: string[]) =>
  names.map((name) => ({ kind: 'ServiceAccount', serviceAccount: { name, namespace: 'kube-system' } }));
const resourceRule = (
  verbs: string[],
  apiGroups: string[],
  resources: string[],
  clusterScope: boolean,
): Obj => ({ verbs, apiGroups, resources, ...(clusterScope && { clusterScope }), namespaces: ['*'] });
const everything = {
  resourceRules: [resourceRule(ALL, ALL, ALL, true)],
  nonResourceRules: [{ verbs: ALL, nonResourceURLs: ALL }],
};

/** A bootstrap priority level or flow schema: its name and spec. */
export interface BootstrapObject {
  name: string;
  spec: Obj;
}

const flowSchema = (
  name: string,
  priorityLevel: string,
  matchingPrecedence: number,
  distinguisher: 'ByUser' | 'ByNamespace' | undefined,
  rules: Obj,
): BootstrapObject => ({
  name,
  spec: {
    priorityLevelConfiguration: { name: priorityLevel },
    matchingPrecedence,
    ...(distinguisher && { distinguisherMethod: { type: distinguisher } }),
    rules: [rules],
  },
});

export const MANDATORY_PRIORITY_LEVELS: BootstrapObject[] = [
  { name: 'catch-all', spec: limited(5, 0) },
  { name: 'exempt', spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } } },
];

export const MANDATORY_FLOW_SCHEMAS: BootstrapObject[] = [
  flowSchema('exempt', 'exempt', 1, undefined, { subjects: groups('system:masters'), ...everything }),
  flowSchema('catch-all', 'catch-all', 10000, 'ByUser', {
    subjects: groups('system:unauthenticated', 'system:authenticated'),
    ...everything,
  }),
];

export const SUGGESTED_PRIORITY_LEVELS: BootstrapObject[] = [
  { name: 'system', spec: limited(30, 33, [64, 6, 50]) },
  { name: 'node-high', spec: limited(40, 25, [64, 6, 50]) },
  { name: 'leader-election', spec: limited(10, 0, [16, 4, 50]) },
  { name: 'workload-high', spec: limited(40, 50, [128, 6, 50]) },
  { name: 'workload-low', spec: limited(100, 90, [128, 6, 50]) },
  { name: 'global-default', spec: limited(20, 50, [128, 6, 50]) },
];

const leases = (clusterScope = false) =>
  resourceRule(['get', 'create', 'update'], ['coordination.k8s.io'], ['leases'], clusterScope);

export const SUGGESTED_FLOW_SCHEMAS: BootstrapObject[] = [
  flowSchema('system-nodes', 'system', 500, 'ByUser', { subjects: groups('system:nodes'), ...everything }),
  flowSchema('system-node-high', 'node-high', 400, 'ByUser', {
    subjects: groups('system:nodes'),
    resourceRules: [
      resourceRule(ALL, [''], ['nodes', 'nodes/status'], true),
      resourceRule(ALL, ['coordination.k8s.io'], ['leases'], false),
    ],
  }),
  flowSchema('probes', 'exempt', 2, undefined, {
    subjects: groups('system:unauthenticated', 'system:authenticated'),
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
  }),
  flowSchema('system-leader-election', 'leader-election', 100, 'ByUser', {
    subjects: [
      ...users('system:kube-controller-manager', 'system:kube-scheduler'),
      ...kubeSystemServiceAccounts('*'),
    ],
    resourceRules: [leases()],
  }),
  flowSchema('workload-leader-election', 'leader-election', 200, 'ByUser', {
    subjects: kubeSystemServiceAccounts('*'),
    resourceRules: [
      resourceRule(['get', 'create', 'update'], [''], ['endpoints', 'configmaps'], false),
      leases(),
    ],
  }),
  flowSchema('endpoint-controller', 'workload-high', 150, 'ByUser', {
    subjects: [
      ...users('system:kube-controller-manager'),
      ...kubeSystemServiceAccounts('endpoint-controller', 'endpointslicemirroring-controller'),
    ],
    resourceRules: [resourceRule(['get', 'create', 'update'], [''], ['endpoints'], false)],
  }),
  flowSchema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', {
    subjects: users('system:kube-controller-manager'),
    ...everything,
  }),
  flowSchema('kube-scheduler', 'workload-high', 800, 'ByNamespace', {
    subjects: users('system:kube-scheduler'),
    ...everything,
  }),
  flowSchema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', {
    subjects: kubeSystemServiceAccounts('*'),
    ...everything,
  }),
  flowSchema('service-accounts', 'workload-low', 9000, 'ByUser', {
    subjects: groups('system:serviceaccounts'),
    ...everything,
  }),
  flowSchema('global-default', 'global-default', 9900, 'ByUser', {
    subjects: groups('system:unauthenticated', 'system:authenticated'),
    ...everything,
  }),
];
