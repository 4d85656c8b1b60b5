/**
 * `env.clientConfigFor` and `env.kubeconfigFileFor`: the server authenticates each identity as
 * itself (asked through SelfSubjectReview, as `kubectl auth whoami` does), by the kubeloop client
 * and by kubectl reading the kubeconfig file.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client, Namespace, ServiceAccount } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from './index.js';

const run = promisify(execFile);

interface UserInfo {
  username?: string;
  groups?: string[];
}

async function whoami(config: ConstructorParameters<typeof Client>[0]): Promise<UserInfo> {
  const client = new Client(config);
  try {
    const review = await client.request<{ status?: { userInfo?: UserInfo } }>(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
    );
    return review.status?.userInfo ?? {};
  } finally {
    await client.close();
  }
}

let env: TestEnv;
let admin: Client;
beforeAll(async () => {
  env = await startTestEnv({ controllers: false });
  admin = new Client(env.clientConfig);
});
afterAll(async () => {
  await admin?.close();
  await env?.stop();
});

describe('env.clientConfigFor', () => {
  it('authenticates as a ServiceAccount it creates, with its namespace, by a TokenRequest token', async () => {
    const config = await env.clientConfigFor({ serviceAccount: 'robots/r2' });
    expect(config.username).toBe('system:serviceaccount:robots:r2');
    expect(config.namespace).toBe('robots');
    expect(config.certData).toBeUndefined();
    // Both were made for it.
    await admin.get(Namespace, 'robots');
    const sa = await admin.get(ServiceAccount, 'r2', { namespace: 'robots' });

    const me = await whoami(config);
    expect(me.username).toBe('system:serviceaccount:robots:r2');
    expect(me.groups).toEqual(
      expect.arrayContaining([
        'system:serviceaccounts',
        'system:serviceaccounts:robots',
        'system:authenticated',
      ]),
    );
    // An existing ServiceAccount is reused, not replaced: tokens of it stay valid.
    const again = await env.clientConfigFor({ serviceAccount: 'robots/r2' });
    expect((await admin.get(ServiceAccount, 'r2', { namespace: 'robots' })).metadata?.uid).toBe(
      sa.metadata?.uid,
    );
    expect((await whoami(config)).username).toBe('system:serviceaccount:robots:r2');
    expect((await whoami(again)).username).toBe('system:serviceaccount:robots:r2');
  });

  it('authenticates as a user in groups by a client certificate of the env CA', async () => {
    const config = await env.clientConfigFor({ user: 'alice', groups: ['developers', 'oncall'] });
    expect(config.token).toBeUndefined();
    const me = await whoami(config);
    expect(me.username).toBe('alice');
    expect(me.groups).toEqual(['developers', 'oncall', 'system:authenticated']);
  });

  it('writes the identity as a kubeconfig kubectl uses', async () => {
    for (const [identity, expected] of [
      [{ serviceAccount: 'default/builder' }, 'system:serviceaccount:default:builder'],
      [{ user: 'bob', groups: ['ops'] }, 'bob'],
    ] as const) {
      const file = await env.kubeconfigFileFor(identity);
      try {
        const { stdout } = await run(
          'kubectl',
          ['--kubeconfig', file.path, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
          { env: { ...process.env, HOME: file.dir } },
        );
        expect(stdout).toBe(expected);
      } finally {
        file.remove();
      }
    }
  });

  it('says what is wrong with a ServiceAccount reference', async () => {
    await expect(env.clientConfigFor({ serviceAccount: 'robot' })).rejects.toThrow(
      'serviceAccount must be "namespace/name", got "robot"',
    );
  });
});
