import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTAINER_ROOT_ENV, inClusterConfig, SERVICE_ACCOUNT_DIR } from './in-cluster.js';

let root: string;
let ca: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kubeloop-in-cluster-'));
  // A real certificate: the config checks that ca.crt parses.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=test-ca',
      '-keyout',
      join(root, 'ca.key'),
      '-out',
      join(root, 'ca.pem'),
    ],
    { stdio: 'ignore' },
  );
  ca = readFileSync(join(root, 'ca.pem'), 'utf8');
  const dir = join(root, SERVICE_ACCOUNT_DIR);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'token'), 'the-token');
  writeFileSync(join(dir, 'ca.crt'), ca);
  writeFileSync(join(dir, 'namespace'), 'team-a');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('inClusterConfig', () => {
  it('reads the service account files under $KUBELOOP_ROOT, where a process-backed pod has them', async () => {
    const config = await inClusterConfig({
      env: {
        KUBERNETES_SERVICE_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_PORT: '6443',
        [CONTAINER_ROOT_ENV]: root,
      },
    });
    expect(config).toMatchObject({
      server: 'https://127.0.0.1:6443',
      tokenFile: join(root, SERVICE_ACCOUNT_DIR, 'token'),
      caData: ca,
      namespace: 'team-a',
    });
  });

  it('reads them at the in-cluster path without it', async () => {
    await expect(
      inClusterConfig({ env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '6443' } }),
    ).rejects.toThrow(SERVICE_ACCOUNT_DIR);
  });
});
