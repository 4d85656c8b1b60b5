/** The whole 1.32 bootstrap policy, grouped as kube-apiserver's `rbacrest.PolicyData`. */
import { clusterRoleBindings, clusterRoles } from './cluster-roles.js';
import { controllerRoleBindings, controllerRoles } from './controller-roles.js';
import { namespaceRoleBindings, namespaceRoles } from './namespace-policy.js';
import type { PolicyBinding, PolicyRole } from './rules.js';

/** The policy's four lists (`storage_rbac.go`'s `BootstrapPolicy`). */
export interface BootstrapPolicy {
  clusterRoles: PolicyRole[];
  clusterRoleBindings: PolicyBinding[];
  roles: PolicyRole[];
  roleBindings: PolicyBinding[];
}

/**
 * The 1.32 bootstrap policy: the ClusterRoles of `policy.go` then the controllers' roles, their
 * bindings likewise, and the namespaced Roles and RoleBindings. Built anew on each call, so that
 * callers may change what they get.
 */
export function bootstrapPolicy(): BootstrapPolicy {
  return {
    clusterRoles: [...clusterRoles(), ...controllerRoles()],
    clusterRoleBindings: [...clusterRoleBindings(), ...controllerRoleBindings()],
    roles: namespaceRoles(),
    roleBindings: namespaceRoleBindings(),
  };
}
