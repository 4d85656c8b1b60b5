/**
 * What the GenericDaemon's tests share (kubebuilder's `suite_test.go`, as `kubeloop init` wrote
 * it, grown with seed 003's concerns): the CRD from `config/crd` as envtest installs it, the
 * operator's generated RBAC (what `kubectl apply -k config/default` installs), the operator run as
 * a given identity with its log lines kept, and a recorder of the requests that identity makes.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestEnv } from '@kubeloop/server/testing';
import { Client, type KubeObject } from 'kubeloop/client';
import { installManifests, type Manifest, type PolicyRule } from 'kubeloop/manifests';
import type { Manager } from 'kubeloop/runtime';
import { pino } from 'pino';
import { GenericDaemon } from '../src/api/mydomain/v1beta1/genericdaemon.js';
import { createManager, LEADER_ELECTION_ID, NAME } from '../src/manager.js';

export { eventually } from '@kubeloop/server/testing';

/** The example's folder. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The CRD directory `kubeloop generate` writes (envtest's `CRDDirectoryPaths`). */
export const CRD_DIR = join(root, 'config/crd');

/** The manager's ServiceAccount, as config/default names and places it. */
export const OPERATOR_SA = { namespace: `${NAME}-system`, name: `${NAME}-controller-manager` };
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_SA.namespace}:${OPERATOR_SA.name}`;

/**
 * The RBAC objects the operator is deployed with, generated from the manager's declarations as
 * src/manifests.ts does: its Namespace, ServiceAccount, the manager's ClusterRole and binding,
 * leader election's Role and binding. (The editor and viewer roles are for people, bound to nobody.)
 */
export function generatedRbac(): Manifest[] {
  const objects = installManifests({
    name: NAME,
    resources: [GenericDaemon],
    ...createManager({ leaderElection: { id: LEADER_ELECTION_ID } }).permissions,
  });
  return objects.filter(
    (o) =>
      ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'].includes(
        o.kind,
      ) && !/-(editor|viewer)-role$/.test(o.metadata.name),
  );
}

/** The rules of the generated roles. */
export function generatedRules(): PolicyRule[] {
  return generatedRbac().flatMap((o) =>
    o.kind === 'Role' || o.kind === 'ClusterRole' ? ((o.rules as PolicyRule[] | undefined) ?? []) : [],
  );
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
  hint?: string;
  verb?: string;
  group?: string;
  resource?: string;
  err?: { message?: string };
}

/** The operator, run as an identity with leader election as deployed; its log lines kept. */
export interface RunningOperator {
  manager: Manager;
  lines: LogLine[];
  stop(): Promise<void>;
}

/** Starts the operator as `identity` (not waiting for its caches: a forbidden one never fills). */
export async function startOperatorAs(
  env: TestEnv,
  identity: Parameters<TestEnv['clientConfigFor']>[0],
): Promise<RunningOperator> {
  const client = new Client(await env.clientConfigFor(identity), { retry: { baseDelayMs: 1 } });
  const lines: LogLine[] = [];
  const manager = createManager({
    client,
    logger: pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as LogLine) }),
    healthProbeAddress: '127.0.0.1:0',
    metricsAddress: '127.0.0.1:0',
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

/** The operator under the ServiceAccount of its generated RBAC (applied by the caller). */
export const startOperator = (env: TestEnv) =>
  startOperatorAs(env, { serviceAccount: `${OPERATOR_SA.namespace}/${OPERATOR_SA.name}` });

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

/** The HTTP status of the manager's `/readyz`. */
export async function readyzOf(manager: Manager): Promise<number> {
  return (await fetch(`${manager.healthUrl}/readyz`)).status;
}
