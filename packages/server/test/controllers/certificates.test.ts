import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CertificateSigningRequest, Client } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBasicPolicy } from '../auth/support.js';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;
const dir = mkdtempSync(join(tmpdir(), 'kubeloop-csr-'));

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 1 } });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh P-256 key and a PKCS#10 request for `subject`, made by openssl as a user would. */
function request(name: string, subject: string): { key: string; csr: string } {
  const keyPath = join(dir, `${name}.key`);
  const csr = execFileSync('openssl', [
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyPath,
    '-subj',
    subject,
  ]).toString();
  return { key: readFileSync(keyPath, 'utf8'), csr };
}

const csrObject = (name: string, csr: string, signerName: string, usages = ['client auth']) => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name },
  spec: { request: Buffer.from(csr).toString('base64'), signerName, usages, expirationSeconds: 3600 },
});

describe('CSR approval and signing', () => {
  it('kubectl certificate approve, then the signer issues a client certificate the server accepts', async () => {
    const { key, csr } = request('jane', '/O=developers/CN=jane');
    await k.ok(['create', '-f', '-'], {
      input: JSON.stringify(csrObject('jane', csr, 'kubernetes.io/kube-apiserver-client')),
    });
    expect(await k.ok(['get', 'csr', 'jane', '-o', 'jsonpath={.status.certificate}'])).toBe('');
    await k.ok(['certificate', 'approve', 'jane']);
    const approved = await client.api(CertificateSigningRequest).get('jane');
    expect(approved.status?.conditions?.[0]).toMatchObject({
      type: 'Approved',
      status: 'True',
      reason: 'KubectlApprove',
    });
    const b64 = await eventually(
      async () => (await client.api(CertificateSigningRequest).get('jane')).status?.certificate,
    );
    const cert = Buffer.from(b64, 'base64').toString('utf8');
    const text = execFileSync('openssl', ['x509', '-noout', '-subject', '-ext', 'extendedKeyUsage'], {
      input: cert,
    }).toString();
    expect(text).toMatch(/subject=O\s*=\s*developers, CN\s*=\s*jane/);
    expect(text).toContain('TLS Web Client Authentication');
    // The certificate authenticates against the server as jane in developers.
    const kubeconfig = join(dir, 'jane.kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: {
              server: k.cp.url,
              'certificate-authority-data': Buffer.from(k.cp.clientConfig.caData).toString('base64'),
            },
          },
        ],
        users: [
          {
            name: 'jane',
            user: {
              'client-certificate-data': Buffer.from(cert).toString('base64'),
              'client-key-data': Buffer.from(key).toString('base64'),
            },
          },
        ],
        contexts: [{ name: 'jane', context: { cluster: 'c', user: 'jane' } }],
        'current-context': 'jane',
      }),
    );
    // jane may ask who she is as kube's bootstrap system:basic-user lets every authenticated user.
    await ensureBasicPolicy(k);
    // A later --kubeconfig wins over the one the helper passes.
    const whoami = await k.ok([
      '--kubeconfig',
      kubeconfig,
      'auth',
      'whoami',
      '-o',
      'jsonpath={.status.userInfo.username} {.status.userInfo.groups}',
    ]);
    expect(whoami).toBe('jane ["developers","system:authenticated"]');
  });

  it('does not sign for kubernetes.io/legacy-unknown, nor a denied request', async () => {
    const { csr } = request('legacy', '/CN=legacy');
    await k.ok(['create', '-f', '-'], {
      input: JSON.stringify(csrObject('legacy', csr, 'kubernetes.io/legacy-unknown')),
    });
    await k.ok(['certificate', 'approve', 'legacy']);
    const { csr: csr2 } = request('denied', '/CN=denied');
    await k.ok(['create', '-f', '-'], {
      input: JSON.stringify(csrObject('denied', csr2, 'kubernetes.io/kube-apiserver-client')),
    });
    await k.ok(['certificate', 'deny', 'denied']);
    // A third request signed after both shows the signer has seen them.
    const { csr: csr3 } = request('later', '/CN=later');
    await k.ok(['create', '-f', '-'], {
      input: JSON.stringify(csrObject('later', csr3, 'kubernetes.io/kube-apiserver-client')),
    });
    await k.ok(['certificate', 'approve', 'later']);
    await eventually(
      async () => (await client.api(CertificateSigningRequest).get('later')).status?.certificate,
    );
    expect((await client.api(CertificateSigningRequest).get('legacy')).status?.certificate).toBeUndefined();
    const denied = await client.api(CertificateSigningRequest).get('denied');
    expect(denied.status?.certificate).toBeUndefined();
    expect(denied.status?.conditions?.[0]).toMatchObject({ type: 'Denied', status: 'True' });
    expect((await client.api(CertificateSigningRequest).get('legacy')).status?.conditions?.[0]).toMatchObject(
      {
        type: 'Approved',
        status: 'True',
      },
    );
  });

  it('fails a kubelet client request that does not name a node', async () => {
    const { csr } = request('notnode', '/O=system:nodes/CN=someone');
    await k.ok(['create', '-f', '-'], {
      input: JSON.stringify(
        csrObject('notnode', csr, 'kubernetes.io/kube-apiserver-client-kubelet', [
          'digital signature',
          'client auth',
        ]),
      ),
    });
    await k.ok(['certificate', 'approve', 'notnode']);
    const failed = await eventually(async () =>
      (await client.api(CertificateSigningRequest).get('notnode')).status?.conditions?.find(
        (c) => c.type === 'Failed',
      ),
    );
    expect(failed).toMatchObject({ status: 'True', reason: 'SignerValidationFailure' });
    const { csr: ok } = request('node1', '/O=system:nodes/CN=system:node:node1');
    await k.ok(['create', '-f', '-'], {
      input: JSON.stringify(
        csrObject('node1', ok, 'kubernetes.io/kube-apiserver-client-kubelet', [
          'digital signature',
          'client auth',
        ]),
      ),
    });
    await k.ok(['certificate', 'approve', 'node1']);
    await eventually(
      async () => (await client.api(CertificateSigningRequest).get('node1')).status?.certificate,
    );
  });
});
