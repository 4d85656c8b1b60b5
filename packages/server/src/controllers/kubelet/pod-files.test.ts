import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'kubeloop/client';
import { afterAll, describe, expect, it } from 'vitest';
import { commandLine, writeToken } from './pod-files.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeloop-pod-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pod = { metadata: { name: 'op-1', namespace: 'ops', uid: 'u-1' }, spec: { serviceAccountName: 'op' } };

describe('pod files', () => {
  it('get the token as the kubelet does (bound to the pod) and renew it at 80% of its lifetime', async () => {
    const requests: { method: string; path: string; body: unknown }[] = [];
    const client = {
      request: async (method: string, path: string, o: { body: unknown }) => {
        requests.push({ method, path, body: o.body });
        return {
          status: { token: 'tok-1', expirationTimestamp: new Date(Date.now() + 1000_000).toISOString() },
        };
      },
    } as unknown as Client;
    const file = join(dir, 'sa', 'token');
    const before = Date.now();
    const refreshAt = await writeToken(client, pod, file, {
      serviceAccountToken: { expirationSeconds: 1000, audience: 'api' },
    });
    expect(readFileSync(file, 'utf8')).toBe('tok-1');
    expect(requests[0]).toMatchObject({
      method: 'POST',
      path: '/api/v1/namespaces/ops/serviceaccounts/op/token',
      body: {
        spec: {
          audiences: ['api'],
          expirationSeconds: 1000,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'op-1', uid: 'u-1' },
        },
      },
    });
    // 800 s of the 1000 s lifetime (give or take the test's own time).
    expect(refreshAt - before).toBeGreaterThanOrEqual(799_000);
    expect(refreshAt - before).toBeLessThanOrEqual(801_000);
  });

  it('start the image entrypoint with the pod args, or the pod command, $(VAR) expanded', () => {
    const image = { dir, entrypoint: ['node', 'dist/main.js'], cmd: ['--default'] };
    expect(commandLine({}, image, {})).toEqual(['node', 'dist/main.js', '--default']);
    expect(commandLine({ args: ['--x=$(A)'] }, image, { A: 'a' })).toEqual(['node', 'dist/main.js', '--x=a']);
    expect(commandLine({ command: ['sh', '-c'], args: ['echo $(A) $$(A)'] }, image, { A: 'a' })).toEqual([
      'sh',
      '-c',
      'echo a $(A)',
    ]);
  });
});
