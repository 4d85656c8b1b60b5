/**
 * The ClusterRoles and ClusterRoleBindings of kube's `bootstrappolicy/policy.go` as a 1.32
 * kube-apiserver creates them with its default feature gates (the objects of
 * `testdata/cluster-roles.yaml` and `testdata/cluster-role-bindings.yaml`).
 */
import {
  aggregatedRole,
  clusterBinding,
  clusterRole,
  events,
  group,
  type PolicyBinding,
  type PolicyRole,
  r,
  serviceAccount,
  u,
  user,
} from './rules.js';

const READ = 'get list watch';
const WRITE = 'create delete deletecollection patch update';
const READ_WRITE = 'create delete deletecollection get list patch update watch';

const aggregateTo = (target: string) => ({ [`rbac.authorization.k8s.io/aggregate-to-${target}`]: 'true' });

/** The signers a ClusterRole may approve certificate requests for (`system:certificates.k8s.io:*-approver`). */
const approver = (signer: string, roleSuffix: string): PolicyRole =>
  clusterRole(`system:certificates.k8s.io:${roleSuffix}`, [
    r('approve', 'certificates.k8s.io', 'signers', `kubernetes.io/${signer}`),
  ]);

/** `ClusterRoles()`: sorted by name, as the testdata lists them. */
export function clusterRoles(): PolicyRole[] {
  return [
    aggregatedRole('admin', 'admin'),
    clusterRole('cluster-admin', [r('*', '*', '*'), u('*', '*')]),
    aggregatedRole('edit', 'edit', aggregateTo('admin')),
    clusterRole(
      'system:aggregate-to-admin',
      [
        r('create', 'authorization.k8s.io', 'localsubjectaccessreviews'),
        r(READ_WRITE, 'rbac.authorization.k8s.io', 'rolebindings roles'),
      ],
      aggregateTo('admin'),
    ),
    clusterRole(
      'system:aggregate-to-edit',
      [
        r(READ, 'core', 'pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy'),
        r('impersonate', 'core', 'serviceaccounts'),
        r(WRITE, 'core', 'pods pods/attach pods/exec pods/portforward pods/proxy'),
        r('create', 'core', 'pods/eviction'),
        r(
          WRITE,
          'core',
          'configmaps events persistentvolumeclaims replicationcontrollers replicationcontrollers/scale secrets serviceaccounts services services/proxy',
        ),
        r('create', 'core', 'serviceaccounts/token'),
        r(
          WRITE,
          'apps',
          'daemonsets deployments deployments/rollback deployments/scale replicasets replicasets/scale statefulsets statefulsets/scale',
        ),
        r(WRITE, 'autoscaling', 'horizontalpodautoscalers'),
        r(WRITE, 'batch', 'cronjobs jobs'),
        r(
          WRITE,
          'extensions',
          'daemonsets deployments deployments/rollback deployments/scale ingresses networkpolicies replicasets replicasets/scale replicationcontrollers/scale',
        ),
        r(WRITE, 'policy', 'poddisruptionbudgets'),
        r(WRITE, 'networking.k8s.io', 'ingresses networkpolicies'),
        r(READ_WRITE, 'coordination.k8s.io', 'leases'),
      ],
      aggregateTo('edit'),
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        r(
          READ,
          'core',
          'configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status',
        ),
        r(
          READ,
          'core',
          'bindings events limitranges namespaces/status pods/log pods/status replicationcontrollers/status resourcequotas resourcequotas/status',
        ),
        r(READ, 'core', 'namespaces'),
        r(READ, 'discovery.k8s.io', 'endpointslices'),
        r(
          READ,
          'apps',
          'controllerrevisions daemonsets daemonsets/status deployments deployments/scale deployments/status replicasets replicasets/scale replicasets/status statefulsets statefulsets/scale statefulsets/status',
        ),
        r(READ, 'autoscaling', 'horizontalpodautoscalers horizontalpodautoscalers/status'),
        r(READ, 'batch', 'cronjobs cronjobs/status jobs jobs/status'),
        r(
          READ,
          'extensions',
          'daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses ingresses/status networkpolicies replicasets replicasets/scale replicasets/status replicationcontrollers/scale',
        ),
        r(READ, 'policy', 'poddisruptionbudgets poddisruptionbudgets/status'),
        r(READ, 'networking.k8s.io', 'ingresses ingresses/status networkpolicies'),
      ],
      aggregateTo('view'),
    ),
    clusterRole('system:auth-delegator', [
      r('create', 'authentication.k8s.io', 'tokenreviews'),
      r('create', 'authorization.k8s.io', 'subjectaccessreviews'),
    ]),
    clusterRole('system:basic-user', [
      r('create', 'authorization.k8s.io', 'selfsubjectaccessreviews selfsubjectrulesreviews'),
      r('create', 'authentication.k8s.io', 'selfsubjectreviews'),
    ]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:nodeclient', [
      r('create', 'certificates.k8s.io', 'certificatesigningrequests/nodeclient'),
    ]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [
      r('create', 'certificates.k8s.io', 'certificatesigningrequests/selfnodeclient'),
    ]),
    approver('kube-apiserver-client', 'kube-apiserver-client-approver'),
    approver('kube-apiserver-client-kubelet', 'kube-apiserver-client-kubelet-approver'),
    approver('kubelet-serving', 'kubelet-serving-approver'),
    approver('legacy-unknown', 'legacy-unknown-approver'),
    clusterRole('system:discovery', [
      u('get', '/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/'),
    ]),
    clusterRole('system:heapster', [
      r(READ, 'core', 'events namespaces nodes pods'),
      r(READ, 'extensions', 'deployments'),
    ]),
    clusterRole('system:kube-aggregator', [r(READ, 'core', 'endpoints services')]),
    clusterRole('system:kube-controller-manager', [
      events(),
      r('create', 'coordination.k8s.io', 'leases'),
      r('get update', 'coordination.k8s.io', 'leases', 'kube-controller-manager'),
      r('create', 'core', 'secrets serviceaccounts'),
      r('delete', 'core', 'secrets'),
      r('get', 'core', 'configmaps namespaces secrets serviceaccounts'),
      r('update', 'core', 'secrets serviceaccounts'),
      r('create', 'authentication.k8s.io', 'tokenreviews'),
      r('create', 'authorization.k8s.io', 'subjectaccessreviews'),
      r('list watch', '*', '*'),
      r('create', 'core', 'serviceaccounts/token'),
    ]),
    clusterRole('system:kube-dns', [r('list watch', 'core', 'endpoints services')]),
    clusterRole('system:kube-scheduler', [
      events(),
      r('create', 'coordination.k8s.io', 'leases'),
      r('get update', 'coordination.k8s.io', 'leases', 'kube-scheduler'),
      r(READ, 'core', 'nodes'),
      r('delete get list watch', 'core', 'pods'),
      r('create', 'core', 'bindings pods/binding'),
      r('patch update', 'core', 'pods/status'),
      r(READ, 'core', 'replicationcontrollers services'),
      r(READ, 'apps extensions', 'replicasets'),
      r(READ, 'apps', 'statefulsets'),
      r(READ, 'policy', 'poddisruptionbudgets'),
      r(READ, 'core', 'persistentvolumeclaims persistentvolumes'),
      r('create', 'authentication.k8s.io', 'tokenreviews'),
      r('create', 'authorization.k8s.io', 'subjectaccessreviews'),
      r(READ, 'storage.k8s.io', 'csinodes'),
      r(READ, 'core', 'namespaces'),
      r(READ, 'storage.k8s.io', 'csidrivers'),
      r(READ, 'storage.k8s.io', 'csistoragecapacities'),
    ]),
    clusterRole('system:kubelet-api-admin', [
      r(READ, 'core', 'nodes'),
      r('proxy', 'core', 'nodes'),
      r('*', 'core', 'nodes/log nodes/metrics nodes/proxy nodes/stats'),
    ]),
    clusterRole('system:monitoring', [
      u('get', '/healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/*'),
    ]),
    clusterRole('system:node', [
      r('create', 'authentication.k8s.io', 'tokenreviews'),
      r('create', 'authorization.k8s.io', 'localsubjectaccessreviews subjectaccessreviews'),
      r(READ, 'core', 'services'),
      r('create get list watch', 'core', 'nodes'),
      r('patch update', 'core', 'nodes/status'),
      r('patch update', 'core', 'nodes'),
      r('create patch update', 'core', 'events'),
      r(READ, 'core', 'pods'),
      r('create delete', 'core', 'pods'),
      r('patch update', 'core', 'pods/status'),
      r('create', 'core', 'pods/eviction'),
      r(READ, 'core', 'configmaps secrets'),
      r('get', 'core', 'persistentvolumeclaims persistentvolumes'),
      r('get', 'core', 'endpoints'),
      r('create get list watch', 'certificates.k8s.io', 'certificatesigningrequests'),
      r('create delete get patch update', 'coordination.k8s.io', 'leases'),
      r('get', 'storage.k8s.io', 'volumeattachments'),
      r('create', 'core', 'serviceaccounts/token'),
      r('get patch update', 'core', 'persistentvolumeclaims/status'),
      r(READ, 'storage.k8s.io', 'csidrivers'),
      r('create delete get patch update', 'storage.k8s.io', 'csinodes'),
      r(READ, 'node.k8s.io', 'runtimeclasses'),
    ]),
    clusterRole('system:node-bootstrapper', [
      r('create get list watch', 'certificates.k8s.io', 'certificatesigningrequests'),
    ]),
    clusterRole('system:node-problem-detector', [
      r('get', 'core', 'nodes'),
      r('patch', 'core', 'nodes/status'),
      events(),
    ]),
    clusterRole('system:node-proxier', [
      r('list watch', 'core', 'endpoints services'),
      r(READ, 'core', 'nodes'),
      events(),
      r('list watch', 'discovery.k8s.io', 'endpointslices'),
    ]),
    clusterRole('system:persistent-volume-provisioner', [
      r('create delete get list watch', 'core', 'persistentvolumes'),
      r('get list update watch', 'core', 'persistentvolumeclaims'),
      r(READ, 'storage.k8s.io', 'storageclasses'),
      r('watch', 'core', 'events'),
      events(),
    ]),
    clusterRole('system:public-info-viewer', [u('get', '/healthz /livez /readyz /version /version/')]),
    clusterRole('system:service-account-issuer-discovery', [
      u('get', '/.well-known/openid-configuration /openid/v1/jwks'),
    ]),
    clusterRole('system:volume-scheduler', [
      r('get list patch update watch', 'core', 'persistentvolumes'),
      r(READ, 'storage.k8s.io', 'storageclasses'),
      r('get list patch update watch', 'core', 'persistentvolumeclaims'),
    ]),
    aggregatedRole('view', 'view', aggregateTo('edit')),
  ];
}

/** `ClusterRoleBindings()`, sorted by name. */
export function clusterRoleBindings(): PolicyBinding[] {
  return [
    clusterBinding('cluster-admin', [group('system:masters')]),
    clusterBinding('system:basic-user', [group('system:authenticated')]),
    clusterBinding('system:discovery', [group('system:authenticated')]),
    clusterBinding('system:kube-controller-manager', [user('system:kube-controller-manager')]),
    clusterBinding('system:kube-dns', [serviceAccount('kube-system', 'kube-dns')]),
    clusterBinding('system:kube-scheduler', [user('system:kube-scheduler')]),
    clusterBinding('system:monitoring', [group('system:monitoring')]),
    // Kept without subjects since the Node authorizer took over (1.7), so that a tightening
    // reconcile removes the old system:nodes subject.
    clusterBinding('system:node', []),
    clusterBinding('system:node-proxier', [user('system:kube-proxy')]),
    clusterBinding('system:public-info-viewer', [
      group('system:authenticated'),
      group('system:unauthenticated'),
    ]),
    clusterBinding('system:service-account-issuer-discovery', [group('system:serviceaccounts')]),
    clusterBinding('system:volume-scheduler', [user('system:kube-scheduler')]),
  ];
}
