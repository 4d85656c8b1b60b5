/**
 * The GenericDaemon end to end, driven by the real kubectl as the README walks through it: the
 * operator installed with `kubectl apply -k config/default` (its CRD and generated RBAC) and run
 * under that ServiceAccount, the seed's sample applied, nodes labelled and unlabelled with
 * `kubectl label`, the daemon and its status read back with `kubectl get`.
 */
import { join } from 'node:path';
import { type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, OPERATOR_USER, type RunningOperator, root, startOperator } from './env.js';

let env: KubectlEnv;
let op: RunningOperator;
beforeAll(async () => {
  env = await startKubectlEnv({ nodes: { count: 2 } });
  await env.ok(['apply', '-k', join(root, 'config/default')]);
  await env.ok(['wait', '--for=condition=Established', 'crd/genericdaemons.mydomain.com']);
  op = await startOperator(env.cp);
  await op.manager.ready();
});
afterAll(async () => {
  await op?.stop();
  await env?.stop();
});

/** `kubectl get … -o jsonpath=…`, or undefined when it fails. */
const jsonpath = async (args: string[], path: string) => {
  const r = await env.run(['get', ...args, '-o', `jsonpath=${path}`]);
  return r.code === 0 ? r.stdout : undefined;
};

/** Waits until the daemon's pods run on exactly `nodes` and `kubectl get` shows them installed. */
async function expectOn(nodes: string[]): Promise<void> {
  await eventually(
    async () => {
      const pods = JSON.parse(
        await env.ok(['get', 'pods', '-l', 'mydomain.com/genericdaemon=syslog', '-o', 'json']),
      ) as { items: { metadata: { deletionTimestamp?: string }; spec: { nodeName?: string } }[] };
      const on = pods.items.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.spec.nodeName);
      return JSON.stringify(on.sort()) === JSON.stringify(nodes);
    },
    30_000,
    `the daemon on ${nodes.join(', ') || 'no node'}`,
  );
  await eventually(
    async () => (await jsonpath(['genericdaemon', 'syslog'], '{.status.installed}')) === String(nodes.length),
    30_000,
    `installed ${nodes.length}`,
  );
}

describe('GenericDaemon with kubectl', () => {
  it('is what the generated RBAC lets its ServiceAccount do, and no more', async () => {
    const can = (verb: string, resource: string, as: string) =>
      env.run(['auth', 'can-i', verb, resource, '--all-namespaces', `--as=${as}`]);
    expect((await can('create', 'daemonsets.apps', OPERATOR_USER)).stdout.trim()).toBe('yes');
    expect((await can('watch', 'genericdaemons.mydomain.com', OPERATOR_USER)).stdout.trim()).toBe('yes');
    expect((await can('create', 'deployments.apps', OPERATOR_USER)).stdout.trim()).toBe('no');
    // Seed 003's identity: the default ServiceAccount has none of it.
    const seedSa = 'system:serviceaccount:default:default';
    expect((await can('list', 'genericdaemons.mydomain.com', seedSa)).stdout.trim()).toBe('no');
  });

  it('runs the sample on the nodes labelled daemon=logs, following kubectl label', async () => {
    await env.ok(['apply', '-f', join(root, 'config/samples/mydomain_v1beta1_genericdaemon.yaml')]);
    await eventually(() => jsonpath(['daemonset', 'syslog-daemon'], '{.metadata.ownerReferences[0].kind}'));
    expect(await jsonpath(['daemonset', 'syslog-daemon'], '{.spec.template.spec.nodeSelector.daemon}')).toBe(
      'logs',
    );
    await expectOn([]);
    await env.ok(['label', 'node', 'kubeloop-node-1', 'daemon=logs']);
    await expectOn(['kubeloop-node-1']);
    await env.ok(['label', 'node', 'kubeloop-node-2', 'daemon=logs']);
    await expectOn(['kubeloop-node-1', 'kubeloop-node-2']);
    await env.ok(['label', 'node', 'kubeloop-node-1', 'daemon=metrics', '--overwrite']);
    await expectOn(['kubeloop-node-2']);
    await env.ok(['label', 'node', 'kubeloop-node-2', 'daemon-']);
    await expectOn([]);
    // The printer columns of the CRD.
    const table = await env.ok(['get', 'genericdaemons']);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+LABEL\s+IMAGE\s+INSTALLED\s+AGE$/);
    expect(table.split('\n')[1]).toMatch(/^syslog\s+logs\s+mbessler\/syslogdocker\s+0\s+/);
  });

  it('refuses a GenericDaemon without an image, and deletes the DaemonSet with its GenericDaemon', async () => {
    const bad = await env.run(['apply', '-f', '-'], {
      input:
        'apiVersion: mydomain.com/v1beta1\nkind: GenericDaemon\nmetadata:\n  name: bad\nspec:\n  label: x\n',
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('The GenericDaemon "bad" is invalid: spec.image: Required value');
    await env.ok(['delete', 'genericdaemon', 'syslog']);
    await eventually(async () => (await env.run(['get', 'daemonset', 'syslog-daemon'])).code === 1);
    expect(op.lines.filter((l) => l.msg.startsWith('forbidden: '))).toEqual([]);
  });
});
