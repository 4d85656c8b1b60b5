/**
 * The sample operator deployed in-cluster as a process-backed pod with a ClusterRole that lacks
 * its `deployments` rule: its log says what is forbidden, its /readyz fails and so its pod is not
 * Ready; once the generated rule is applied it syncs and becomes Ready, with no restart.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually, type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import { Client, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutCertManager } from './cluster-support.js';

const PROJECT = resolve(__dirname, '..');
const CLI = resolve(__dirname, '../../../packages/cli/dist/bin.js');
const NS = 'sample-controller-system';

let env: KubectlEnv;
let client: Client;
let store: string;
let manifests: string;

beforeAll(async () => {
  store = mkdtempSync(join(tmpdir(), 'kubeloop-images-'));
  execFileSync(process.execPath, [
    CLI,
    'build',
    PROJECT,
    '--no-compile',
    '--store',
    store,
    '--name',
    'sample-controller',
  ]);
  env = await startKubectlEnv({ nodes: { count: 1, processes: { imageStore: store } } });
  client = new Client(env.cp.clientConfig);
  manifests = withoutCertManager(await env.ok(['kustomize', join(PROJECT, 'config/default')]))
    // As generated: its startup probe polls /readyz every second, so it is Ready soon after it syncs.
    .replace('image: sample-controller:latest', 'image: kubeloop.local/sample-controller:latest');
}, 60_000);
afterAll(async () => {
  await client?.close();
  await env?.stop();
  rmSync(store, { recursive: true, force: true });
});

function readyz(ip: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: ip, port: 8081, path: '/readyz', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the sample operator with a rule missing from its RBAC', () => {
  it('logs the forbidden request, stays unready, and becomes Ready once the rule is granted', async () => {
    const role = readFileSync(join(PROJECT, 'config/rbac/role.yaml'), 'utf8');
    // Without the apps/deployments rule (the first one).
    const lacking = manifests.replace(
      /- apiGroups:\n {2}- apps\n {2}resources:\n {2}- deployments\n[\s\S]*?(?=- apiGroups:)/,
      '',
    );
    expect(lacking).not.toBe(manifests);
    await env.ok(['apply', '-f', '-'], { input: lacking });
    const pod = await eventually(
      async () => {
        const list = await client.api(Pod, NS).list();
        const p = list.items[0];
        return p?.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
      },
      30_000,
      'the operator running',
    );
    const name = pod.metadata?.name ?? '';
    await eventually(
      async () => (await env.ok(['logs', '-n', NS, name])).includes('forbidden'),
      30_000,
      'forbidden in its log',
    );
    expect(await readyz(pod.status?.podIP ?? '')).toBe(500);
    const unready = await client.api(Pod, NS).get(name);
    expect(unready.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');

    await env.ok(['apply', '-n', NS, '-f', '-'], {
      input: role.replace('name: manager-role', 'name: sample-controller-manager-role'),
    });
    const ready = await eventually(
      async () => {
        const p = await client.api(Pod, NS).get(name);
        return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
      },
      60_000,
      'Ready once granted',
    );
    expect(ready.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  }, 120_000);
});
