/**
 * The registry entry of `Role` (rbac.authorization.k8s.io/v1 `roles`): its resource type and
 * validation.
 */
import type { KindBehaviour } from '../shared/behaviour.js';
import { createdAtBehaviour } from '../shared/default.js';
import { rbacKind } from '../shared/define.js';
import type { ResourceType } from '../types.js';
import { roleEscalationCheck } from './escalation.js';
import { validateRules } from './shared.js';

const roles: KindBehaviour = {
  ...createdAtBehaviour(),
  validate: (obj) => validateRules(obj, true),
  storage: { confirmWrite: roleEscalationCheck('roles') },
};

/** `Role` (rbac.authorization.k8s.io/v1 `roles`): how the registry serves, validates and prints it. */
export const roleKind: ResourceType = rbacKind({ behaviour: roles, resource: 'roles', kind: 'Role' });
