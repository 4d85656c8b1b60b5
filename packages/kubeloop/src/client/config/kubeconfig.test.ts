import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import {
  kubeconfigPaths,
  loadKubeconfig,
  mergeKubeconfigs,
  parseKubeconfig,
  readKubeconfig,
  resolveKubeconfig,
} from './kubeconfig.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kubeloop-kubeconfig-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string) => {
  const p = join(dir, name);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, text);
  return p;
};

const configA = `
apiVersion: v1
kind: Config
current-context: a
clusters:
- name: shared
  cluster: { server: https://a.example:6443 }
- name: only-a
  cluster: { server: https://only-a.example }
users:
- name: shared
  user: { token: token-a }
contexts:
- name: a
  context: { cluster: shared, user: shared, namespace: ns-a }
- name: shared-ctx
  context: { cluster: shared, user: shared }
`;
const configB = `
apiVersion: v1
kind: Config
current-context: b
clusters:
- name: shared
  cluster: { server: https://b.example:6443, insecure-skip-tls-verify: true }
- name: only-b
  cluster: { server: https://only-b.example }
users:
- name: shared
  user: { token: token-b }
- name: only-b
  user: { username: bob, password: secret }
contexts:
- name: b
  context: { cluster: only-b, user: only-b }
- name: shared-ctx
  context: { cluster: only-b, user: only-b, namespace: from-b }
`;

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<ConfigError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('KUBECONFIG merge rules', () => {
  it('lets the first file win each name, whole, and the first current-context', async () => {
    const a = write('a.yaml', configA);
    const b = write('b.yaml', configB);
    const kc = await readKubeconfig({ env: { KUBECONFIG: [a, b].join(delimiter) } });
    expect(kc.files).toEqual([a, b]);
    expect(kc.currentContext).toEqual({ name: 'a', file: a });
    // `shared` comes from a.yaml: b.yaml's insecure-skip-tls-verify is not merged into it.
    expect(kc.clusters.get('shared')?.value).toEqual({ server: 'https://a.example:6443' });
    expect(kc.clusters.get('shared')?.file).toBe(a);
    expect(kc.clusters.get('only-b')?.file).toBe(b);
    expect(kc.users.get('shared')?.value).toEqual({ token: 'token-a' });
    expect(kc.contexts.get('shared-ctx')?.value).toEqual({ cluster: 'shared', user: 'shared' });

    const current = await resolveKubeconfig(kc);
    expect(current).toMatchObject({ server: 'https://a.example:6443', token: 'token-a', namespace: 'ns-a' });
    const chosen = await resolveKubeconfig(kc, { context: 'b', namespace: 'override' });
    expect(chosen).toMatchObject({
      server: 'https://only-b.example',
      username: 'bob',
      password: 'secret',
      namespace: 'override',
    });
    expect(chosen.token).toBeUndefined();
  });

  it('takes current-context from a later file when earlier ones do not set it', async () => {
    const a = write('a.yaml', configA.replace('current-context: a', ''));
    const b = write('b.yaml', configB);
    const kc = await readKubeconfig({ env: { KUBECONFIG: `${a}${delimiter}${b}` } });
    expect(kc.currentContext).toEqual({ name: 'b', file: b });
    expect((await resolveKubeconfig(kc)).namespace).toBe('default');
  });

  it('skips missing and empty entries, reads each file once, and fails when none exists', async () => {
    const a = write('a.yaml', configA);
    const missing = join(dir, 'missing.yaml');
    expect(kubeconfigPaths({ KUBECONFIG: `${missing}${delimiter}${delimiter}${a}${delimiter}${a}` })).toEqual(
      [missing, a],
    );
    const kc = await readKubeconfig({ env: { KUBECONFIG: `${missing}${delimiter}${a}` } });
    expect(kc.files).toEqual([a]);
    const err = await rejection(readKubeconfig({ env: { KUBECONFIG: missing } }));
    expect(err.field).toBe('KUBECONFIG');
    expect(err.message).toContain(missing);
  });

  it('defaults to ~/.kube/config and requires an explicit path to exist', async () => {
    expect(kubeconfigPaths({ HOME: '/home/someone' })).toEqual(['/home/someone/.kube/config']);
    write('.kube/config', configA);
    const kc = await readKubeconfig({ env: { HOME: dir } });
    expect(kc.files).toEqual([join(dir, '.kube/config')]);
    const explicit = join(dir, 'nope.yaml');
    const err = await rejection(readKubeconfig({ path: explicit, env: { KUBECONFIG: kc.files[0] } }));
    expect(err.file).toBe(explicit);
    expect(err.message).toContain('no such file');
  });

  it('keeps the last entry of a name repeated inside one file', () => {
    const kc = parseKubeconfig(
      'clusters:\n- name: c\n  cluster: { server: https://one }\n- name: c\n  cluster: { server: https://two }\n',
    );
    expect(kc.clusters.get('c')?.value.server).toBe('https://two');
    expect(mergeKubeconfigs([kc]).clusters.get('c')?.value.server).toBe('https://two');
  });
});

