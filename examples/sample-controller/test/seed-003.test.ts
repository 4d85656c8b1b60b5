/**
 * Seed 003's story, with the sample operator and RBAC enforced: an operator that works on the
 * author's machine (as admin) and then, deployed, runs as `system:serviceaccount:default:default`
 * with no bindings — `foos.samplecontroller.k8s.io is forbidden: User
 * "system:serviceaccount:default:default" cannot list …`. Here that is loud (a log line with the
 * declaration to make, a metric, the manager not ready); with the generated RBAC the operator
 * reconciles; with one generated rule removed, exactly that request is refused, logged and counted.
 */
import { eventually, startTestEnv, type TestEnv } from '@kubeloop/server/testing';
import { Client, ClusterRole, Deployment } from 'kubeloop/client';
import type { Manifest, PolicyRule } from 'kubeloop/manifests';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Foo } from '../src/api/foo.js';
import {
  applyAsAdmin,
  generatedRbac,
  installFooCrd,
  type LogLine,
  metricsOf,
  OPERATOR_SA,
  OPERATOR_USER,
  readyzOf,
  samples,
  startOperatorAs,
} from './rbac-support.js';

let env: TestEnv;
let admin: Client;
beforeAll(async () => {
  // RBAC is the control plane's default mode; named here because the story depends on it.
  env = await startTestEnv({ authorizationMode: 'RBAC' });
  admin = new Client(env.clientConfig);
  await installFooCrd(env);
});
afterAll(async () => {
  await admin?.close();
  await env?.stop();
});

const foo = (name: string): Foo => ({
  apiVersion: 'samplecontroller.k8s.io/v1alpha1',
  kind: 'Foo',
  metadata: { name, namespace: 'default' },
  spec: { deploymentName: name, replicas: 1 },
});

const DEFAULT_SA = 'system:serviceaccount:default:default';
const NOT_GRANTED =
  'but the identity it runs as is not granted it: run it under the ServiceAccount of its generated RBAC (config/rbac), applied and regenerated if its declarations changed';

/** The series of `kubeloop_forbidden_requests_total` above zero. */
const refused = (metrics: string) =>
  samples(metrics, 'kubeloop_forbidden_requests_total')
    .filter((s) => s.value > 0)
    .map((s) => s.labels);

describe("seed 003: the operator deployed as the namespace's default ServiceAccount, without bindings", () => {
  it('is loudly forbidden: the refusal and what to declare in the log, the metrics, and not ready', async () => {
    const op = await startOperatorAs(env, { serviceAccount: 'default/default' });
    try {
      const gauge = (text: string, group: string, resource: string) =>
        samples(text, 'kubeloop_informer_forbidden').find(
          (s) => s.labels === `{group="${group}",resource="${resource}",namespace=""}`,
        )?.value;
      await eventually(
        async () => {
          if (!op.manager.metricsUrl) return false;
          const text = await metricsOf(op.manager);
          return (
            gauge(text, 'samplecontroller.k8s.io', 'foos') === 1 && gauge(text, 'apps', 'deployments') === 1
          );
        },
        15_000,
        'both informers forbidden in the metrics',
      );
      expect(await readyzOf(op.manager)).toBe(500);

      // The server's own words, and what to do about them.
      const fooLine = op.lines.find((l) => l.resource === 'foos' && l.msg.startsWith('forbidden: '));
      expect(fooLine?.level).toBe(50);
      expect(fooLine?.msg).toMatch(
        new RegExp(
          `^forbidden: foos\\.samplecontroller\\.k8s\\.io is forbidden: User "${DEFAULT_SA}" cannot (list|watch) resource "foos" in API group "samplecontroller\\.k8s\\.io" at the cluster scope$`,
        ),
      );
      expect(fooLine?.hint).toBe(
        `the manager declares "${fooLine?.verb}" on "foos" in API group "samplecontroller.k8s.io", ${NOT_GRANTED}`,
      );
      const deploymentLine = op.lines.find(
        (l) => l.resource === 'deployments' && l.msg.startsWith('forbidden: '),
      );
      expect(deploymentLine?.msg).toMatch(
        new RegExp(
          `^forbidden: deployments\\.apps is forbidden: User "${DEFAULT_SA}" cannot (list|watch) resource "deployments" in API group "apps" at the cluster scope$`,
        ),
      );
      const text = await metricsOf(op.manager);
      expect(refused(text).map((l) => l.replace(/verb="(list|watch)",/, ''))).toEqual(
        expect.arrayContaining([
          '{group="samplecontroller.k8s.io",resource="foos"}',
          '{group="apps",resource="deployments"}',
        ]),
      );
    } finally {
      await op.stop();
    }
  });
});

