/**
 * Running an operator under its own identity on a local control plane: the ServiceAccount,
 * roles and bindings its generated manifests declare (config/rbac, named and placed as
 * config/default's kustomization does), a token of that ServiceAccount, and a kubeconfig with
 * it. An operator that works as admin on the author's machine and is then forbidden everything
 * in the cluster fails here first, where the fix is one declaration away.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Client, isAlreadyExists, type KubeObject, Namespace } from 'kubeloop/client';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { FIELD_MANAGER } from './project.js';

/** The RBAC objects of a project as `kubectl apply -k config/default` would install them. */
export interface ProjectRbac {
  /** ServiceAccount, Roles, ClusterRoles and their bindings, prefixed and namespaced. */
  readonly objects: KubeObject[];
  /** The manager's ServiceAccount. */
  readonly serviceAccount: { namespace: string; name: string };
}

/** An operator's credentials on a control plane. */
export interface OperatorIdentity {
  /** `system:serviceaccount:<namespace>:<name>` */
  readonly username: string;
  readonly serviceAccount: { namespace: string; name: string };
  /** The kubeconfig file the operator runs with. */
  readonly kubeconfig: string;
}

interface Kustomization {
  namePrefix?: string;
  namespace?: string;
  resources?: string[];
  transformers?: unknown[];
}

const NAMESPACED = new Set(['ServiceAccount', 'Role', 'RoleBinding']);
const RBAC_KINDS = new Set([...NAMESPACED, 'ClusterRole', 'ClusterRoleBinding']);

async function readKustomization(folder: string): Promise<Kustomization | undefined> {
  for (const name of ['kustomization.yaml', 'kustomization.yml', 'Kustomization']) {
    const path = join(folder, name);
    if (existsSync(path)) return (parse(await readFile(path, 'utf8')) ?? {}) as Kustomization;
  }
  return undefined;
}

/** config/default's namespace: its `namespace` field or its NamespaceTransformer's. */
function namespaceOf(k: Kustomization | undefined): string | undefined {
  if (k?.namespace) return k.namespace;
  for (const t of k?.transformers ?? []) {
    const doc = (typeof t === 'string' ? parse(t) : t) as
      | { kind?: string; metadata?: { namespace?: string } }
      | undefined;
    if (doc?.kind === 'NamespaceTransformer' && doc.metadata?.namespace) return doc.metadata.namespace;
  }
  return undefined;
}

/**
 * The RBAC of an operator project: the objects of config/rbac (its kustomization's resources),
 * with config/default's name prefix and namespace applied the way kustomize applies them (role
 * references and ServiceAccount subjects follow the renamed objects; namespaces are set where
 * unset). Undefined when the project has no config/rbac (its manifests were never generated).
 */
export async function readProjectRbac(dir: string): Promise<ProjectRbac | undefined> {
  const rbacDir = join(dir, 'config/rbac');
  const base = await readKustomization(rbacDir);
  if (!base) return undefined;
  const overlay = await readKustomization(join(dir, 'config/default'));
  const prefix = overlay?.namePrefix ?? '';
  const namespace = namespaceOf(overlay) ?? 'default';
  const objects: KubeObject[] = [];
  for (const file of base.resources ?? []) {
    for (const doc of parseAllDocuments(await readFile(join(rbacDir, file), 'utf8'))) {
      const obj = doc.toJS() as KubeObject | null;
      if (obj && RBAC_KINDS.has(obj.kind ?? '')) objects.push(obj);
    }
  }
  const names = new Set(objects.map((o) => `${o.kind}/${o.metadata?.name}`));
  const serviceAccounts = objects.filter((o) => o.kind === 'ServiceAccount');
  const out = objects.map((o) => {
    const copy = structuredClone(o) as KubeObject & {
      roleRef?: { kind: string; name: string };
      subjects?: { kind: string; name: string; namespace?: string }[];
    };
    const meta = copy.metadata ?? {};
    copy.metadata = {
      ...meta,
      name: `${prefix}${meta.name ?? ''}`,
      ...(NAMESPACED.has(copy.kind ?? '') && { namespace: meta.namespace ?? namespace }),
    };
    if (copy.roleRef && names.has(`${copy.roleRef.kind}/${copy.roleRef.name}`))
      copy.roleRef = { ...copy.roleRef, name: `${prefix}${copy.roleRef.name}` };
    if (copy.subjects)
      copy.subjects = copy.subjects.map((s) =>
        s.kind !== 'ServiceAccount'
          ? s
          : {
              ...s,
              name: names.has(`ServiceAccount/${s.name}`) ? `${prefix}${s.name}` : s.name,
              namespace: s.namespace ?? namespace,
            },
      );
    return copy as KubeObject;
  });
  const sa = serviceAccounts[0];
  if (!sa) return undefined;
  return {
    objects: out,
    serviceAccount: { namespace: sa.metadata?.namespace ?? namespace, name: `${prefix}${sa.metadata?.name}` },
  };
}