describe('kubeconfig errors name the file and the field', () => {
  const base = (user: string, cluster = 'server: https://x.example') => `
current-context: c
clusters:
- name: cl
  cluster:
    ${cluster}
users:
- name: u
  user:
    ${user}
contexts:
- name: c
  context: { cluster: cl, user: u }
`;

  it.each([
    ['clusters: {}', 'clusters', 'must be a list'],
    ['clusters:\n- cluster: {}', 'clusters[0].name', 'non-empty string'],
    ['users:\n- name: u\n  user: 3', 'users[0].user', 'mapping'],
    ['current-context: [1]', 'current-context', 'must be a string'],
    ['kind: Pod', 'kind', 'Config'],
  ])('%s', (text, field, problem) => {
    const file = join(dir, 'bad.yaml');
    try {
      parseKubeconfig(text, file);
      throw new Error('no error');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).file).toBe(file);
      expect((err as ConfigError).field).toBe(field);
      expect((err as ConfigError).message).toContain(problem);
    }
  });

  it('reports YAML syntax errors with the file', async () => {
    const file = write('broken.yaml', 'clusters: [\n');
    const err = await rejection(readKubeconfig({ path: file }));
    expect(err.file).toBe(file);
    expect(err.message).toContain('not valid YAML');
  });

  const withContext = (current: string, context: string) => `
current-context: ${current}
clusters:
- name: cl
  cluster: { server: https://x.example }
users:
- name: u
  user: { token: t }
contexts:
- name: c
  context: ${context}
`;

  it.each([
    ['nope', '{ cluster: cl, user: u }', 'current-context', 'context "nope" not found'],
    ['c', '{ user: u }', 'contexts["c"].context.cluster', 'no cluster given'],
    ['c', '{ cluster: missing, user: u }', 'contexts["c"].context.cluster', 'cluster "missing" not found'],
    ['c', '{ cluster: cl, user: missing }', 'contexts["c"].context.user', 'user "missing" not found'],
    [
      'c',
      '{ cluster: cl, user: u, namespace: Bad_NS }',
      'contexts["c"].context.namespace',
      'not a valid namespace',
    ],
  ])('context %s %s', async (current, context, field, problem) => {
    const file = write('ctx.yaml', withContext(current, context));
    const err = await rejection(loadKubeconfig({ path: file }));
    expect(err.field).toBe(field);
    expect(err.message).toContain(problem);
    expect(err.file).toBe(file);
  });

  it.each([
    ['token: a\n    username: b', 'users["u"].user', 'more than one authentication method'],
    ['tokenFile: ./missing-token', 'users["u"].user.tokenFile', 'no such file'],
    ['client-certificate-data: Zm9v', 'users["u"].user.client-certificate-data', 'client-key'],
    ['client-key: key.pem', 'users["u"].user.client-key', 'without client-certificate'],
    [
      'client-certificate-data: "@@@"\n    client-key-data: Zm9v',
      'users["u"].user.client-certificate-data',
      'not valid base64',
    ],
    [
      'client-certificate: ./c.pem\n    client-certificate-data: Zm9v\n    client-key-data: Zm9v',
      'users["u"].user.client-certificate',
      'both given',
    ],
    ['auth-provider: { name: oidc }', 'users["u"].user.auth-provider', 'not supported'],
    [
      'exec: { apiVersion: client.authentication.k8s.io/v1 }',
      'users["u"].user.exec.command',
      'command must be given',
    ],
    ['exec: { command: x }', 'users["u"].user.exec.apiVersion', 'apiVersion must be given'],
    [
      'exec: { command: x, apiVersion: client.authentication.k8s.io/v1alpha1 }',
      'users["u"].user.exec.apiVersion',
      'not supported',
    ],
    [
      'exec: { command: x, apiVersion: client.authentication.k8s.io/v1, env: [{ value: v }] }',
      'users["u"].user.exec.env[0].name',
      'name must be given',
    ],
    [
      'exec: { command: x, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Sometimes }',
      'users["u"].user.exec.interactiveMode',
      'not one of',
    ],
    ['as-groups: [g]', 'users["u"].user.as', 'need a user to impersonate'],
  ])('user: %s', async (user, field, problem) => {
    const file = write('user.yaml', base(user));
    const err = await rejection(loadKubeconfig({ path: file }));
    expect(err.file).toBe(file);
    expect(err.field).toBe(field);
    expect(err.message).toContain(problem);
  });

  it.each([
    ['server: ""', 'clusters["cl"].cluster.server', 'no server'],
    ['server: not a url', 'clusters["cl"].cluster.server', 'not a URL'],
    ['server: ftp://x', 'clusters["cl"].cluster.server', 'https://'],
    [
      'server: https://x\n    proxy-url: http://proxy:3128',
      'clusters["cl"].cluster.proxy-url',
      'not supported',
    ],
    [
      'server: https://x\n    certificate-authority: ca.pem\n    certificate-authority-data: Zm9v',
      'clusters["cl"].cluster.certificate-authority',
      'both given',
    ],
    [
      'server: https://x\n    certificate-authority: ./no-ca.pem',
      'clusters["cl"].cluster.certificate-authority',
      'no such file',
    ],
    [
      'server: https://x\n    certificate-authority-data: Zm9vYmFy',
      'clusters["cl"].cluster.certificate-authority-data',
      'does not contain a PEM certificate',
    ],
    [
      'server: https://x\n    insecure-skip-tls-verify: "yes"',
      'clusters["cl"].cluster.insecure-skip-tls-verify',
      'true or false',
    ],
  ])('cluster: %s', async (cluster, field, problem) => {
    const file = write('cluster.yaml', base('token: t', cluster));
    const err = await rejection(loadKubeconfig({ path: file }));
    expect(err.file).toBe(file);
    expect(err.field).toBe(field);
    expect(err.message).toContain(problem);
  });
});

