/**
 * What the Home's tests share (kubebuilder's `suite_test.go`, with webhooks): the CRD from
 * `config/crd` as envtest installs it, the webhook server of src/webhooks.ts in-process with
 * its configurations registered as `kubeloop dev` registers them (a URL and the server's CA),
 * the operator's generated RBAC, the operator run under it with its log lines kept, and a
 * recorder of the requests it makes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestEnv } from '@kubeloop/server/testing';
import { Client, type KubeObject } from 'kubeloop/client';
import { installManifests, type Manifest, type PolicyRule, webhookConfigurations } from 'kubeloop/manifests';
import type { Manager } from 'kubeloop/runtime';
import { type AdmissionWebhook, WebhookServer } from 'kubeloop/webhook';
import { pino } from 'pino';
import { Home } from '../src/api/ajd/v1/home.js';
import { createManager, LEADER_ELECTION_ID, NAME } from '../src/manager.js';
import { allWebhooks } from '../src/webhooks.js';

export { eventually } from '@kubeloop/server/testing';

/** The example's folder. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The CRD directory `kubeloop generate` writes (envtest's `CRDDirectoryPaths`). */
export const CRD_DIR = join(root, 'config/crd');

/** The manager's ServiceAccount, as config/default names and places it. */
export const OPERATOR_SA = { namespace: `${NAME}-system`, name: `${NAME}-controller-manager` };
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_SA.namespace}:${OPERATOR_SA.name}`;

/** The operator's webhook server, in-process on a free port with its own CA. */
export interface RunningWebhooks {
  server: WebhookServer;
  /** The Mutating/ValidatingWebhookConfigurations pointing at it. */
  configurations: Manifest[];
  stop(): Promise<void>;
}

/**
 * Starts the webhook server of src/webhooks.ts on a free port, its certificates made in a temp
 * dir. `names` are the configurations' (those of `config/default` carry the `home-` prefix).
 */
export async function startWebhooks(
  names: { mutatingName?: string; validatingName?: string } = {},
): Promise<RunningWebhooks> {
  const dir = await mkdtemp(join(tmpdir(), 'home-webhooks-'));
  const server = new WebhookServer({ port: 0, certDir: dir }).register(...allWebhooks);
  await server.listen();
  const admission = allWebhooks.filter((w): w is AdmissionWebhook => !('convert' in w));
  const configurations = webhookConfigurations(admission, {
    target: { url: server.url },
    caBundle: server.caBundle,
    ...names,
  }) as Manifest[];
  return {
    server,
    configurations,
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The RBAC objects the operator is deployed with, generated from the manager's declarations as
 * src/manifests.ts does: its Namespace, ServiceAccount, the manager's ClusterRole and binding,
 * leader election's Role and binding. The editor and viewer roles (for people) come with
 * `withUserRoles`.
 */
export function generatedRbac(options: { withUserRoles?: boolean } = {}): Manifest[] {
  const objects = installManifests({
    name: NAME,
    resources: [Home],
    ...createManager({ leaderElection: { id: LEADER_ELECTION_ID } }).permissions,
  });
  return objects.filter(
    (o) =>
      ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'].includes(
        o.kind,
      ) &&
      (options.withUserRoles || !/-(editor|viewer)-role$/.test(o.metadata.name)),
  );
}

/** The grants of the operator's generated roles, as `verb group resource`. */
export function generatedGrants(): Set<string> {
  const granted = new Set<string>();
  for (const o of generatedRbac())
    for (const rule of (o.rules as PolicyRule[] | undefined) ?? [])
      for (const group of rule.apiGroups ?? [''])
        for (const resource of rule.resources ?? [])
          for (const verb of rule.verbs) granted.add(`${verb} ${group} ${resource}`);
  return granted;
}

/** Applies objects as the admin (server-side apply). */
export async function applyAsAdmin(env: TestEnv, objects: readonly Manifest[]): Promise<void> {
  const admin = new Client(env.clientConfig);
  try {
    for (const o of objects) await admin.apply(o as KubeObject, { fieldManager: 'test', force: true });
  } finally {
    await admin.close();
  }
}

/** A log line of the operator, parsed. */
export interface LogLine {
  level: number;
  msg: string;
}

/** The operator, run under the ServiceAccount of its generated RBAC; its log lines kept. */
export interface RunningOperator {
  manager: Manager;
  lines: LogLine[];
  stop(): Promise<void>;
}

/** Starts the operator under its ServiceAccount (its RBAC applied by the caller), with leader election as deployed. */
export async function startOperator(env: TestEnv): Promise<RunningOperator> {
  const client = new Client(
    await env.clientConfigFor({ serviceAccount: `${OPERATOR_SA.namespace}/${OPERATOR_SA.name}` }),
    { retry: { baseDelayMs: 1 } },
  );
  const lines: LogLine[] = [];
  const manager = createManager({
    client,
    logger: pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as LogLine) }),
    healthProbeAddress: false,
    metricsAddress: false,
    handleSignals: false,
    gracefulShutdownTimeoutMs: 5_000,
    leaderElection: {
      id: LEADER_ELECTION_ID,
      leaseDurationMs: 1_500,
      renewDeadlineMs: 1_000,
      retryPeriodMs: 200,
    },
  });
  const done = manager.start().catch(() => undefined);
  await manager.ready();
  return {
    manager,
    lines,
    async stop() {
      await manager.stop();
      await done;
      await client.close();
    },
  };
}

/** Records the resource requests `username` makes, as `verb group resource[/subresource]`. */
export function recordRequests(env: TestEnv, username: string): { requests: Set<string>; stop(): void } {
  const requests = new Set<string>();
  const stop = env.audit.subscribe(({ user, info }) => {
    if (user.username !== username || !info.isResourceRequest) return;
    const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    requests.add(`${info.verb} ${info.group} ${resource}`);
  });
  return { requests, stop };
}

/**
 * cert-manager's two kinds that `config/default` uses (an Issuer, a Certificate), as CRDs that
 * keep whatever they are given: the cluster of `kubectl apply -k config/default` has
 * cert-manager, as kubebuilder's layout requires once webhooks are enabled. Nothing issues the
 * certificate here: the tests serve the webhooks locally, with the server's own CA.
 */
export function certManagerCrds(): string {
  return ['Issuer', 'Certificate']
    .map(
      (kind) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${kind.toLowerCase()}s.cert-manager.io
spec:
  group: cert-manager.io
  names: { kind: ${kind}, plural: ${kind.toLowerCase()}s, singular: ${kind.toLowerCase()}, listKind: ${kind}List }
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true }
`,
    )
    .join('---\n');
}