/**
 * Whether the client's server is a kubeloop control plane (its `/version` says so): only there
 * do `kubeloop dev` and `kubeloop run` install the operator's RBAC by themselves.
 */
export async function isKubeloopControlPlane(client: Client): Promise<boolean> {
  const v = await client.version();
  return v.compiler === 'kubeloop' || /-kubeloop$/.test(v.gitVersion ?? '');
}

/** A kubeconfig for a bearer token, in the ServiceAccount's namespace as a pod would be. */
function tokenKubeconfig(o: {
  server: string;
  caData: string | undefined;
  token: string;
  user: string;
  namespace: string;
}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'kubeloop',
        cluster: {
          server: o.server,
          ...(o.caData !== undefined && {
            'certificate-authority-data': Buffer.from(o.caData).toString('base64'),
          }),
        },
      },
    ],
    users: [{ name: o.user, user: { token: o.token } }],
    contexts: [{ name: 'operator', context: { cluster: 'kubeloop', user: o.user, namespace: o.namespace } }],
    'current-context': 'operator',
  });
}

/** Lifetime of the operator's token: a working day; every (re)start of the operator gets a new one. */
const TOKEN_SECONDS = 24 * 3600;

/**
 * Installs the project's RBAC (server-side apply; the manager's namespace created when missing),
 * requests a token of its ServiceAccount and writes a kubeconfig with it to `kubeconfigPath`
 * (mode 0600). `server` and `caData` are those of the admin client's cluster.
 */
export async function prepareOperatorIdentity(
  client: Client,
  rbac: ProjectRbac,
  cluster: { server: string; caData: string | undefined },
  kubeconfigPath: string,
): Promise<OperatorIdentity> {
  const namespaces = new Set(
    rbac.objects.flatMap((o) => (o.metadata?.namespace ? [o.metadata.namespace] : [])),
  );
  for (const name of namespaces) {
    try {
      await client.api(Namespace).create({ metadata: { name } });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
  for (const obj of rbac.objects) await client.apply(obj, { fieldManager: FIELD_MANAGER, force: true });
  const { namespace, name } = rbac.serviceAccount;
  const review = await client.request<{ status?: { token?: string } }>(
    'POST',
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}/token`,
    {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: TOKEN_SECONDS },
      },
    },
  );
  const token = review.status?.token;
  if (!token) throw new Error(`the TokenRequest of ServiceAccount ${namespace}/${name} returned no token`);
  const username = `system:serviceaccount:${namespace}:${name}`;
  await writeFile(kubeconfigPath, tokenKubeconfig({ ...cluster, token, user: username, namespace }), {
    mode: 0o600,
  });
  return { username, serviceAccount: { namespace, name }, kubeconfig: kubeconfigPath };
}

/** A private temporary directory for an operator's kubeconfig; `remove()` deletes it. */
export async function temporaryKubeconfigPath(): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-operator-'));
  return { path: join(dir, 'kubeconfig'), remove: () => rm(dir, { recursive: true, force: true }) };
}
