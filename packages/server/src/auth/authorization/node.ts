/**
 * The Node authorizer (plugin/pkg/auth/authorizer/node), the `Node` of kube-apiserver's
 * `--authorization-mode=Node,RBAC`: a kubelet — a user `system:node:<name>` in `system:nodes` —
 * may do what kube's compiled-in node rules (`bootstrappolicy.NodeRules`) allow, since the
 * bootstrap policy binds the `system:node` ClusterRole to no one. Everyone else is left to RBAC.
 *
 * kube also limits a node, through its graph of pods, to the secrets, configmaps, volumes,
 * service account tokens, lease and CSINode of its own pods and itself; that graph is not kept
 * here: a node gets those objects one by one (`get`), whichever pod they belong to, which lets
 * the simulated kubelet serve every simulated node under one node's name.
 */
import { type PolicyRule, ruleAllows } from './rbac/rules.js';
import type { AuthorizationAttributes, AuthorizationDecision } from './types.js';

const READ = ['get', 'list', 'watch'];
const rule = (verbs: string[], group: string, resources: string[]): PolicyRule => ({
  verbs,
  apiGroups: [group],
  resources,
});

/** `bootstrappolicy.NodeRules()` of 1.32 (default feature gates). */
const NODE_RULES: PolicyRule[] = [
  rule(['create'], 'authentication.k8s.io', ['tokenreviews']),
  rule(['create'], 'authorization.k8s.io', ['subjectaccessreviews', 'localsubjectaccessreviews']),
  rule(READ, '', ['services']),
  rule(['create', 'get', 'list', 'watch'], '', ['nodes']),
  rule(['update', 'patch'], '', ['nodes/status']),
  rule(['update', 'patch'], '', ['nodes']),
  rule(['create', 'update', 'patch'], '', ['events']),
  rule(READ, '', ['pods']),
  rule(['create', 'delete'], '', ['pods']),
  rule(['update', 'patch'], '', ['pods/status']),
  rule(['create'], '', ['pods/eviction']),
  rule(READ, '', ['secrets', 'configmaps']),
  rule(['get'], '', ['persistentvolumeclaims', 'persistentvolumes']),
  rule(['get'], '', ['endpoints']),
  rule(['create', 'get', 'list', 'watch'], 'certificates.k8s.io', ['certificatesigningrequests']),
  rule(['get', 'create', 'update', 'patch', 'delete'], 'coordination.k8s.io', ['leases']),
  rule(['get'], 'storage.k8s.io', ['volumeattachments']),
  rule(['create'], '', ['serviceaccounts/token']),
  rule(['get', 'update', 'patch'], '', ['persistentvolumeclaims/status']),
  rule(['get', 'watch', 'list'], 'storage.k8s.io', ['csidrivers']),
  rule(['get', 'create', 'update', 'patch', 'delete'], 'storage.k8s.io', ['csinodes']),
  rule(READ, 'node.k8s.io', ['runtimeclasses']),
];

/** Resources kube's graph decides for a node: one object at a time. */
const GRAPH_RESOURCES = new Set(['secrets', 'configmaps', 'persistentvolumeclaims', 'persistentvolumes']);

/** `nodeidentifier`: the node a user is the kubelet of, if any. */
function nodeName(a: AuthorizationAttributes): string | undefined {
  if (!a.groups.includes('system:nodes') || !a.user.startsWith('system:node:')) return undefined;
  const name = a.user.slice('system:node:'.length);
  return name || undefined;
}

/** The Node authorizer's decision: allowed, or no opinion (and RBAC decides). */
export function authorizeNode(a: AuthorizationAttributes): AuthorizationDecision | undefined {
  const node = nodeName(a);
  if (node === undefined) return undefined;
  const r = a.resource;
  if (r && GRAPH_RESOURCES.has(r.resource ?? '') && !r.subresource && r.verb !== 'get')
    return { allowed: false, reason: 'can only get individual resources of this type' };
  return NODE_RULES.some((rule) => ruleAllows(a, rule)) ? { allowed: true } : undefined;
}
