/**
 * The RBAC bootstrap policy of a 1.32 kube-apiserver (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy`):
 * every ClusterRole, ClusterRoleBinding, Role and RoleBinding the `rbac/bootstrap-roles`
 * post-start hook keeps in the cluster ({@link bootstrapPolicy}), and {@link reconcileBootstrapPolicy},
 * which does that.
 */
export { clusterRoleBindings, clusterRoles } from './cluster-roles.js';
export { controllerRoleBindings, controllerRoles } from './controller-roles.js';
export { breakdownRule, uncoveredRules } from './covers.js';
export { namespaceRoleBindings, namespaceRoles } from './namespace-policy.js';
export { type BootstrapPolicy, bootstrapPolicy } from './policy.js';
export {
  type ReconcileLog,
  type ReconcileOperation,
  reconcileBootstrapPolicy,
  reconciledBinding,
  reconciledRole,
} from './reconcile.js';
export type { PolicyBinding, PolicyRole, PolicyRule, Subject } from './rules.js';
export { AUTOUPDATE_ANNOTATION, BOOTSTRAPPING_LABEL } from './rules.js';
