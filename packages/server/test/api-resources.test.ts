/**
 * Discovery against the golden list of a 1.32 cluster: `kubectl api-resources -o wide` must list
 * the same resources, short names, versions, scopes, kinds, verbs and categories.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from './kubectl.js';

let env: KubectlEnv;
beforeAll(async () => {
  env = await startKubectlEnv();
});
afterAll(async () => {
  await env?.stop();
});

/** The golden rows, without comments. */
function golden(): string[] {
  return readFileSync(new URL('./golden/api-resources-1.32.txt', import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
}

/** kubectl's table as `|`-separated rows, cut at the header's column starts. */
function rows(output: string): string[] {
  const [header, ...lines] = output.trimEnd().split('\n');
  const names = ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND', 'VERBS', 'CATEGORIES'];
  const starts = names.map((n) => header!.indexOf(n));
  expect(starts.every((s) => s >= 0)).toBe(true);
  return lines.map((line) =>
    starts.map((s, i) => line.slice(s, starts[i + 1] ?? undefined).trim()).join('|'),
  );
}

describe('kubectl api-resources', () => {
  it('lists what a 1.32 cluster lists, in the same order', async () => {
    const out = await env.ok(['api-resources', '-o', 'wide']);
    expect(rows(out)).toEqual(golden());
  });

  it('serves autoscaling/v1 beside the preferred autoscaling/v2', async () => {
    const out = await env.ok(['api-resources', '--api-group=autoscaling', '-o', 'name']);
    expect(out.trim()).toBe('horizontalpodautoscalers.autoscaling');
    const v1 = JSON.parse(await env.ok(['get', '--raw', '/apis/autoscaling/v1']));
    expect(v1.resources.map((r: { name: string }) => r.name)).toEqual([
      'horizontalpodautoscalers',
      'horizontalpodautoscalers/status',
    ]);
    const group = JSON.parse(await env.ok(['get', '--raw', '/apis/autoscaling']));
    expect(group.preferredVersion.version).toBe('v2');
  });

  it('lists the subresources kubectl uses beside the resources', async () => {
    const core = JSON.parse(await env.ok(['get', '--raw', '/api/v1']));
    const names = core.resources.map((r: { name: string }) => r.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'replicationcontrollers/scale',
        'replicationcontrollers/status',
        'serviceaccounts/token',
      ]),
    );
    const certs = JSON.parse(await env.ok(['get', '--raw', '/apis/certificates.k8s.io/v1']));
    expect(certs.resources.map((r: { name: string }) => r.name)).toEqual([
      'certificatesigningrequests',
      'certificatesigningrequests/approval',
      'certificatesigningrequests/status',
    ]);
  });
});
