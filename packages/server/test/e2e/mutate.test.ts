/**
 * Changing objects with kubectl: `create -f`, `label`, `annotate`, `patch` (merge, JSON and
 * strategic), `scale`, `replace`, and the errors a user sees when a write is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { deployment, manifest } from './support.js';

const NS = 'edit';

let env: KubectlEnv;
const jsonpath = async (target: string, path: string) =>
  env.ok(['get', target, '-n', NS, '-o', `jsonpath={${path}}`]);
const getJson = async (target: string) => JSON.parse(await env.ok(['get', target, '-n', NS, '-o', 'json']));

const settings = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: NS },
  data: { a: '1' },
};
const two = deployment('two', NS, {
  containers: [
    { name: 'a', image: 'busybox:1.36', env: [{ name: 'X', value: '1' }] },
    { name: 'b', image: 'nginx:1.27' },
  ],
});

beforeAll(async () => {
  env = await startKubectlEnv();
  await env.ok(['create', 'namespace', NS]);
});
afterAll(async () => {
  await env?.stop();
});

describe('kubectl create -f', () => {
  it('creates the objects of a JSON or YAML file', async () => {
    expect(await env.ok(['create', '-f', '-'], { input: JSON.stringify(settings) })).toBe(
      'configmap/settings created\n',
    );
    expect(await env.ok(['create', '-f', '-'], { input: manifest(two) })).toBe(
      'deployment.apps/two created\n',
    );
    expect(await jsonpath('configmap/settings', '.data.a')).toBe('1');
    expect(await jsonpath('deploy/two', '.metadata.generation')).toBe('1');
  });

  it('refuses an object that already exists with AlreadyExists', async () => {
    const r = await env.run(['create', '-f', '-'], { input: manifest(settings, two) });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'Error from server (AlreadyExists): error when creating "STDIN": configmaps "settings" already exists\n' +
        'Error from server (AlreadyExists): error when creating "STDIN": deployments.apps "two" already exists\n',
    );
  });

  it('refuses an invalid object with the 422 message of every invalid field', async () => {
    const one = await env.run(['create', '-f', '-'], {
      input: manifest({ ...settings, metadata: { name: 'Bad_Name', namespace: NS } }),
    });
    expect(one.code).toBe(1);
    expect(one.stderr).toBe(
      "The ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n",
    );

    const several = await env.run(['create', '-f', '-'], {
      input: manifest({
        ...settings,
        metadata: { name: 'several', namespace: NS, labels: { 'bad key': 'v' } },
        data: { 'bad/key': 'x' },
      }),
    });
    expect(several.code).toBe(1);
    expect(several.stderr.split('\n')).toEqual([
      'The ConfigMap "several" is invalid: ',
      "* metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      "* data[bad/key]: Invalid value: \"bad/key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
      '',
    ]);
  });

  it('does not store empty optional lists and maps, as decoding into the Go types drops them', async () => {
    const input = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'empty', namespace: NS, labels: {}, annotations: {}, finalizers: [] },
      spec: {
        containers: [{ name: 'c', image: 'busybox:1.36', args: [], ports: [], env: [] }],
        tolerations: [],
      },
    });
    const pod = JSON.parse(await env.ok(['create', '-f', '-', '-o', 'json'], { input }));
    expect(Object.keys(pod.metadata).sort()).toEqual([
      'creationTimestamp',
      'name',
      'namespace',
      'resourceVersion',
      'uid',
    ]);
    const c = pod.spec.containers[0];
    expect([c.args, c.ports, c.env]).toEqual([undefined, undefined, undefined]);
    await env.ok(['delete', 'pod/empty', '-n', NS]);
  });

  it('refuses to create in a namespace that does not exist', async () => {
    const r = await env.run(['create', '-f', '-'], {
      input: manifest({ ...settings, metadata: { name: 'x', namespace: 'nope' } }),
    });
    expect(r).toMatchObject({
      code: 1,
      stderr: 'Error from server (NotFound): error when creating "STDIN": namespaces "nope" not found\n',
    });
  });
});

describe('kubectl label and annotate', () => {
  it('adds, refuses to overwrite without --overwrite, overwrites and removes a label', async () => {
    const labels = async () => JSON.parse((await jsonpath('configmap/settings', '.metadata.labels')) || '{}');
    expect(await env.ok(['label', 'configmap/settings', '-n', NS, 'team=a', 'tier=web'])).toBe(
      'configmap/settings labeled\n',
    );
    expect(await labels()).toEqual({ team: 'a', tier: 'web' });

    const refused = await env.run(['label', 'configmap/settings', '-n', NS, 'team=b']);
    expect(refused).toMatchObject({
      code: 1,
      stderr: "error: 'team' already has a value (a), and --overwrite is false\n",
    });

    expect(await env.ok(['label', 'configmap/settings', '-n', NS, 'team=b', '--overwrite'])).toBe(
      'configmap/settings labeled\n',
    );
    expect(await labels()).toEqual({ team: 'b', tier: 'web' });

    expect(await env.ok(['label', 'configmap/settings', '-n', NS, 'team-'])).toBe(
      'configmap/settings unlabeled\n',
    );
    expect(await labels()).toEqual({ tier: 'web' });
    expect(await env.ok(['get', 'cm', '-n', NS, '-l', 'tier=web', '-o', 'name'])).toBe(
      'configmap/settings\n',
    );
  });

  it('adds, overwrites and removes an annotation', async () => {
    const annotations = async () =>
      JSON.parse((await jsonpath('configmap/settings', '.metadata.annotations')) || '{}');
    expect(await env.ok(['annotate', 'configmap/settings', '-n', NS, 'note=hello'])).toBe(
      'configmap/settings annotated\n',
    );
    expect(await annotations()).toEqual({ note: 'hello' });

    const refused = await env.run(['annotate', 'configmap/settings', '-n', NS, 'note=bye']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("'note' already has a value (hello)");

    await env.ok(['annotate', 'configmap/settings', '-n', NS, 'note=bye', '--overwrite']);
    expect(await annotations()).toEqual({ note: 'bye' });
    expect(await env.ok(['annotate', 'configmap/settings', '-n', NS, 'note-'])).toBe(
      'configmap/settings annotated\n',
    );
    // Like a Go struct round trip, the empty map is not kept (`omitempty`).
    expect((await getJson('configmap/settings')).metadata.annotations).toBeUndefined();
  });
});

describe('kubectl patch', () => {
  it('--type merge sets and deletes keys (null removes)', async () => {
    expect(
      await env.ok([
        'patch',
        'configmap/settings',
        '-n',
        NS,
        '--type',
        'merge',
        '-p',
        '{"data":{"a":null,"b":"2"}}',
      ]),
    ).toBe('configmap/settings patched\n');
    expect((await getJson('configmap/settings')).data).toEqual({ b: '2' });
    expect(
      await env.ok(['patch', 'configmap/settings', '-n', NS, '--type', 'merge', '-p', '{"data":{"b":"2"}}']),
    ).toBe('configmap/settings patched (no change)\n');
  });

  it('--type json applies the operations in order, and a failed test changes nothing', async () => {
    const ops = [
      { op: 'add', path: '/data/c', value: '3' },
      { op: 'replace', path: '/data/b', value: 'two' },
      { op: 'copy', from: '/data/c', path: '/data/d' },
      { op: 'remove', path: '/data/c' },
      { op: 'test', path: '/data/d', value: '3' },
    ];
    expect(
      await env.ok(['patch', 'configmap/settings', '-n', NS, '--type', 'json', '-p', JSON.stringify(ops)]),
    ).toBe('configmap/settings patched\n');
    const before = await getJson('configmap/settings');
    expect(before.data).toEqual({ b: 'two', d: '3' });

    const failed = await env.run([
      'patch',
      'configmap/settings',
      '-n',
      NS,
      '--type',
      'json',
      '-p',
      '[{"op":"replace","path":"/data/b","value":"x"},{"op":"test","path":"/data/d","value":"4"}]',
    ]);
    expect(failed).toMatchObject({
      code: 1,
      stderr: 'The request is invalid: the server rejected our request due to an error in our request\n',
    });
    const after = await getJson('configmap/settings');
    expect(after.data).toEqual({ b: 'two', d: '3' });
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('--type strategic merges containers by name and honours $patch: delete', async () => {
    const patch = {
      spec: { template: { spec: { containers: [{ name: 'b', env: [{ name: 'Y', value: '2' }] }] } } },
    };
    expect(
      await env.ok(['patch', 'deploy/two', '-n', NS, '--type', 'strategic', '-p', JSON.stringify(patch)]),
    ).toBe('deployment.apps/two patched\n');
    let dep = await getJson('deploy/two');
    expect(dep.metadata.generation).toBe(2);
    expect(
      dep.spec.template.spec.containers.map((c: any) => ({ name: c.name, image: c.image, env: c.env })),
    ).toEqual([
      { name: 'a', image: 'busybox:1.36', env: [{ name: 'X', value: '1' }] },
      { name: 'b', image: 'nginx:1.27', env: [{ name: 'Y', value: '2' }] },
    ]);

    // A merge patch replaces the whole list instead: the contrast shows the strategy was used.
    const del = { spec: { template: { spec: { containers: [{ name: 'a', $patch: 'delete' }] } } } };
    await env.ok(['patch', 'deploy/two', '-n', NS, '-p', JSON.stringify(del)]);
    dep = await getJson('deploy/two');
    expect(dep.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['b']);
    expect(dep.spec.template.spec.containers[0].env).toEqual([{ name: 'Y', value: '2' }]);
  });

  it('refuses to rename an object, and warns about unknown fields', async () => {
    const rename = await env.run([
      'patch',
      'configmap/settings',
      '-n',
      NS,
      '--type',
      'merge',
      '-p',
      '{"metadata":{"name":"other"}}',
    ]);
    expect(rename).toMatchObject({
      code: 1,
      stderr:
        'Error from server (BadRequest): the name of the object (other) does not match the name on the URL (settings)\n',
    });

    // kubectl patch does not ask for strict validation: the server warns and drops the field.
    const unknown = await env.run(['patch', 'configmap/settings', '-n', NS, '-p', '{"datum":{"x":"1"}}']);
    expect(unknown).toEqual({
      code: 0,
      stdout: 'configmap/settings patched (no change)\n',
      stderr: 'Warning: unknown field "datum"\n',
    });
    expect((await getJson('configmap/settings')).datum).toBeUndefined();
  });
});

describe('kubectl scale', () => {
  it('sets .spec.replicas through the scale subresource', async () => {
    expect(await env.ok(['scale', 'deploy/two', '-n', NS, '--replicas=5'])).toBe(
      'deployment.apps/two scaled\n',
    );
    expect(await jsonpath('deploy/two', '.spec.replicas')).toBe('5');
    const scale = JSON.parse(
      await env.ok(['get', '--raw', `/apis/apps/v1/namespaces/${NS}/deployments/two/scale`]),
    );
    expect(scale).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'two', namespace: NS },
      spec: { replicas: 5 },
      status: { replicas: 0, selector: 'app=two' },
    });

    const precondition = await env.run([
      'scale',
      'deploy/two',
      '-n',
      NS,
      '--current-replicas=3',
      '--replicas=1',
    ]);
    expect(precondition).toMatchObject({ code: 1, stderr: 'error: Expected replicas to be 3, was 5\n' });

    expect(
      await env.ok([
        'patch',
        'deploy/two',
        '-n',
        NS,
        '--subresource=scale',
        '--type',
        'merge',
        '-p',
        '{"spec":{"replicas":2}}',
      ]),
    ).toBe('scale.autoscaling/two patched\n'); // kubectl names what the server returned: the Scale
    expect(await jsonpath('deploy/two', '.spec.replicas')).toBe('2');
  });
});

describe('kubectl replace', () => {
  it('replaces with the current resourceVersion and reports a Conflict for a stale one', async () => {
    const stale = await getJson('configmap/settings');
    await env.ok(['label', 'configmap/settings', '-n', NS, 'bump=1']);

    const conflict = await env.run(['replace', '-f', '-'], {
      input: JSON.stringify({ ...stale, data: { stale: 'yes' } }),
    });
    expect(conflict).toMatchObject({
      code: 1,
      stderr:
        'Error from server (Conflict): error when replacing "STDIN": Operation cannot be fulfilled on configmaps "settings": the object has been modified; please apply your changes to the latest version and try again\n',
    });

    const fresh = await getJson('configmap/settings');
    expect(
      await env.ok(['replace', '-f', '-'], { input: JSON.stringify({ ...fresh, data: { fresh: 'yes' } }) }),
    ).toBe('configmap/settings replaced\n');
    const now = await getJson('configmap/settings');
    expect(now.data).toEqual({ fresh: 'yes' });
    expect(now.metadata.labels.bump).toBe('1');
  });
});
