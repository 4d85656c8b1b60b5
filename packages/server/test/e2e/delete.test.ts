/**
 * Deletion as kubectl drives it: `delete --wait` on an object held by a finalizer, namespace
 * deletion emptied by the namespace controller, `delete -l`, and `kubectl wait` for a
 * condition (`--for=jsonpath=…`) or for deletion (`--for=delete`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { manifest } from './support.js';

const NS = 'gone';
const FINALIZER = 'example.com/hold';

let env: KubectlEnv;
const configMap = (name: string, namespace: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, ...extra },
  data: { k: 'v' },
});
const releaseFinalizers = (target: string, namespace: string) =>
  env.ok([
    'patch',
    target,
    '-n',
    namespace,
    '--type',
    'json',
    '-p',
    '[{"op":"remove","path":"/metadata/finalizers"}]',
  ]);

/** Starts `kubectl wait` and returns once its watch is open, so that the next change is one it watches. */
async function startWait(args: string[]) {
  const wait = env.spawn(['wait', ...args, '--timeout=30s', '-v=6']);
  try {
    await eventually(() => wait.errorOutput().includes('watch=true'), 10_000, 'kubectl wait to watch');
  } catch (err) {
    await wait.stop();
    throw err;
  }
  return wait;
}

beforeAll(async () => {
  env = await startKubectlEnv();
  await env.ok(['create', 'namespace', NS]);
});
afterAll(async () => {
  await env?.stop();
});

