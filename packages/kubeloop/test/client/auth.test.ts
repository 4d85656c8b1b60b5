import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type ControlPlane,
  createCertificateAuthority,
  issueClientCertificate,
  startTestEnv,
} from '@kubeloop/server/testing';
import {
  type ApiError,
  Client,
  ConfigError,
  ConfigMap,
  inClusterConfig,
  isNetworkError,
  isUnauthorized,
  type NetworkError,
} from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureServer, rejection, tempDir } from './helpers.js';

let env: ControlPlane;
let tmp: { dir: string; remove: () => void };
const clients: Client[] = [];
const track = (c: Client) => {
  clients.push(c);
  return c;
};
const b64 = (s: string) => Buffer.from(s).toString('base64');

beforeAll(async () => {
  env = await startTestEnv();
  tmp = tempDir();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await env.stop();
  tmp.remove();
});

/** A kubeconfig for the test server with `user` as the user stanza (YAML lines, indented 4). */
function kubeconfig(
  user: string[],
  cluster: string[] = [`certificate-authority-data: ${b64(env.clientConfig.caData)}`],
) {
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: test',
    'clusters:',
    '- name: test',
    '  cluster:',
    `    server: ${env.url}`,
    ...cluster.map((l) => `    ${l}`),
    'users:',
    '- name: u',
    '  user:',
    ...user.map((l) => `    ${l}`),
    'contexts:',
    '- name: test',
    '  context: { cluster: test, user: u, namespace: default }',
    '',
  ].join('\n');
}

const canList = async (c: Client) => Array.isArray((await c.api(ConfigMap, 'default').list()).items);

describe('bearer tokens', () => {
  it('authenticates with a token, and a wrong one is a 401', async () => {
    expect(await canList(track(new Client(env.clientConfig)))).toBe(true);
    const wrong = track(new Client({ ...env.clientConfig, token: 'nope' }));
    const err = await rejection<ApiError>(canList(wrong));
    expect(isUnauthorized(err)).toBe(true);
  });

  it('re-reads a token file when it changes (rotation)', async () => {
    const file = join(tmp.dir, 'token');
    writeFileSync(file, `${env.clientConfig.token}\n`);
    const client = track(
      await Client.fromKubeconfig({ kubeconfig: kubeconfig([`tokenFile: ${file}`]), context: 'test' }),
    );
    expect(await canList(client)).toBe(true);
    // kubelet rotates projected tokens by swapping the file.
    writeFileSync(`${file}.new`, 'revoked-token');
    renameSync(`${file}.new`, file);
    expect(isUnauthorized(await rejection(canList(client)))).toBe(true);
    writeFileSync(`${file}.new`, env.clientConfig.token);
    renameSync(`${file}.new`, file);
    expect(await canList(client)).toBe(true);
  });

  it('names the token file when it is gone before the first read', async () => {
    const file = join(tmp.dir, 'missing-token');
    const err = await rejection<ConfigError>(
      Client.fromKubeconfig({ kubeconfig: kubeconfig([`tokenFile: ${file}`]) }),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.field).toBe('users["u"].user.tokenFile');
    expect(err.message).toContain(file);
  });
});

