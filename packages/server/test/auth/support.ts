/**
 * Helpers of the authorization tests: kubeconfigs of other users (client certificates the test
 * control plane's CA signs, or service account tokens), and the few bootstrap roles kubectl needs
 * (discovery, self reviews, public info) for a user who is not `system:masters`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { KubectlEnv } from '../kubectl.js';

/** Writes a kubeconfig for `user` in `groups` (a client certificate) next to the admin's; returns its path. */
export async function userKubeconfig(env: KubectlEnv, user: string, groups: string[] = []): Promise<string> {
  const { cert, key } = await env.cp.issueClientCertificate(user, groups);
  return writeKubeconfig(env, `kubeconfig-${user.replace(/[^a-z0-9]/gi, '_')}`, {
    'client-certificate-data': Buffer.from(cert).toString('base64'),
    'client-key-data': Buffer.from(key).toString('base64'),
  });
}

/** Writes a kubeconfig that authenticates with `token` (a service account's); returns its path. */
export function tokenKubeconfig(env: KubectlEnv, name: string, token: string): string {
  return writeKubeconfig(env, `kubeconfig-${name}`, { token });
}

function writeKubeconfig(env: KubectlEnv, file: string, user: Record<string, string>): string {
  const path = join(env.kubeconfigPath, '..', file);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'c',
        cluster: {
          server: env.cp.url,
          'certificate-authority-data': Buffer.from(env.cp.clientConfig.caData).toString('base64'),
        },
      },
    ],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
  };
  writeFileSync(path, stringify(config), { mode: 0o600 });
  return path;
}

/**
 * kube's bootstrap roles that let every authenticated user discover the API and ask about itself
 * (`system:discovery`, `system:basic-user`), everyone read health and version
 * (`system:public-info-viewer`), and give `system:masters` its rules (`cluster-admin`), with their
 * bindings; what exists already (the bootstrap policy) is left as it is.
 */
export async function ensureBasicPolicy(env: KubectlEnv): Promise<void> {
  const rbac = 'rbac.authorization.k8s.io/v1';
  const role = (name: string, rules: object[]) => ({
    apiVersion: rbac,
    kind: 'ClusterRole',
    metadata: { name },
    rules,
  });
  const binding = (name: string, groups: string[]) => ({
    apiVersion: rbac,
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  });
  const objects = [
    // cluster-admin, bound to system:masters: what `auth can-i --list` shows the admin.
    role('cluster-admin', [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ]),
    binding('cluster-admin', ['system:masters']),
    role('system:discovery', [
      {
        verbs: ['get'],
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      },
    ]),
    binding('system:discovery', ['system:authenticated']),
    role('system:basic-user', [
      {
        verbs: ['create'],
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
    ]),
    binding('system:basic-user', ['system:authenticated']),
    role('system:public-info-viewer', [
      { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
    ]),
    binding('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  ];
  for (const o of objects) {
    const r = await env.run(['create', '-f', '-'], { input: JSON.stringify(o) });
    if (r.code !== 0 && !r.stderr.includes('AlreadyExists')) throw new Error(r.stderr);
  }
}