describe('kubeconfig resolution', () => {
  it('resolves relative paths against the kubeconfig directory; PATH commands stay bare', async () => {
    write('sub/token', 'file-token\n');
    const file = write(
      'sub/config',
      `current-context: c
clusters:
- name: cl
  cluster: { server: https://x.example/, tls-server-name: api.internal }
users:
- name: u
  user:
    tokenFile: token
    as: alice
    as-groups: [devs]
    as-user-extra: { team: [a] }
- name: e
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/plugin
      args: [--flag]
      env: [{ name: A, value: b }]
      interactiveMode: Never
      provideClusterInfo: true
- name: p
  user:
    exec: { apiVersion: client.authentication.k8s.io/v1, command: aws }
contexts:
- name: c
  context: { cluster: cl, user: u }
- name: e
  context: { cluster: cl, user: e }
- name: p
  context: { cluster: cl, user: p }
`,
    );
    const kc = await readKubeconfig({ path: file });
    const c = await resolveKubeconfig(kc);
    expect(c.server).toBe('https://x.example');
    expect(c.tlsServerName).toBe('api.internal');
    expect(c.tokenFile).toBe(join(dir, 'sub/token'));
    expect(c.origins?.tokenFile).toEqual({ file, field: 'users["u"].user.tokenFile' });
    expect(c.impersonate).toEqual({ user: 'alice', groups: ['devs'], extra: { team: ['a'] } });
    const e = await resolveKubeconfig(kc, { context: 'e' });
    expect(e.exec).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1',
      command: join(dir, 'sub/bin/plugin'),
      args: ['--flag'],
      env: [{ name: 'A', value: 'b' }],
      interactiveMode: 'Never',
      provideClusterInfo: true,
    });
    expect((await resolveKubeconfig(kc, { context: 'p' })).exec?.command).toBe('aws');
  });

  it('accepts inline YAML and reports a missing current-context', async () => {
    const c = await loadKubeconfig({
      kubeconfig:
        'clusters:\n- name: c\n  cluster: { server: http://127.0.0.1:8080 }\ncontexts:\n- name: c\n  context: { cluster: c }\n',
      context: 'c',
    });
    expect(c).toMatchObject({ server: 'http://127.0.0.1:8080', namespace: 'default' });
    const err = await rejection(loadKubeconfig({ kubeconfig: 'clusters: []' }));
    expect(err.field).toBe('current-context');
    expect(err.message).toContain('no context chosen');
  });
});
