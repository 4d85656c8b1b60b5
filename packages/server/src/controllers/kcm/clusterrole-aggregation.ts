/**
 * The ClusterRole aggregation controller of kube-controller-manager
 * (`pkg/controller/clusterroleaggregation`): a ClusterRole with an `aggregationRule` holds the
 * union of the rules of the other ClusterRoles its selectors match — each selector's roles taken
 * in name order, a rule already there not repeated — and is kept in step as they change. The
 * rules are written by an update as the field manager `clusterrole-aggregation-controller`: kube's
 * fallback path (it applies them server-side first). An apply would load the server's OpenAPI
 * schemas of every built-in kind at start for this one write, and a bare server's idle memory
 * matters more here than the managedFields entry saying `Apply` rather than `Update`.
 * The API server does none of this: without the controllers, `admin`, `edit` and `view` keep no
 * rules, as under envtest.
 */
import { labelSelectorFromObject, matchesLabels } from 'kubeloop/api';
import { ClusterRole } from 'kubeloop/client';
import { type ControllerDefinition, controller, deepEqual } from 'kubeloop/runtime';

type Rule = NonNullable<ClusterRole['rules']>[number];

/** The field manager of the controller's applies, as kube's. */
export const AGGREGATION_FIELD_MANAGER = 'clusterrole-aggregation-controller';

/**
 * The rules `role` aggregates from `all` ClusterRoles (`syncClusterRole`): per selector, the
 * matching roles other than itself by name, each rule once.
 */
export function aggregatedRules(role: ClusterRole, all: readonly ClusterRole[]): Rule[] {
  const out: Rule[] = [];
  const self = role.metadata?.name;
  for (const s of role.aggregationRule?.clusterRoleSelectors ?? []) {
    const selector = labelSelectorFromObject(s);
    const matching = all
      .filter((r) => r.metadata?.name !== self && matchesLabels(selector, r.metadata?.labels))
      .sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
    for (const r of matching)
      for (const rule of r.rules ?? []) if (!out.some((have) => deepEqual(have, rule))) out.push(rule);
  }
  return out;
}

/** The `clusterrole-aggregation` controller. */
export function clusterRoleAggregationController(): ControllerDefinition<ClusterRole> {
  // The aggregated roles seen so far: any ClusterRole's change may change what they hold
  // (kube's `enqueueAll` on every add, update and delete).
  const aggregated = new Set<string>();
  return controller(ClusterRole)
    .named('clusterrole-aggregation')
    .watches(ClusterRole, () => [...aggregated].map((name) => ({ namespace: '', name })))
    .onGone((req) => {
      aggregated.delete(req.name);
    })
    .reconcile(async (role, { client, cache }) => {
      const name = role.metadata?.name ?? '';
      if (!role.aggregationRule) {
        aggregated.delete(name);
        return;
      }
      aggregated.add(name);
      const rules = aggregatedRules(role, await cache.list(ClusterRole));
      // kube compares semantically: no rules and `rules: null` are the same.
      if (deepEqual(rules, role.rules ?? [])) return;
      // The last contributing role gone, the aggregated role has no rules (kube's serialization
      // of an empty list, stored, reads back as none).
      const next: ClusterRole = { ...role, rules };
      if (rules.length === 0) delete next.rules;
      // A conflict (the role changed since the cache saw it) fails the reconcile, which runs
      // again on the newer version.
      await client.api(ClusterRole).update(next, { fieldManager: AGGREGATION_FIELD_MANAGER });
    });
}
