/**
 * The `system:controller:*` ClusterRoles of kube's `bootstrappolicy/controller_policy.go` — one
 * per kube-controller-manager controller, each bound to the controller's ServiceAccount in
 * kube-system — as 1.32 creates them with its default feature gates (`testdata/controller-roles.yaml`
 * and `controller-role-bindings.yaml`; feature-gated controllers such as DRA's resource-claim
 * controller or the service-CIDRs controller are absent, as they are there).
 */
import {
  clusterBinding,
  clusterRole,
  events,
  type PolicyBinding,
  type PolicyRole,
  type PolicyRule,
  r,
  serviceAccount,
} from './rules.js';

const READ = 'get list watch';
const PREFIX = 'system:controller:';

/** `buildControllerRoles()`: controller name (the ServiceAccount's) and its rules, sorted by name. */
function controllerRules(): [string, PolicyRule[]][] {
  return [
    [
      'attachdetach-controller',
      [
        r('list watch', 'core', 'persistentvolumeclaims persistentvolumes'),
        r(READ, 'core', 'nodes'),
        r('patch update', 'core', 'nodes/status'),
        r('list watch', 'core', 'pods'),
        events(),
        r('create delete get list watch', 'storage.k8s.io', 'volumeattachments'),
        r(READ, 'storage.k8s.io', 'csidrivers'),
        r(READ, 'storage.k8s.io', 'csinodes'),
      ],
    ],
    [
      'certificate-controller',
      [
        r('delete get list watch', 'certificates.k8s.io', 'certificatesigningrequests'),
        r(
          'update',
          'certificates.k8s.io',
          'certificatesigningrequests/approval certificatesigningrequests/status',
        ),
        r('approve', 'certificates.k8s.io', 'signers', 'kubernetes.io/kube-apiserver-client-kubelet'),
        r(
          'sign',
          'certificates.k8s.io',
          'signers',
          'kubernetes.io/kube-apiserver-client kubernetes.io/kube-apiserver-client-kubelet kubernetes.io/kubelet-serving kubernetes.io/legacy-unknown',
        ),
        r('create', 'authorization.k8s.io', 'subjectaccessreviews'),
        events(),
      ],
    ],
    [
      'clusterrole-aggregation-controller',
      [r('escalate get list patch update watch', 'rbac.authorization.k8s.io', 'clusterroles')],
    ],
    [
      'cronjob-controller',
      [
        r('get list update watch', 'batch', 'cronjobs'),
        r('create delete get list patch update watch', 'batch', 'jobs'),
        r('update', 'batch', 'cronjobs/status'),
        r('update', 'batch', 'cronjobs/finalizers'),
        r('delete list watch', 'core', 'pods'),
        events(),
      ],
    ],
    [
      'daemon-set-controller',
      [
        r(READ, 'apps extensions', 'daemonsets'),
        r('update', 'apps extensions', 'daemonsets/status'),
        r('update', 'apps extensions', 'daemonsets/finalizers'),
        r('list watch', 'core', 'nodes'),
        r('create delete list patch watch', 'core', 'pods'),
        r('create', 'core', 'pods/binding'),
        r('create delete get list patch update watch', 'apps', 'controllerrevisions'),
        events(),
      ],
    ],
    [
      'deployment-controller',
      [
        r('get list update watch', 'apps extensions', 'deployments'),
        r('update', 'apps extensions', 'deployments/status'),
        r('update', 'apps extensions', 'deployments/finalizers'),
        r('create delete get list patch update watch', 'apps extensions', 'replicasets'),
        r('get list update watch', 'core', 'pods'),
        events(),
      ],
    ],
    [
      'disruption-controller',
      [
        r(READ, 'apps extensions', 'deployments'),
        r(READ, 'apps extensions', 'replicasets'),
        r(READ, 'core', 'replicationcontrollers'),
        r(READ, 'policy', 'poddisruptionbudgets'),
        r(READ, 'apps', 'statefulsets'),
        r('update', 'policy', 'poddisruptionbudgets/status'),
        r('get', '*', '*/scale'),
        events(),
        // Appended while PodDisruptionConditions is a gate (GA, locked on, in 1.32).
        r('patch update', 'core', 'pods/status'),
      ],
    ],
    [
      'endpoint-controller',
      [
        r(READ, 'core', 'pods services'),
        r('create delete get list update watch', 'core', 'endpoints'),
        r('create', 'core', 'endpoints/restricted'),
        events(),
      ],
    ],
    [
      'endpointslice-controller',
      [
        r(READ, 'core', 'nodes pods services'),
        r('update', 'core', 'services/finalizers'),
        r('create delete get list update watch', 'discovery.k8s.io', 'endpointslices'),
        events(),
      ],
    ],
    [
      'endpointslicemirroring-controller',
      [
        r(READ, 'core', 'endpoints services'),
        r('update', 'core', 'services/finalizers'),
        r('update', 'core', 'endpoints/finalizers'),
        r('create delete get list update watch', 'discovery.k8s.io', 'endpointslices'),
        events(),
      ],
    ],
    [
      'ephemeral-volume-controller',
      [
        r(READ, 'core', 'pods'),
        r('update', 'core', 'pods/finalizers'),
        r('create get list watch', 'core', 'persistentvolumeclaims'),
        events(),
      ],
    ],
    [
      'expand-controller',
      [
        r('get list patch update watch', 'core', 'persistentvolumes'),
        r('patch update', 'core', 'persistentvolumeclaims/status'),
        r(READ, 'core', 'persistentvolumeclaims'),
        events(),
      ],
    ],
    ['generic-garbage-collector', [r('delete get list patch update watch', '*', '*'), events()]],
    [
      'horizontal-pod-autoscaler',
      [
        r(READ, 'autoscaling', 'horizontalpodautoscalers'),
        r('update', 'autoscaling', 'horizontalpodautoscalers/status'),
        r('get update', '*', '*/scale'),
        r('list watch', 'core', 'pods'),
        r('list watch', 'metrics.k8s.io', 'pods'),
        r(READ, 'custom.metrics.k8s.io', '*'),
        r(READ, 'external.metrics.k8s.io', '*'),
        events(),
      ],
    ],
    [
      'job-controller',
      [
        r('get list patch update watch', 'batch', 'jobs'),
        r('update', 'batch', 'jobs/status'),
        r('update', 'batch', 'jobs/finalizers'),
        r('create delete list patch watch', 'core', 'pods'),
        events(),
      ],
    ],
    [
      'legacy-service-account-token-cleaner',
      [
        r('get', 'core', 'configmaps', 'kube-apiserver-legacy-service-account-token-tracking'),
        r('delete patch', 'core', 'secrets'),
      ],
    ],
    [
      'namespace-controller',
      [
        r('delete get list watch', 'core', 'namespaces'),
        r('update', 'core', 'namespaces/finalize namespaces/status'),
        r('delete deletecollection get list watch', '*', '*'),
      ],
    ],
    [
      'node-controller',
      [
        r('delete get list patch update watch', 'core', 'nodes'),
        r('patch update', 'core', 'nodes/status'),
        r('patch update', 'core', 'pods/status'),
        r('delete get list watch', 'core', 'pods'),
        events(),
      ],
    ],
    [
      'persistent-volume-binder',
      [
        r('create delete get list update watch', 'core', 'persistentvolumes'),
        r('update', 'core', 'persistentvolumes/status'),
        r('get list update watch', 'core', 'persistentvolumeclaims'),
        r('update', 'core', 'persistentvolumeclaims/status'),
        r('create delete get list watch', 'core', 'pods'),
        r(READ, 'storage.k8s.io', 'storageclasses'),
        r('list watch', 'core', 'nodes'),
        events(),
        r('watch', 'core', 'events'),
      ],
    ],
    [
      'pod-garbage-collector',
      [r('delete list watch', 'core', 'pods'), r(READ, 'core', 'nodes'), r('patch', 'core', 'pods/status')],
    ],
    ['pv-protection-controller', [r('get list update watch', 'core', 'persistentvolumes'), events()]],
    [
      'pvc-protection-controller',
      [r('get list update watch', 'core', 'persistentvolumeclaims'), r(READ, 'core', 'pods'), events()],
    ],
    [
      'replicaset-controller',
      [
        r('get list update watch', 'apps extensions', 'replicasets'),
        r('update', 'apps extensions', 'replicasets/status'),
        r('update', 'apps extensions', 'replicasets/finalizers'),
        r('create delete list patch watch', 'core', 'pods'),
        events(),
      ],
    ],
    [
      'replication-controller',
      [
        r('get list update watch', 'core', 'replicationcontrollers'),
        r('update', 'core', 'replicationcontrollers/status'),
        r('update', 'core', 'replicationcontrollers/finalizers'),
        r('create delete list patch watch', 'core', 'pods'),
        events(),
      ],
    ],
    [
      'resourcequota-controller',
      [r('list watch', '*', '*'), r('update', 'core', 'resourcequotas/status'), events()],
    ],
    ['root-ca-cert-publisher', [r('create update', 'core', 'configmaps'), events()]],
    ['route-controller', [r('list watch', 'core', 'nodes'), r('patch', 'core', 'nodes/status'), events()]],
    ['service-account-controller', [r('create', 'core', 'serviceaccounts'), events()]],
    [
      'service-controller',
      [
        r(READ, 'core', 'services'),
        r('patch update', 'core', 'services/status'),
        r('list watch', 'core', 'nodes'),
        events(),
      ],
    ],
    [
      'statefulset-controller',
      [
        r('list watch', 'core', 'pods'),
        r(READ, 'apps', 'statefulsets'),
        r('update', 'apps', 'statefulsets/status'),
        r('update', 'apps', 'statefulsets/finalizers'),
        r('create delete get patch update', 'core', 'pods'),
        r('create delete get list patch update watch', 'apps', 'controllerrevisions'),
        r('create get list watch', 'core', 'persistentvolumeclaims'),
        r('delete update', 'core', 'persistentvolumeclaims'),
        r('update', 'core', 'pods/finalizers'),
        events(),
      ],
    ],
    ['ttl-after-finished-controller', [r('delete get list watch', 'batch', 'jobs'), events()]],
    ['ttl-controller', [r('list patch update watch', 'core', 'nodes'), events()]],
    [
      'validatingadmissionpolicy-status-controller',
      [
        r(READ, 'admissionregistration.k8s.io', 'validatingadmissionpolicies'),
        r('get patch update', 'admissionregistration.k8s.io', 'validatingadmissionpolicies/status'),
        events(),
      ],
    ],
  ];
}

/** `ControllerRoles()`. */
export function controllerRoles(): PolicyRole[] {
  return controllerRules().map(([name, rules]) => clusterRole(PREFIX + name, rules));
}

/** `ControllerRoleBindings()`: each role bound to its controller's ServiceAccount in kube-system. */
export function controllerRoleBindings(): PolicyBinding[] {
  return controllerRules().map(([name]) =>
    clusterBinding(PREFIX + name, [serviceAccount('kube-system', name)]),
  );
}
