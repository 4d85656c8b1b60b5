import { mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { type ControlPlane, startTestEnv } from '@kubeloop/server/testing';
import { Client, type ConfigError, ConfigMap, Namespace } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejection, tempDir } from './helpers.js';

let env: ControlPlane;
let tmp: { dir: string; remove: () => void };
const clients: Client[] = [];
const track = (c: Client) => {
  clients.push(c);
  return c;
};

beforeAll(async () => {
  env = await startTestEnv();
  tmp = tempDir();
  await track(new Client(env.clientConfig))
    .api(Namespace)
    .create({ metadata: { name: 'team-b' } });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await env.stop();
  tmp.remove();
});

describe('kubeconfig files against a server', () => {
  it('merges KUBECONFIG files: first file wins names and current-context; relative paths per file', async () => {
    // File A (first): the real cluster, its CA as a file next to it, and the current context.
    mkdirSync(join(tmp.dir, 'a'));
    writeFileSync(join(tmp.dir, 'a', 'ca.crt'), env.clientConfig.caData);
    writeFileSync(join(tmp.dir, 'a', 'token'), env.clientConfig.token);
    const a = join(tmp.dir, 'a', 'config');
    writeFileSync(
      a,
      `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: local
  cluster: { server: ${env.url}, certificate-authority: ca.crt }
users:
- name: admin
  user: { tokenFile: token }
contexts:
- name: dev
  context: { cluster: local, user: admin }
`,
    );
    // File B (second): redefines "local" (ignored: A has it) and adds a context of its own.
    const b = join(tmp.dir, 'b.yaml');
    writeFileSync(
      b,
      `apiVersion: v1
kind: Config
current-context: elsewhere
clusters:
- name: local
  cluster: { server: https://127.0.0.1:1 }
users:
- name: admin
  user: { token: not-the-token }
contexts:
- name: team-b
  context: { cluster: local, user: admin, namespace: team-b }
`,
    );
    const kubeconfigEnv = { KUBECONFIG: [a, join(tmp.dir, 'missing'), b].join(delimiter) };
    const dev = track(await Client.fromKubeconfig({ env: kubeconfigEnv }));
    expect(dev.server).toBe(env.url);
    expect(dev.namespace).toBe('default');
    await dev.api(ConfigMap).create({ metadata: { name: 'from-dev' } });

    // A context defined only in B, using A's cluster and user.
    const teamB = track(await Client.fromKubeconfig({ env: kubeconfigEnv, context: 'team-b' }));
    expect(teamB.namespace).toBe('team-b');
    const created = await teamB.api(ConfigMap).create({ metadata: { name: 'from-team-b' } });
    expect(created.metadata?.namespace).toBe('team-b');

    // Client.load follows KUBECONFIG too; the namespace option overrides the context's.
    const loaded = track(await Client.load({ env: kubeconfigEnv, namespace: 'team-b' }));
    expect((await loaded.api(ConfigMap).get('from-team-b')).metadata?.name).toBe('from-team-b');

    const err = await rejection<ConfigError>(Client.fromKubeconfig({ env: kubeconfigEnv, context: 'nope' }));
    expect(err.message).toContain('context "nope" not found');
    expect(err.message).toContain(a);
  });
});
