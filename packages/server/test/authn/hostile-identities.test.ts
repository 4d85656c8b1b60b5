/**
 * Identities the server must not believe, end to end: forged service account tokens (no
 * signature, `alg: none`, HS256 keyed with the public key, another key, a tampered payload),
 * client certificates of another CA (also one whose issuer copies the cluster CA's subject), and
 * malformed `Authorization` headers. Each gets 401, from a raw HTTPS client and from kubectl.
 */
import { createHmac, createSign, generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCertificateAuthority,
  type HttpResult,
  httpClient,
  issueClientCertificate,
  type KeyPair,
  type KubectlEnv,
  startKubectlEnv,
} from '../../src/testing/index.js';
import { decodeJwt, KUBECTL_401, whoami } from './support.js';

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;
/** A genuine token of `default/default`, the material of the forgeries. */
let genuine: string;

beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
  genuine = (await env.ok(['create', 'token', 'default'])).trim();
});
afterAll(async () => {
  http?.close();
  await env?.stop();
});

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** kubectl with `--token`: refused as kube-apiserver refuses it. */
async function kubectlRefuses(token: string): Promise<void> {
  const r = await env.run(['--token', token, 'get', 'namespaces']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(KUBECTL_401);
}

function expectUnauthorized(r: HttpResult): void {
  expect(r.status, r.text).toBe(401);
  expect(r.json).toEqual({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Unauthorized',
    reason: 'Unauthorized',
    code: 401,
  });
}

describe('forged service account tokens', () => {
  const forgeries: [string, () => Promise<string> | string][] = [
    ['no signature', () => genuine.split('.').slice(0, 2).join('.')],
    ['an empty signature', () => `${genuine.split('.').slice(0, 2).join('.')}.`],
    [
      'alg: none',
      () => {
        const { header, claims } = decodeJwt(genuine);
        return `${b64({ ...header, alg: 'none' })}.${b64(claims)}.`;
      },
    ],
    [
      'HS256 keyed with the published public key',
      async () => {
        const jwk = (await http.get('/openid/v1/jwks')).json.keys[0];
        const { header, claims } = decodeJwt(genuine);
        const input = `${b64({ ...header, alg: 'HS256' })}.${b64(claims)}`;
        return `${input}.${createHmac('sha256', JSON.stringify(jwk)).update(input).digest('base64url')}`;
      },
    ],
    [
      'RS256 signed by another key under the same kid',
      () => {
        const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
        const { header, claims } = decodeJwt(genuine);
        const input = `${b64(header)}.${b64(claims)}`;
        return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')}`;
      },
    ],
    [
      'a payload changed under a genuine signature',
      () => {
        const [h, , s] = genuine.split('.');
        const { claims } = decodeJwt(genuine);
        const exp = claims.exp + 365 * 24 * 3600;
        return `${h}.${b64({ ...claims, exp })}.${s}`;
      },
    ],
    ['not a JWT at all', () => 'definitely-not-a-token'],
  ];

  it.each(forgeries)('%s: 401', async (_, forge) => {
    const token = await forge();
    expectUnauthorized(await whoami(http, token));
    await kubectlRefuses(token);
  });

  it('the genuine token is accepted (the forgeries are refused for their forgery only)', async () => {
    expect((await whoami(http, genuine)).status).toBe(201);
  });
});

describe('client certificates', () => {
  let rogueCa: KeyPair;

  beforeAll(async () => {
    // Same subject as the cluster CA (`CN=kubeloop-ca`): only the signature can tell them apart.
    rogueCa = await createCertificateAuthority();
  });

  /** A SelfSubjectReview over a connection presenting `cert`, with `token` if given. */
  const withCertificate = (cert: KeyPair, token?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(env.cp.url);
      const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          ca: env.cp.clientConfig.caData,
          cert: cert.cert,
          key: cert.key,
          agent: false,
          headers: {
            'Content-Type': 'application/json',
            ...(token && { Authorization: `Bearer ${token}` }),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('one the cluster CA signed authenticates as its CN (the control)', async () => {
    const cert = await env.cp.issueClientCertificate('alice', ['devs']);
    const r = await withCertificate(cert);
    expect(r.status).toBe(201);
    expect(JSON.parse(r.body).status.userInfo.username).toBe('alice');
  });

  it('one of another CA whose issuer copies the cluster CA’s subject: 401, also for kubectl', async () => {
    const forged = await issueClientCertificate(rogueCa, 'kubeloop-admin', ['system:masters']);
    const r = await withCertificate(forged);
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body).reason).toBe('Unauthorized');

    const kubeconfig = join(env.kubeconfigPath, '..', 'rogue.kubeconfig');
    const b = (s: string) => Buffer.from(s).toString('base64');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: c',
        '  cluster:',
        `    server: ${env.cp.url}`,
        `    certificate-authority-data: ${b(env.cp.clientConfig.caData)}`,
        'users:',
        '- name: u',
        '  user:',
        `    client-certificate-data: ${b(forged.cert)}`,
        `    client-key-data: ${b(forged.key)}`,
        'contexts:',
        '- name: c',
        '  context: {cluster: c, user: u}',
        'current-context: c',
        '',
      ].join('\n'),
    );
    const k = await env.run(['--kubeconfig', kubeconfig, 'get', 'namespaces']);
    expect(k.code).toBe(1);
    expect(k.stderr).toMatch(KUBECTL_401);
  });

  it('a rogue certificate does not hide a valid token on the same request', async () => {
    const forged = await issueClientCertificate(rogueCa, 'mallory', ['system:masters']);
    const r = await withCertificate(forged, genuine);
    expect(r.status).toBe(201);
    expect(JSON.parse(r.body).status.userInfo.username).toBe('system:serviceaccount:default:default');
  });
});