describe('kubectl delete', () => {
  it('--wait blocks while a finalizer holds the object and returns once it is removed', async () => {
    await env.ok(['create', '-f', '-'], {
      input: manifest(configMap('held', NS, { finalizers: [FINALIZER] })),
    });

    const del = env.spawn(['delete', 'configmap/held', '-n', NS, '--wait', '--timeout=30s']);
    let exited = false;
    void del.done.then(() => {
      exited = true;
    });
    try {
      // kubectl reports the deletion as soon as the server accepted it, then waits.
      await eventually(() => del.output().includes('configmap "held" deleted'), 10_000, 'the deletion');
      const held = JSON.parse(await env.ok(['get', 'configmap/held', '-n', NS, '-o', 'json']));
      expect(held.metadata.deletionTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(held.metadata.finalizers).toEqual([FINALIZER]);
      expect(exited).toBe(false);

      expect(await releaseFinalizers('configmap/held', NS)).toBe('configmap/held patched\n');
      const result = await del.done;
      expect(result).toMatchObject({ code: 0, stdout: 'configmap "held" deleted\n', stderr: '' });
    } finally {
      if (!exited) await del.stop();
    }
    const r = await env.run(['get', 'configmap/held', '-n', NS]);
    expect(r).toMatchObject({
      code: 1,
      stderr: 'Error from server (NotFound): configmaps "held" not found\n',
    });
  });

  it('deletes by label selector only the matching objects', async () => {
    await env.ok(['create', '-f', '-'], {
      input: manifest(
        configMap('p1', NS, { labels: { env: 'prod' } }),
        configMap('p2', NS, { labels: { env: 'prod' } }),
        configMap('d1', NS, { labels: { env: 'dev' } }),
      ),
    });
    expect(await env.ok(['delete', 'configmaps', '-n', NS, '-l', 'env=prod'])).toBe(
      'configmap "p1" deleted\nconfigmap "p2" deleted\n',
    );
    expect(await env.ok(['get', 'configmaps', '-n', NS, '-l', 'env', '-o', 'name'])).toBe('configmap/d1\n');
  });

  it('deleting a namespace empties it (waiting for finalizers), then removes it', async () => {
    const ns = 'doomed';
    await env.ok(['create', '-f', '-'], {
      input: manifest(
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
        configMap('a', ns),
        configMap('b', ns),
        configMap('held', ns, { finalizers: [FINALIZER] }),
      ),
    });
    expect(await env.ok(['delete', 'namespace', ns, '--wait=false'])).toBe(`namespace "${ns}" deleted\n`);

    const table = await env.ok(['get', 'namespace', ns, '--no-headers']);
    expect(table).toMatch(new RegExp(`^${ns}\\s+Terminating\\s+\\d+s\\n$`));
    // The controller deletes the contents: only the object held by its finalizer remains.
    await eventually(
      async () => (await env.ok(['get', 'configmaps', '-n', ns, '-o', 'name'])) === 'configmap/held\n',
      10_000,
      'the namespace to be emptied',
    );
    const refused = await env.run(['create', '-f', '-'], { input: manifest(configMap('late', ns)) });
    expect(refused).toMatchObject({
      code: 1,
      stderr: `Error from server (Forbidden): error when creating "STDIN": configmaps "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated\n`,
    });
    expect(await env.ok(['get', 'namespace', ns, '-o', 'jsonpath={.status.phase}'])).toBe('Terminating');

    const wait = await startWait(['--for=delete', `namespace/${ns}`]);
    try {
      await releaseFinalizers('configmap/held', ns);
      expect(await wait.done).toMatchObject({ code: 0, stdout: `namespace/${ns} condition met\n` });
    } finally {
      await wait.stop();
    }
    const r = await env.run(['get', 'namespace', ns]);
    expect(r).toMatchObject({
      code: 1,
      stderr: `Error from server (NotFound): namespaces "${ns}" not found\n`,
    });
  });

  it('a namespace stuck on a finalizer is released through /finalize, as users unstick one', async () => {
    const ns = 'stuck';
    await env.ok(['create', '-f', '-'], {
      input: manifest(
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
        configMap('held', ns, { finalizers: [FINALIZER] }),
      ),
    });
    // Only /finalize changes spec.finalizers: a write of the namespace keeps them.
    expect(
      await env.ok([
        'patch',
        'namespace',
        ns,
        '-p',
        '{"spec":{"finalizers":[]}}',
        '-o',
        'jsonpath={.spec.finalizers}',
      ]),
    ).toBe('["kubernetes"]');
    // finalize takes PUT only.
    expect(await env.run(['get', '--raw', `/api/v1/namespaces/${ns}/finalize`])).toMatchObject({
      code: 1,
      stderr:
        'Error from server (MethodNotAllowed): the server does not allow this method on the requested resource\n',
    });
    await env.ok(['delete', 'namespace', ns, '--wait=false']);
    await eventually(
      async () =>
        (await env.ok([
          'get',
          'namespace',
          ns,
          '-o',
          'jsonpath={.status.conditions[?(@.type=="NamespaceFinalizersRemaining")].status}',
        ])) === 'True',
      10_000,
      'the namespace to wait for the finalizer',
    );
    // `kubectl get ns stuck -o json | jq '.spec.finalizers = []' | kubectl replace --raw …/finalize -f -`
    const stuck = JSON.parse(await env.ok(['get', 'namespace', ns, '-o', 'json']));
    stuck.spec.finalizers = [];
    const finalized = JSON.parse(
      await env.ok(['replace', '--raw', `/api/v1/namespaces/${ns}/finalize`, '-f', '-'], {
        input: JSON.stringify(stuck),
      }),
    );
    expect(finalized).toMatchObject({ kind: 'Namespace', spec: {}, status: { phase: 'Terminating' } });
    expect(finalized.spec.finalizers ?? []).toEqual([]);
    // The last finalizer went with a deletion pending: the namespace is gone (its content stays
    // behind, as in a cluster).
    expect(await env.run(['get', 'namespace', ns])).toMatchObject({
      code: 1,
      stderr: `Error from server (NotFound): namespaces "${ns}" not found\n`,
    });
    expect(JSON.parse(await env.ok(['get', '--raw', '/api/v1'])).resources).toContainEqual({
      name: 'namespaces/finalize',
      singularName: '',
      namespaced: false,
      kind: 'Namespace',
      verbs: ['update'],
    });
  });
});

describe('kubectl wait', () => {
  it('--for=jsonpath is met at once when the value is already there', async () => {
    expect(
      await env.ok(['wait', `--for=jsonpath={.status.phase}=Active`, `namespace/${NS}`, '--timeout=10s']),
    ).toBe(`namespace/${NS} condition met\n`);
  });

  it('--for=jsonpath waits for a change made while it watches', async () => {
    await env.ok(['create', '-f', '-'], { input: manifest(configMap('flag', NS)) });
    const wait = await startWait(['--for=jsonpath={.data.ready}=yes', 'configmap/flag', '-n', NS]);
    try {
      await env.ok(['patch', 'configmap/flag', '-n', NS, '--type', 'merge', '-p', '{"data":{"ready":"no"}}']);
      await env.ok([
        'patch',
        'configmap/flag',
        '-n',
        NS,
        '--type',
        'merge',
        '-p',
        '{"data":{"ready":"yes"}}',
      ]);
      expect(await wait.done).toMatchObject({ code: 0, stdout: 'configmap/flag condition met\n' });
    } finally {
      await wait.stop();
    }
  });

  it('--for=delete returns once the object is gone, and times out while it is held', async () => {
    await env.ok(['create', '-f', '-'], {
      input: manifest(configMap('slow', NS, { finalizers: [FINALIZER] })),
    });
    await env.ok(['delete', 'configmap/slow', '-n', NS, '--wait=false']);

    const timedOut = await env.run(['wait', '--for=delete', 'configmap/slow', '-n', NS, '--timeout=1s']);
    expect(timedOut.code).toBe(1);
    // (client-go may log a warning about the short watch first)
    expect(timedOut.stderr).toMatch(
      /(^|\n)error: timed out waiting for the condition on configmaps\/slow\n$/,
    );

    const wait = await startWait(['--for=delete', 'configmap/slow', '-n', NS]);
    try {
      await releaseFinalizers('configmap/slow', NS);
      expect(await wait.done).toMatchObject({ code: 0, stdout: 'configmap/slow condition met\n' });
    } finally {
      await wait.stop();
    }
  });
});
