/**
 * The built-in controllers as a kubectl user meets them (issue 9's "done when"): deleting a
 * namespace takes its workloads and custom resources with it and says in its conditions what
 * holds it; an unschedulable pod says why in `kubectl describe`; DaemonSets and StatefulSets keep
 * their history in ControllerRevisions that `kubectl rollout history` lists and `kubectl rollout
 * undo` restores. Deployment rollouts (`rollout status`, `undo`, scaling) are in
 * test/controllers/deployment.test.ts, DaemonSets following node labels
 * in daemonset.test.ts, the three propagation policies in garbage-collector.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { manifest, parseTable } from './support.js';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv({ nodes: { count: 2 } });
});
afterAll(async () => {
  await env?.stop();
});

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'foos.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'foos', singular: 'foo', kind: 'Foo' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

describe('deleting a namespace', () => {
  it('removes its workloads, reports what remains in its conditions, then goes', async () => {
    const ns = 'doomed';
    await env.ok(['apply', '-f', '-'], { input: manifest(crd) });
    await env.ok(['wait', '--for=condition=Established', 'crd/foos.example.com', '--timeout=20s']);
    await env.ok(['create', 'namespace', ns]);
    await env.ok(['create', 'deployment', 'web', '--image=nginx', '--replicas=2', '-n', ns]);
    await env.ok(['expose', 'deployment', 'web', '--port=80', '-n', ns]);
    await env.ok(['create', 'configmap', 'settings', '--from-literal=a=b', '-n', ns]);
    await env.ok(['apply', '-f', '-'], {
      input: manifest({
        apiVersion: 'example.com/v1',
        kind: 'Foo',
        metadata: { name: 'held', namespace: ns, finalizers: ['example.com/hold'] },
      }),
    });
    await env.ok(['rollout', 'status', 'deployment/web', '-n', ns, '--timeout=20s']);

    await env.ok(['delete', 'namespace', ns, '--wait=false']);
    // Everything goes but the custom resource its finalizer holds.
    await eventually(
      async () =>
        (await env.ok(['get', 'all,configmaps,endpointslices', '-n', ns, '-o', 'name'])).trim() === '' &&
        (await env.ok(['get', 'foos', '-n', ns, '-o', 'name'])) === 'foo.example.com/held\n',
      15_000,
      'the namespace to be emptied',
    );
    const conditions = await eventually(async () => {
      const nsObj = JSON.parse(await env.ok(['get', 'ns', ns, '-o', 'json']));
      const list = nsObj.status?.conditions as Array<Record<string, string>> | undefined;
      const remaining = list?.find((c) => c.type === 'NamespaceContentRemaining');
      return remaining?.message === 'Some resources are remaining: foos.example.com has 1 resource instances'
        ? list
        : undefined;
    });
    expect(conditions.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      [
        'NamespaceDeletionDiscoveryFailure',
        'False',
        'ResourcesDiscovered',
        'All resources successfully discovered',
      ],
      [
        'NamespaceDeletionGroupVersionParsingFailure',
        'False',
        'ParsedGroupVersions',
        'All legacy kube types successfully parsed',
      ],
      [
        'NamespaceDeletionContentFailure',
        'False',
        'ContentDeleted',
        'All content successfully deleted, may be waiting on finalization',
      ],
      [
        'NamespaceContentRemaining',
        'True',
        'SomeResourcesRemain',
        'Some resources are remaining: foos.example.com has 1 resource instances',
      ],
      [
        'NamespaceFinalizersRemaining',
        'True',
        'SomeFinalizersRemain',
        'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
      ],
    ]);
    for (const c of conditions) expect(c.lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(await env.ok(['get', 'ns', ns, '-o', 'yaml'])).toContain(
      "message: 'Some content in the namespace has finalizers remaining: example.com/hold",
    );

    await env.ok([
      'patch',
      'foo',
      'held',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":null}}',
    ]);
    await env.ok(['wait', '--for=delete', `namespace/${ns}`, '--timeout=20s']);
    expect(await env.run(['get', 'ns', ns])).toMatchObject({
      code: 1,
      stderr: `Error from server (NotFound): namespaces "${ns}" not found\n`,
    });
  });
});

describe('scheduling', () => {
  it('describes where a pod went, and why another cannot go anywhere', async () => {
    await env.ok(['run', 'placed', '--image=nginx']);
    await env.ok(['wait', '--for=condition=Ready', 'pod/placed', '--timeout=20s']);
    const node = await env.ok(['get', 'pod', 'placed', '-o', 'jsonpath={.spec.nodeName}']);
    const placed = await eventually(async () => {
      const out = await env.ok(['describe', 'pod', 'placed']);
      return out.includes('Scheduled') ? out : undefined;
    });
    expect(placed).toMatch(
      new RegExp(
        `Normal\\s+Scheduled\\s+\\S+\\s+default-scheduler\\s+Successfully assigned default/placed to ${node}`,
      ),
    );

    await env.ok(['run', 'stuck', '--image=nginx', '--overrides={"spec":{"nodeSelector":{"disk":"ssd"}}}']);
    await env.ok(['wait', '--for=condition=PodScheduled=false', 'pod/stuck', '--timeout=20s']);
    const why =
      "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    expect(await env.ok(['get', 'pod', 'stuck', '-o', 'jsonpath={.status.conditions[0].message}'])).toBe(why);
    const described = await eventually(async () => {
      const out = await env.ok(['describe', 'pod', 'stuck']);
      return out.includes('FailedScheduling') ? out : undefined;
    });
    expect(described).toMatch(/Status:\s+Pending/);
    expect(described).toMatch(/PodScheduled\s+False/);
    expect(described).toContain('Warning  FailedScheduling');
    expect(described).toContain('default-scheduler');
    expect(described.replace(/\s+/g, ' ')).toContain(why);

    // A node that matches: the pod is bound, and runs.
    await env.ok(['label', 'node', 'kubeloop-node-1', 'disk=ssd']);
    await env.ok(['wait', '--for=condition=Ready', 'pod/stuck', '--timeout=20s']);
    expect(await env.ok(['get', 'pod', 'stuck', '-o', 'jsonpath={.spec.nodeName}'])).toBe('kubeloop-node-1');
  });
});

/** A workload of one container `c`, labelled `app: <name>`. */
const workload = (kind: 'DaemonSet' | 'StatefulSet', name: string, image: string) => ({
  apiVersion: 'apps/v1',
  kind,
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    ...(kind === 'StatefulSet' && { serviceName: name, replicas: 2 }),
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'c', image }] },
    },
  },
});