describe('malformed Authorization headers', () => {
  const as = (authorization: string) =>
    http.get('/api/v1/namespaces', { token: null, headers: { Authorization: authorization } });

  it.each([
    ['a latin-1 token', 'Bearer t\u00f6k\u00e9n'],
    ['a huge token (within the header limit)', `Bearer ${'a'.repeat(900_000)}`],
  ])('%s: 401', async (_, header) => {
    expectUnauthorized(await as(header));
  });

  // A header the bearer token authenticator does not read carries no token: the request is
  // system:anonymous's (kube-apiserver's anonymous authenticator), whom RBAC refuses.
  const expectAnonymous = (r: HttpResult) => {
    expect(r.status, r.text).toBe(403);
    expect(r.json.message).toBe(
      'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
    );
  };

  it.each([
    ['Bearer alone', 'Bearer'],
    ['Bearer and a space', 'Bearer '],
    ['Basic credentials', `Basic ${Buffer.from('admin:admin').toString('base64')}`],
    ['the token without a scheme', 'TOKEN'],
  ])('%s: no credentials, anonymous', async (_, header) => {
    expectAnonymous(await as(header));
  });

  it('two spaces before a genuine token: no token (anonymous), with the apiserver’s warning', async () => {
    const r = await as(`Bearer  ${genuine}`);
    expectAnonymous(r);
    expect(r.headers.warning).toContain('extra space before the bearer token');
  });

  /**
   * A request written byte for byte on a TLS connection; the status line of the answer. The
   * connection is not half-closed after the request, as an HTTP client's is not: the server ends it
   * (`Connection: close`). (Half-closed, the server's end of the connection could be ended by the
   * client's before its parser refused the request, leaving no connection to answer on.)
   */
  const raw = (head: Buffer) =>
    new Promise<string>((resolve, reject) => {
      const url = new URL(env.cp.url);
      const socket = connect(
        { host: url.hostname, port: Number(url.port), ca: env.cp.clientConfig.caData },
        () => socket.write(head),
      );
      let text = '';
      socket.on('data', (c: Buffer) => {
        text += c.toString('latin1');
      });
      socket.on('end', () => resolve(text.split('\r\n')[0] ?? ''));
      // A server that answers before the whole request is sent (431) may reset the connection
      // while the client still writes: what it answered counts.
      socket.on('error', (err) => (text ? resolve(text.split('\r\n')[0] ?? '') : reject(err)));
    });

  it('UTF-8 bytes in the header: 401', async () => {
    const head = Buffer.concat([
      Buffer.from(
        'GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ',
      ),
      Buffer.from('тóкен😀', 'utf8'),
      Buffer.from('\r\n\r\n'),
    ]);
    expect(await raw(head)).toBe('HTTP/1.1 401 Unauthorized');
  });

  it('a header over the server’s 1 MiB limit: 431, as Go’s server answers', async () => {
    const head = Buffer.from(
      `GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${'a'.repeat(1_100_000)}\r\n\r\n`,
    );
    expect(await raw(head)).toBe('HTTP/1.1 431 Request Header Fields Too Large');
  });
});