describe('client certificates', () => {
  it('authenticates with a certificate the cluster CA signed (data or files)', async () => {
    const { cert, key } = await env.issueClientCertificate('alice', ['system:masters']);
    const noToken = { server: env.url, caData: env.clientConfig.caData };
    // Without credentials the request is system:anonymous's, which RBAC refuses (kube's 403).
    expect((await rejection<ApiError>(canList(track(new Client(noToken))))).code).toBe(403);
    expect(await canList(track(new Client({ ...noToken, certData: cert, keyData: key })))).toBe(true);

    writeFileSync(join(tmp.dir, 'alice.crt'), cert);
    writeFileSync(join(tmp.dir, 'alice.key'), key);
    writeFileSync(join(tmp.dir, 'ca.crt'), env.clientConfig.caData);
    const path = join(tmp.dir, 'cert-kubeconfig');
    // Relative paths are relative to the kubeconfig's directory.
    writeFileSync(
      path,
      kubeconfig(
        ['client-certificate: alice.crt', 'client-key: ./alice.key'],
        ['certificate-authority: ca.crt'],
      ),
    );
    expect(await canList(track(await Client.fromKubeconfig({ path })))).toBe(true);
    const inline = kubeconfig([`client-certificate-data: ${b64(cert)}`, `client-key-data: ${b64(key)}`]);
    expect(await canList(track(await Client.fromKubeconfig({ kubeconfig: inline })))).toBe(true);
  });

  it('rejects a certificate from another CA (401) and a key that does not match (ConfigError)', async () => {
    const otherCa = await createCertificateAuthority('other-ca');
    const foreign = await issueClientCertificate(otherCa, 'mallory', ['system:masters']);
    const client = track(
      new Client({
        server: env.url,
        caData: env.clientConfig.caData,
        certData: foreign.cert,
        keyData: foreign.key,
      }),
    );
    expect(isUnauthorized(await rejection(canList(client)))).toBe(true);
    // A token still authenticates the connection, as with kube-apiserver's union of authenticators.
    const withToken = track(
      new Client({ ...env.clientConfig, certData: foreign.cert, keyData: foreign.key }),
    );
    expect(await canList(withToken)).toBe(true);

    const mine = await env.issueClientCertificate('bob');
    const err = await rejection<ConfigError>(
      Client.fromKubeconfig({
        kubeconfig: kubeconfig([
          `client-certificate-data: ${b64(mine.cert)}`,
          `client-key-data: ${b64(foreign.key)}`,
        ]),
      }),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.field).toBe('users["u"].user.client-key-data');
    expect(err.message).toContain('does not match');
  });
});

describe('TLS settings', () => {
  it('verifies the server against the CA, tls-server-name, or not at all', async () => {
    const noCa = track(new Client({ server: env.url, token: env.clientConfig.token }));
    const untrusted = await rejection<NetworkError>(canList(noCa));
    expect(isNetworkError(untrusted)).toBe(true);
    expect(untrusted.kind).toBe('tls');

    const insecure = track(
      await Client.fromKubeconfig({
        kubeconfig: kubeconfig([`token: ${env.clientConfig.token}`], ['insecure-skip-tls-verify: true']),
      }),
    );
    expect(await canList(insecure)).toBe(true);

    // The serving certificate names localhost and 127.0.0.1, not api.example.
    const named = track(new Client({ ...env.clientConfig, tlsServerName: 'localhost' }));
    expect(await canList(named)).toBe(true);
    const wrongName = track(new Client({ ...env.clientConfig, tlsServerName: 'api.example' }));
    const mismatch = await rejection<NetworkError>(canList(wrongName));
    expect(isNetworkError(mismatch) && mismatch.kind).toBe('tls');
  });
});

