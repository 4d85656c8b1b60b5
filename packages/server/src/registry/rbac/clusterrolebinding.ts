/**
 * The registry entry of `ClusterRoleBinding` (rbac.authorization.k8s.io/v1 `clusterrolebindings`): its resource type and
 * validation.
 */
import { rbacKind } from '../shared/define.js';
import type { ResourceType } from '../types.js';
import { bindingBehaviour } from './shared.js';

/** `ClusterRoleBinding` (rbac.authorization.k8s.io/v1 `clusterrolebindings`): how the registry serves, validates and prints it. */
export const clusterRoleBindingKind: ResourceType = rbacKind({
  behaviour: bindingBehaviour(false),
  resource: 'clusterrolebindings',
  kind: 'ClusterRoleBinding',
  namespaced: false,
});
