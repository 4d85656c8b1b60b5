/**
 * Boolean query parameters read as apimachinery's `Convert_Slice_string_To_bool` reads them:
 * only `0` and `false` (any case) are false. The official Python client sends `watch=True`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { httpClient } from '../http.js';
import { eventually } from '../kubectl.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;
let dir: string;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
  dir = mkdtempSync(join(tmpdir(), 'kubeloop-py-'));
  writeFileSync(join(dir, 'kubeconfig'), cp.kubeconfig, { mode: 0o600 });
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Lists, prints the list's resourceVersion, then watches from it until `py-cm` is deleted. */
const PY_WATCH = `
import json, sys
from kubernetes import client, config, watch
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
rv = v1.list_namespaced_config_map('default').metadata.resource_version
print('listed', rv, flush=True)
for ev in watch.Watch().stream(v1.list_namespaced_config_map, 'default', resource_version=rv, timeout_seconds=30):
    o = ev['object']
    print(json.dumps({'type': ev['type'], 'name': o.metadata.name, 'data': o.data}), flush=True)
    if ev['type'] == 'DELETED' and o.metadata.name == 'py-cm':
        break
print('done', flush=True)
`;

describe('boolean query parameters', () => {
  it('the Python client (watch=True) gets a watch with ADDED, MODIFIED and DELETED events', async () => {
    const child = spawn('/usr/bin/python3', ['-c', PY_WATCH, join(dir, 'kubeconfig')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await eventually(() => out.includes('listed'), 20_000, `python to list (${err})`);
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'py-cm' }, data: { a: '1' } };
      expect((await http.post('/api/v1/namespaces/default/configmaps', cm)).status).toBe(201);
      expect(
        (
          await http.patch(
            '/api/v1/namespaces/default/configmaps/py-cm',
            { data: { a: '2' } },
            'application/merge-patch+json',
          )
        ).status,
      ).toBe(200);
      expect((await http.delete('/api/v1/namespaces/default/configmaps/py-cm')).status).toBe(200);
      expect(await exited, err).toBe(0);
    } finally {
      child.kill();
    }
    const events = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(events).toEqual([
      { type: 'ADDED', name: 'py-cm', data: { a: '1' } },
      { type: 'MODIFIED', name: 'py-cm', data: { a: '2' } },
      { type: 'DELETED', name: 'py-cm', data: { a: '2' } },
    ]);
  });

  it.each([
    ['True', true],
    ['TRUE', true],
    ['yes', true],
    ['', true],
    ['1', true],
    ['0', false],
    ['False', false],
    ['fAlSe', false],
  ])('watch=%s is a watch: %s', async (value, isWatch) => {
    const w = http.watch(`/api/v1/namespaces/kube-system/configmaps?watch=${value}&timeoutSeconds=1`);
    try {
      await eventually(() => w.status !== 0 && (w.events.length > 0 || w.ended), 10_000, 'a response');
      if (!isWatch) {
        await eventually(() => w.ended, 10_000, 'the list to end');
      }
      // A list arrives as one JSON line with kind ConfigMapList; a watch as events.
      const first = w.events[0];
      if (isWatch) expect(first?.type).toBe('ADDED');
      else expect(first?.kind).toBe('ConfigMapList');
    } finally {
      w.close();
    }
  });

  it('allowWatchBookmarks=True and sendInitialEvents=True are true', async () => {
    const w = http.watch(
      '/api/v1/namespaces/kube-system/configmaps?watch=1&allowWatchBookmarks=True&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&timeoutSeconds=5',
    );
    try {
      const bm = await eventually(
        () => w.events.find((e) => e.type === 'BOOKMARK'),
        10_000,
        'the initial-events-end bookmark',
      );
      expect(bm.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    } finally {
      w.close();
    }
  });
});
