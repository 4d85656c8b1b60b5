/**
 * The Roles and RoleBindings of kube's `bootstrappolicy/namespace_policy.go` in kube-system and
 * kube-public, as 1.32 creates them (`testdata/namespace-roles.yaml`,
 * `namespace-role-bindings.yaml`).
 */
import {
  events,
  type PolicyBinding,
  type PolicyRole,
  r,
  role,
  roleBinding,
  serviceAccount,
  user,
} from './rules.js';

const LEADER_LOCKING = 'create get list update watch';

/** The Role a component's leader election needs in kube-system (`system::leader-locking-<component>`). */
const leaderLocking = (component: string): PolicyRole =>
  role('kube-system', `system::leader-locking-${component}`, [
    r('watch', 'core', 'configmaps'),
    r('get update', 'core', 'configmaps', component),
    r(LEADER_LOCKING, 'coordination.k8s.io', 'leases'),
    r(LEADER_LOCKING, 'coordination.k8s.io', 'leasecandidates'),
  ]);

/** `NamespaceRoles()`, in the order of the testdata (namespace, then name). */
export function namespaceRoles(): PolicyRole[] {
  return [
    role('kube-public', 'system:controller:bootstrap-signer', [
      r('get list watch', 'core', 'configmaps'),
      r('update', 'core', 'configmaps', 'cluster-info'),
      events(),
    ]),
    role('kube-system', 'extension-apiserver-authentication-reader', [
      r('get list watch', 'core', 'configmaps', 'extension-apiserver-authentication'),
    ]),
    leaderLocking('kube-controller-manager'),
    leaderLocking('kube-scheduler'),
    role('kube-system', 'system:controller:bootstrap-signer', [r('get list watch', 'core', 'secrets')]),
    role('kube-system', 'system:controller:cloud-provider', [
      r('create get list watch', 'core', 'configmaps'),
    ]),
    role('kube-system', 'system:controller:token-cleaner', [
      r('delete get list watch', 'core', 'secrets'),
      events(),
    ]),
  ];
}

/** `NamespaceRoleBindings()`, in the order of the testdata. */
export function namespaceRoleBindings(): PolicyBinding[] {
  const sa = (name: string) => serviceAccount('kube-system', name);
  return [
    roleBinding('kube-public', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [
      sa('bootstrap-signer'),
    ]),
    roleBinding(
      'kube-system',
      'system::extension-apiserver-authentication-reader',
      'extension-apiserver-authentication-reader',
      [user('system:kube-controller-manager'), user('system:kube-scheduler')],
    ),
    roleBinding(
      'kube-system',
      'system::leader-locking-kube-controller-manager',
      'system::leader-locking-kube-controller-manager',
      [
        user('system:kube-controller-manager'),
        sa('kube-controller-manager'),
        sa('leader-election-controller'),
      ],
    ),
    roleBinding(
      'kube-system',
      'system::leader-locking-kube-scheduler',
      'system::leader-locking-kube-scheduler',
      [user('system:kube-scheduler'), sa('kube-scheduler')],
    ),
    roleBinding('kube-system', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [
      sa('bootstrap-signer'),
    ]),
    roleBinding('kube-system', 'system:controller:cloud-provider', 'system:controller:cloud-provider', [
      sa('cloud-provider'),
    ]),
    roleBinding('kube-system', 'system:controller:token-cleaner', 'system:controller:token-cleaner', [
      sa('token-cleaner'),
    ]),
  ];
}
