/**
 * envtest's CRDDirectoryPaths: a project's `config/crd` (kubebuilder's layout, kustomization and
 * `bases/` included) installed by `startTestEnv` before it resolves.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { simpleCrd } from './crd.js';
import { httpClient } from './http.js';
import { startTestEnv } from './test-env.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeloop-crd-dirs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('startTestEnv({ crdDirectoryPaths })', () => {
  it('installs every CRD of the folders, kustomization and other kinds skipped, each served when it resolves', async () => {
    const { stringify } = await import('yaml');
    mkdirSync(join(dir, 'config/crd/bases'), { recursive: true });
    writeFileSync(join(dir, 'config/crd/kustomization.yaml'), 'resources:\n  - bases/a.yaml\n');
    writeFileSync(
      join(dir, 'config/crd/bases/a.yaml'),
      stringify(simpleCrd('apples', 'Apple', 'fruit.example.com')),
    );
    const cluster = simpleCrd('orchards', 'Orchard', 'fruit.example.com');
    cluster.spec.scope = 'Cluster';
    writeFileSync(
      join(dir, 'config/crd/bases/b.yml'),
      `${stringify(cluster)}---\n${stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })}`,
    );
    const env = await startTestEnv({ crdDirectoryPaths: [join(dir, 'config/crd')] });
    const http = httpClient(env);
    try {
      expect((await http.get('/apis/fruit.example.com/v1/namespaces/default/apples')).status).toBe(200);
      expect((await http.get('/apis/fruit.example.com/v1/orchards')).status).toBe(200);
      expect((await http.get('/api/v1/namespaces/default/configmaps/x')).status).toBe(404);
      // No simulated node unless asked, as envtest: pods stay Pending.
      expect((await http.get('/api/v1/nodes')).json.items).toEqual([]);
    } finally {
      http.close();
      await env.stop();
    }
  });

  it('fails on a path that does not exist, unless told not to', async () => {
    await expect(startTestEnv({ crdDirectoryPaths: [join(dir, 'nope')] })).rejects.toThrow(
      /CRD path .*nope does not exist/,
    );
    const env = await startTestEnv({ crdDirectoryPaths: [join(dir, 'nope')], errorIfCrdPathMissing: false });
    await env.stop();
  });
});
