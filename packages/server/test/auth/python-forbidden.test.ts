/**
 * The official Python client meets RBAC's refusal as it meets kube-apiserver's: an `ApiException`
 * with status 403 whose body is a `Status` it parses (reason, message, details).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type ControlPlane, startTestEnv } from '../../src/index.js';

const PYTHON = '/usr/bin/python3';
let cp: ControlPlane;
let dir: string;

beforeAll(async () => {
  cp = await startTestEnv({ controllers: false });
  dir = mkdtempSync(join(tmpdir(), 'kubeloop-py-rbac-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cp?.stop();
});

const SCRIPT = `
import json, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
try:
    client.CoreV1Api().list_namespaced_pod("default")
    print(json.dumps({"error": "no exception"}))
except ApiException as e:
    body = json.loads(e.body)
    print(json.dumps({"status": e.status, "reason": e.reason, "body": body}))
`;

it('gets a 403 Status it parses for a request RBAC does not allow', async () => {
  const { cert, key } = await cp.issueClientCertificate('carol', ['qa']);
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: {
            server: cp.url,
            'certificate-authority-data': Buffer.from(cp.clientConfig.caData).toString('base64'),
          },
        },
      ],
      users: [
        {
          name: 'carol',
          user: {
            'client-certificate-data': Buffer.from(cert).toString('base64'),
            'client-key-data': Buffer.from(key).toString('base64'),
          },
        },
      ],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'carol' } }],
      'current-context': 'c',
    }),
    { mode: 0o600 },
  );
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir };
  delete env.PYTHONPATH;
  delete env.PYTHONHOME;
  const { stdout } = await promisify(execFile)(PYTHON, ['-c', SCRIPT, kubeconfig], { env, timeout: 30_000 });
  expect(JSON.parse(stdout)).toEqual({
    status: 403,
    reason: 'Forbidden',
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'pods is forbidden: User "carol" cannot list resource "pods" in API group "" in the namespace "default"',
      reason: 'Forbidden',
      details: { kind: 'pods' },
      code: 403,
    },
  });
});
