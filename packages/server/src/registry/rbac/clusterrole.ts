/**
 * The registry entry of `ClusterRole` (rbac.authorization.k8s.io/v1 `clusterroles`): its resource type and
 * validation.
 */
import type { KindBehaviour } from '../shared/behaviour.js';
import { createdAtBehaviour } from '../shared/default.js';
import { rbacKind } from '../shared/define.js';
import {
  invalid,
  isObj,
  labelSelectorAsSelector,
  objs,
  required,
  validateLabelSelector,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { roleEscalationCheck } from './escalation.js';
import { validateRules } from './shared.js';

const clusterroles: KindBehaviour = {
  ...createdAtBehaviour(),
  storage: { confirmWrite: roleEscalationCheck('clusterroles') },
  validate(obj) {
    const out = validateRules(obj, false);
    const rule = obj.aggregationRule;
    if (isObj(rule)) {
      const selectors = objs(rule.clusterRoleSelectors);
      if (selectors.length === 0) {
        out.push(
          required(
            'aggregationRule.clusterRoleSelectors',
            'at least one clusterRoleSelector required if aggregationRule is non-nil',
          ),
        );
      }
      selectors.forEach((s, i) => {
        const p = `aggregationRule.clusterRoleSelectors[${i}]`;
        out.push(...validateLabelSelector(s, p));
        if (!labelSelectorAsSelector(s)) out.push(invalid(p, null, 'invalid label selector.'));
      });
    }
    return out;
  },
};

/** `ClusterRole` (rbac.authorization.k8s.io/v1 `clusterroles`): how the registry serves, validates and prints it. */
export const clusterRoleKind: ResourceType = rbacKind({
  behaviour: clusterroles,
  resource: 'clusterroles',
  kind: 'ClusterRole',
  namespaced: false,
});