describe('exec credential plugins', () => {
  /**
   * A plugin that prints the token (or certificate) from files, counts its runs, records the
   * KUBERNETES_EXEC_INFO it got, and fails when asked to.
   */
  function plugin(name: string): { script: string; dir: string; runs: () => number; info: () => unknown } {
    const dir = join(tmp.dir, name);
    const script = join(dir, 'plugin.mjs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      script,
      `#!/usr/bin/env node
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
const dir = ${JSON.stringify(dir)};
appendFileSync(dir + '/runs', 'x');
writeFileSync(dir + '/info.json', process.env.KUBERNETES_EXEC_INFO ?? '');
if (existsSync(dir + '/fail')) { process.stderr.write('plugin says no'); process.exit(3); }
const status = {};
if (existsSync(dir + '/token')) status.token = readFileSync(dir + '/token', 'utf8');
if (existsSync(dir + '/cert')) { status.clientCertificateData = readFileSync(dir + '/cert', 'utf8'); status.clientKeyData = readFileSync(dir + '/key', 'utf8'); }
if (existsSync(dir + '/expires')) status.expirationTimestamp = readFileSync(dir + '/expires', 'utf8');
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));
`,
    );
    chmodSync(script, 0o755);
    return {
      script,
      dir,
      runs: () => {
        try {
          return readFileSync(join(dir, 'runs'), 'utf8').length;
        } catch {
          return 0;
        }
      },
      info: () => JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8')),
    };
  }
  const execUser = (script: string, extra: string[] = []) => [
    'exec:',
    '  apiVersion: client.authentication.k8s.io/v1',
    `  command: ${process.execPath}`,
    `  args: [${JSON.stringify(script)}]`,
    '  interactiveMode: Never',
    ...extra.map((l) => `  ${l}`),
  ];

  it('uses the token until it expires, and runs the plugin again on a 401', async () => {
    const p = plugin('exec-token');
    writeFileSync(join(p.dir, 'token'), env.clientConfig.token);
    writeFileSync(join(p.dir, 'expires'), new Date(Date.now() + 3600_000).toISOString());
    const client = track(
      await Client.fromKubeconfig({
        kubeconfig: kubeconfig(execUser(p.script, ['provideClusterInfo: true'])),
      }),
    );
    expect(await canList(client)).toBe(true);
    expect(await canList(client)).toBe(true);
    expect(p.runs()).toBe(1);
    expect(p.info()).toMatchObject({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: {
        interactive: false,
        cluster: { server: env.url, 'certificate-authority-data': b64(env.clientConfig.caData) },
      },
    });

    // The server stops accepting the cached token: one 401, a new run, and the request succeeds.
    writeFileSync(join(p.dir, 'token'), 'revoked');
    const revoked = track(await Client.fromKubeconfig({ kubeconfig: kubeconfig(execUser(p.script)) }));
    expect(isUnauthorized(await rejection(canList(revoked)))).toBe(true);
    const runsBefore = p.runs();
    writeFileSync(join(p.dir, 'token'), env.clientConfig.token);
    expect(await canList(revoked)).toBe(true);
    expect(p.runs()).toBe(runsBefore + 1);

    // Expired credentials are not reused.
    writeFileSync(join(p.dir, 'expires'), new Date(Date.now() - 1000).toISOString());
    const expiring = track(await Client.fromKubeconfig({ kubeconfig: kubeconfig(execUser(p.script)) }));
    const before = p.runs();
    await canList(expiring);
    await canList(expiring);
    expect(p.runs()).toBe(before + 2);
  });

  it('uses a client certificate from the plugin', async () => {
    const p = plugin('exec-cert');
    const { cert, key } = await env.issueClientCertificate('exec-user', ['system:masters']);
    writeFileSync(join(p.dir, 'cert'), cert);
    writeFileSync(join(p.dir, 'key'), key);
    const client = track(await Client.fromKubeconfig({ kubeconfig: kubeconfig(execUser(p.script)) }));
    expect(await canList(client)).toBe(true);
  });

  it('reports a failing or missing plugin with the kubeconfig field and its stderr', async () => {
    const p = plugin('exec-fail');
    writeFileSync(join(p.dir, 'fail'), '');
    const client = track(await Client.fromKubeconfig({ kubeconfig: kubeconfig(execUser(p.script)) }));
    const err = await rejection<ConfigError>(canList(client));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.field).toBe('users["u"].user.exec');
    expect(err.message).toContain('exited with code 3: plugin says no');

    const missing = track(
      await Client.fromKubeconfig({
        kubeconfig: kubeconfig([
          'exec:',
          '  apiVersion: client.authentication.k8s.io/v1',
          '  command: kubeloop-no-such-plugin',
          '  installHint: install it with brew',
        ]),
      }),
    );
    const notFound = await rejection<ConfigError>(canList(missing));
    expect(notFound.message).toContain('executable kubeloop-no-such-plugin not found');
    expect(notFound.message).toContain('install it with brew');

    const empty = plugin('exec-empty');
    const nothing = track(await Client.fromKubeconfig({ kubeconfig: kubeconfig(execUser(empty.script)) }));
    expect((await rejection(canList(nothing))).message).toContain("didn't return a token or cert/key pair");
  });
});

