/**
 * The registry entry of `RoleBinding` (rbac.authorization.k8s.io/v1 `rolebindings`): its resource type and
 * validation.
 */
import { rbacKind } from '../shared/define.js';
import type { ResourceType } from '../types.js';
import { bindingBehaviour } from './shared.js';

/** `RoleBinding` (rbac.authorization.k8s.io/v1 `rolebindings`): how the registry serves, validates and prints it. */
export const roleBindingKind: ResourceType = rbacKind({
  behaviour: bindingBehaviour(true),
  resource: 'rolebindings',
  kind: 'RoleBinding',
});