describe('the operator under the ServiceAccount of its generated RBAC', () => {
  it('reconciles, refused nothing', async () => {
    await applyAsAdmin(env, generatedRbac());
    const op = await startOperatorAs(env, { serviceAccount: `${OPERATOR_SA.namespace}/${OPERATOR_SA.name}` });
    try {
      await op.manager.ready();
      await admin.create(foo('seed-003'));
      // Reconciled: the Deployment it controls, and its status written (no node runs its pods).
      await eventually(
        async () =>
          (await admin.get(Foo, 'seed-003', { namespace: 'default' })).status?.availableReplicas === 0,
        30_000,
        'the Foo reconciled: its status written',
      );
      const created = await admin.get(Deployment, 'seed-003', { namespace: 'default' });
      expect(created.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'Foo',
        name: 'seed-003',
        controller: true,
      });
      expect(await readyzOf(op.manager)).toBe(200);
      expect(refused(await metricsOf(op.manager))).toEqual([]);
      expect(op.lines.filter((l) => l.msg.startsWith('forbidden: '))).toEqual([]);
    } finally {
      await op.stop();
    }
  });

  it('with one generated rule removed, is refused exactly that request: a log line with the hint, a metric', async () => {
    await applyAsAdmin(env, generatedRbac());
    const role = generatedRbac().find((o) => o.kind === 'ClusterRole') as Manifest & { rules: PolicyRule[] };
    // The Foo's status: the last write of a reconcile, after its Deployment is created.
    const rules = role.rules.filter((r) => !r.resources?.includes('foos/status'));
    expect(rules).toHaveLength(role.rules.length - 1);
    await admin.update({ ...(await admin.get(ClusterRole, role.metadata.name)), rules });

    const op = await startOperatorAs(env, { serviceAccount: `${OPERATOR_SA.namespace}/${OPERATOR_SA.name}` });
    try {
      await op.manager.ready();
      await admin.create(foo('no-status'));
      const failed = await eventually(
        () => op.lines.find((l): l is LogLine => l.msg === 'reconcile failed'),
        30_000,
        'the reconcile refused its status write',
      );
      expect(failed.err?.message).toBe(
        `foos.samplecontroller.k8s.io "no-status" is forbidden: User "${OPERATOR_USER}" cannot patch resource "foos/status" in API group "samplecontroller.k8s.io" in the namespace "default"`,
      );
      expect(failed.hint).toBe(
        `the manager declares "patch" on "foos/status" in API group "samplecontroller.k8s.io", ${NOT_GRANTED}`,
      );
      // Everything before it was allowed: the Deployment exists.
      await admin.get(Deployment, 'no-status', { namespace: 'default' });
      // Exactly that refusal, in the log and the metrics; the informers are fine: still ready.
      const forbiddenLines = op.lines.filter((l) => l.msg.startsWith('forbidden: '));
      expect(forbiddenLines.length).toBeGreaterThan(0);
      expect(new Set(forbiddenLines.map((l) => `${l.verb} ${l.group} ${l.resource}`))).toEqual(
        new Set(['patch samplecontroller.k8s.io foos/status']),
      );
      expect(refused(await metricsOf(op.manager))).toEqual([
        '{verb="patch",group="samplecontroller.k8s.io",resource="foos/status"}',
      ]);
      expect(await readyzOf(op.manager)).toBe(200);
    } finally {
      await op.stop();
    }
  });
});