describe('in-cluster configuration', () => {
  it('reads the service account files and KUBERNETES_SERVICE_HOST/PORT', async () => {
    const sa = join(tmp.dir, 'serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), env.clientConfig.token);
    writeFileSync(join(sa, 'ca.crt'), env.clientConfig.caData);
    writeFileSync(join(sa, 'namespace'), 'kube-system\n');
    const url = new URL(env.url);
    const podEnv = { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port };

    const client = track(await Client.inCluster({ env: podEnv, serviceAccountDir: sa }));
    expect(client.namespace).toBe('kube-system');
    expect(client.server).toBe(env.url);
    expect(await canList(client)).toBe(true);
    // Client.load picks in-cluster when KUBECONFIG is not set and the pod variables are.
    const loaded = track(await Client.load({ env: podEnv, serviceAccountDir: sa }));
    expect(loaded.server).toBe(env.url);

    const config = await inClusterConfig({
      env: { ...podEnv, POD_NAMESPACE: 'from-env' },
      serviceAccountDir: sa,
    });
    expect(config).toMatchObject({ namespace: 'from-env', tokenFile: join(sa, 'token') });
    // The token is a tokenFile: a rotated token is picked up.
    writeFileSync(join(sa, 'token'), 'rotated-out');
    expect(isUnauthorized(await rejection(canList(client)))).toBe(true);
  });

  it('names what is missing', async () => {
    const noEnv = await rejection<ConfigError>(inClusterConfig({ env: {} }));
    expect(noEnv).toBeInstanceOf(ConfigError);
    expect(noEnv.field).toBe('KUBERNETES_SERVICE_HOST');
    expect(noEnv.message).toContain('KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
    const empty = join(tmp.dir, 'empty-sa');
    mkdirSync(empty, { recursive: true });
    const noToken = await rejection<ConfigError>(
      inClusterConfig({
        env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
        serviceAccountDir: empty,
      }),
    );
    expect(noToken.file).toBe(join(empty, 'token'));
    expect(noToken.message).toContain('no such file');
  });
});

describe('headers', () => {
  it('sends basic auth, impersonation and the User-Agent', async () => {
    const server = await captureServer();
    try {
      const basic = track(new Client({ server: server.url, username: 'ann', password: 's3cret' }));
      await basic.api(ConfigMap, 'default').list();
      const imp = track(
        new Client(
          { server: server.url, token: 't', impersonate: { user: 'bob', groups: ['g1', 'g2'], uid: 'u-1' } },
          { userAgent: 'my-operator/1.0' },
        ),
      );
      await imp.api(ConfigMap, 'default').get('x');
      const [first, second] = server.requests;
      expect(first!.headers.authorization).toBe(`Basic ${b64('ann:s3cret')}`);
      expect(first!.headers['user-agent']).toMatch(/^kubeloop\/\d+\.\d+\.\d+ \(\w+\/\w+\) node\/v\d+/);
      expect(first!.headers.accept).toBe('application/json');
      expect(second!.headers.authorization).toBe('Bearer t');
      expect(second!.headers['impersonate-user']).toBe('bob');
      expect(second!.headers['impersonate-group']).toBe('g1, g2');
      expect(second!.headers['impersonate-uid']).toBe('u-1');
      expect(second!.headers['user-agent']).toBe('my-operator/1.0');
    } finally {
      await server.close();
    }
  });
});
