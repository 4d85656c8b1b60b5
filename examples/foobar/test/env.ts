/**
 * What the FooBar's tests share (kubebuilder's `suite_test.go`, grown with seed 000's concerns):
 * the webhook server answering FooBar's conversions in-process, the CRDs installed as
 * `kubeloop dev` installs them (FooBar's conversion pointed at that server), the operator's
 * generated RBAC, the operator run under it with a registry the test controls and its log
 * lines kept, and a recorder of the requests the operator makes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installCrd, type TestEnv } from '@kubeloop/server/testing';
import { Client, type KubeObject } from 'kubeloop/client';
import { installManifests, type Manifest, type PolicyRule, withConversionWebhook } from 'kubeloop/manifests';
import type { Manager } from 'kubeloop/runtime';
import { WebhookServer } from 'kubeloop/webhook';
import { pino } from 'pino';
import { FooBarTask } from '../src/api/test/v1/foobartask.js';
import { FooBar } from '../src/api/test/v2/foobar.js';
import { ExternalRegistry } from '../src/external.js';
import { createManager, LEADER_ELECTION_ID, NAME } from '../src/manager.js';
import { allWebhooks } from '../src/webhooks.js';

export { eventually } from '@kubeloop/server/testing';

/** The example's folder. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The manager's ServiceAccount, as config/default names and places it. */
export const OPERATOR_SA = { namespace: `${NAME}-system`, name: `${NAME}-controller-manager` };
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_SA.namespace}:${OPERATOR_SA.name}`;

/** The operator's webhook server (FooBar's conversion), in-process on a free port with its own CA. */
export interface RunningWebhooks {
  server: WebhookServer;
  stop(): Promise<void>;
}

/** Starts the webhook server of src/webhooks on a free port, its certificates made in a temp dir. */
export async function startWebhooks(): Promise<RunningWebhooks> {
  const dir = await mkdtemp(join(tmpdir(), 'foobar-webhooks-'));
  const server = new WebhookServer({ port: 0, certDir: dir }).register(...allWebhooks);
  await server.listen();
  return {
    server,
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** FooBar's CRD with its conversion webhook pointed at `server` (what `kubeloop dev` does). */
export const fooBarCrdFor = (server: WebhookServer) =>
  withConversionWebhook(FooBar.crd(), { target: { url: server.url }, caBundle: server.caBundle });

/** Installs the project's CRDs, FooBar's converted by `server`, and waits until they serve. */
export async function installCrds(env: TestEnv, server: WebhookServer): Promise<void> {
  const admin = new Client(env.clientConfig);
  try {
    await installCrd(admin, fooBarCrdFor(server));
    await installCrd(admin, FooBarTask.crd());
  } finally {
    await admin.close();
  }
}

/**
 * The RBAC objects the operator is deployed with, generated from the manager's declarations as
 * src/manifests.ts does: its Namespace, ServiceAccount, the manager's ClusterRole and binding,
 * leader election's Role and binding. (The editor and viewer roles are for people, bound to nobody.)
 */
export function generatedRbac(): Manifest[] {
  const objects = installManifests({
    name: NAME,
    resources: [FooBar, FooBarTask],
    ...createManager({ leaderElection: { id: LEADER_ELECTION_ID } }).permissions,
  });
  return objects.filter(
    (o) =>
      ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'].includes(
        o.kind,
      ) && !/-(editor|viewer)-role$/.test(o.metadata.name),
  );
}

/** The grants of the generated roles, as `verb group resource`. */
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
  controller?: string;
  name?: string;
  err?: { message?: string; type?: string };
}

/** The operator, run under the ServiceAccount of its generated RBAC; its log lines kept. */
export interface RunningOperator {
  manager: Manager;
  registry: ExternalRegistry;
  lines: LogLine[];
  /** How many times the FooBar controller reconciled `name` (its debug line "reconciling"). */
  reconcilesOf(name: string): number;
  stop(): Promise<void>;
}

/** Starts the operator under its ServiceAccount (its RBAC applied by the caller), with leader election as deployed. */
export async function startOperator(env: TestEnv): Promise<RunningOperator> {
  const client = new Client(
    await env.clientConfigFor({ serviceAccount: `${OPERATOR_SA.namespace}/${OPERATOR_SA.name}` }),
    { retry: { baseDelayMs: 1 } },
  );
  const lines: LogLine[] = [];
  const registry = new ExternalRegistry();
  const manager = createManager(
    {
      client,
      logger: pino({ level: 'debug' }, { write: (s: string) => lines.push(JSON.parse(s) as LogLine) }),
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
    },
    registry,
  );
  const done = manager.start().catch(() => undefined);
  await manager.ready();
  return {
    manager,
    registry,
    lines,
    reconcilesOf: (name) =>
      lines.filter((l) => l.controller === 'foobar' && l.name === name && l.msg === 'reconciling').length,
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