describe.each([
  ['daemonset', 'DaemonSet', 'daemon set "daemonset-h" successfully rolled out'],
  ['statefulset', 'StatefulSet', 'partitioned roll out complete: 2 new pods have been updated...'],
] as const)('%s history', (resource, kind, rolledOut) => {
  const name = `${resource}-h`;
  const ref = `${resource}/${name}`;
  const images = async () =>
    (
      await env.ok([
        'get',
        'pods',
        '-l',
        `app=${name}`,
        '-o',
        'jsonpath={range .items[*]}{.spec.containers[0].image}{" "}{.metadata.labels.controller-revision-hash}{"\\n"}{end}',
      ])
    )
      .trim()
      .split('\n')
      .sort();
  const revisions = async () =>
    parseTable(await env.ok(['get', 'controllerrevisions', '-l', `app=${name}`])).rows.sort(
      (a, b) => Number(a.REVISION) - Number(b.REVISION),
    );

  it('lists revisions (kubectl rollout history), rolls back (rollout undo), and completes rollouts', async () => {
    await env.ok(['apply', '-f', '-'], { input: manifest(workload(kind, name, 'agent:1')) });
    expect(await env.ok(['rollout', 'status', ref, '--timeout=20s'])).toContain(rolledOut);
    await env.ok(['set', 'image', ref, 'c=agent:2']);
    expect(await env.ok(['rollout', 'status', ref, '--timeout=20s'])).toContain(rolledOut);

    // One revision per template, named after its owner and a hash, owned by the workload.
    const [first, second] = await revisions();
    expect(await revisions()).toHaveLength(2);
    expect(first).toMatchObject({ CONTROLLER: `${resource}.apps/${name}`, REVISION: '1' });
    expect(second).toMatchObject({ CONTROLLER: `${resource}.apps/${name}`, REVISION: '2' });
    expect(first?.NAME).toMatch(new RegExp(`^${name}-[bcdfghjklmnpqrstvwxz2456789]+$`));
    const revision2 = JSON.parse(
      await env.ok(['get', 'controllerrevision', second?.NAME ?? '', '-o', 'json']),
    );
    expect(revision2.data.spec.template.$patch).toBe('replace');
    expect(revision2.data.spec.template.spec.containers[0].image).toBe('agent:2');
    // The pods carry the revision's hash: the name for a StatefulSet, the template hash for a DaemonSet.
    const podHash =
      kind === 'StatefulSet'
        ? revision2.metadata.name
        : revision2.metadata.labels['controller-revision-hash'];
    expect(await images()).toEqual([`agent:2 ${podHash}`, `agent:2 ${podHash}`]);

    const history = await env.ok(['rollout', 'history', ref]);
    expect(history).toContain(`${resource}.apps/${name}`);
    expect(parseTable(history.slice(history.indexOf('REVISION'))).rows.map((r) => r.REVISION)).toEqual([
      '1',
      '2',
    ]);
    expect(await env.ok(['rollout', 'history', ref, '--revision=1'])).toMatch(/Image:\s+agent:1/);

    expect(await env.ok(['rollout', 'undo', ref])).toBe(`${resource}.apps/${name} rolled back\n`);
    expect(await env.ok(['rollout', 'status', ref, '--timeout=20s'])).toContain(rolledOut);
    await eventually(async () => (await images()).every((i) => i.startsWith('agent:1 ')));
    // The first template came back as revision 3; its revision object is the same one.
    const after = await revisions();
    expect(after.map((r) => [r.NAME, r.REVISION])).toEqual([
      [second?.NAME, '2'],
      [first?.NAME, '3'],
    ]);
    // kubectl compares the template with the revision's data byte for byte.
    expect(await env.ok(['rollout', 'undo', ref, '--to-revision=3'])).toBe(
      `${resource}.apps/${name} skipped rollback (current template already matches revision 3)\n`,
    );
    expect(await env.ok(['rollout', 'undo', ref, '--to-revision=2'])).toBe(
      `${resource}.apps/${name} rolled back\n`,
    );
    await env.ok(['rollout', 'status', ref, '--timeout=20s']);
    await eventually(async () => (await images()).every((i) => i.startsWith('agent:2 ')));
    const obj = JSON.parse(await env.ok(['get', ref, '-o', 'json']));
    expect(obj.status.observedGeneration).toBe(obj.metadata.generation);
    if (kind === 'StatefulSet')
      expect(obj.status).toMatchObject({
        currentRevision: second?.NAME,
        updateRevision: second?.NAME,
        currentReplicas: 2,
        updatedReplicas: 2,
      });
    else expect(obj.status).toMatchObject({ updatedNumberScheduled: 2, desiredNumberScheduled: 2 });
  });
});
