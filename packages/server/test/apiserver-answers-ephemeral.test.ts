/**
 * `pods/ephemeralcontainers` (`kubectl debug`), compared request by request with a real
 * kube-apiserver (the anchor's 1.24, checked in 1.32's sources). The local plane did not serve
 * it, and took ephemeral containers in a pod's create, which a cluster refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../src/testing/http.js';
import { httpClient } from './http.js';
import { eventually, type KubectlEnv, startKubectlEnv } from './kubectl.js';
import { failure } from './status-check.js';

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;

const PODS = '/api/v1/namespaces/default/pods';
const SMP = 'application/strategic-merge-patch+json';
const debuggerContainer = (extra: Json = {}) => ({
  spec: { ephemeralContainers: [{ name: 'debugger', image: 'busybox', targetContainerName: 'c', ...extra }] },
});

beforeAll(async () => {
  env = await startKubectlEnv({ nodes: { count: 1 } });
  http = httpClient(env.cp);
  await env.ok([
    'run',
    'target',
    '--image=nginx',
    '--overrides',
    JSON.stringify({ spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
  ]);
});
afterAll(() => env?.stop());

describe('pods/ephemeralcontainers', () => {
  it('is in discovery as kube lists it: verbs get, patch, update, its subresources sorted', async () => {
    const list = await http.get('/api/v1');
    const pods = list.json.resources.filter((r: Json) => r.name.startsWith('pods/'));
    expect(pods.map((r: Json) => r.name)).toEqual([
      'pods/attach',
      'pods/binding',
      'pods/ephemeralcontainers',
      'pods/eviction',
      'pods/exec',
      'pods/log',
      'pods/portforward',
      'pods/status',
    ]);
    expect(pods.find((r: Json) => r.name === 'pods/ephemeralcontainers')).toEqual({
      name: 'pods/ephemeralcontainers',
      singularName: '',
      namespaced: true,
      kind: 'Pod',
      verbs: ['get', 'patch', 'update'],
    });
    expect(pods.find((r: Json) => r.name === 'pods/binding')).toEqual({
      name: 'pods/binding',
      singularName: '',
      namespaced: true,
      kind: 'Binding',
      verbs: ['create'],
    });
  });

  it('refuses ephemeral containers in a create', async () => {
    const status = failure(
      await http.post(`${PODS}?dryRun=All`, {
        metadata: { name: 'direct' },
        spec: {
          containers: [{ name: 'c', image: 'nginx' }],
          ephemeralContainers: [{ name: 'd', image: 'busybox' }],
        },
      }),
      422,
      'Invalid',
      'Pod "direct" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create',
    );
    expect(status.details.causes).toHaveLength(1);
  });

  it('refuses ephemeral containers in a pod template', async () => {
    const template = {
      metadata: { labels: { app: 't' } },
      spec: {
        containers: [{ name: 'c', image: 'nginx' }],
        ephemeralContainers: [{ name: 'd', image: 'busybox' }],
      },
    };
    failure(
      await http.post('/apis/apps/v1/namespaces/default/deployments?dryRun=All', {
        metadata: { name: 't' },
        spec: { selector: { matchLabels: { app: 't' } }, template },
      }),
      422,
      'Invalid',
      'Deployment.apps "t" is invalid: spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template',
    );
    failure(
      await http.post('/api/v1/namespaces/default/podtemplates?dryRun=All', {
        metadata: { name: 't' },
        template,
      }),
      422,
      'Invalid',
      'PodTemplate "t" is invalid: template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template',
    );
  });

  it('refuses the fields that would make an ephemeral container part of the workload', async () => {
    const cases: [Json, string][] = [
      [
        { ports: [{ containerPort: 80 }] },
        'spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
      ],
      [
        { resources: { limits: { cpu: '1' } } },
        'spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container',
      ],
      [{ name: 'c' }, 'spec.ephemeralContainers[0].name: Duplicate value: "c"'],
      [{ targetContainerName: 'nope' }, 'spec.ephemeralContainers[0].targetContainerName: Not found: "nope"'],
    ];
    for (const [extra, cause] of cases)
      failure(
        await http.patch(`${PODS}/target/ephemeralcontainers`, debuggerContainer(extra), SMP),
        422,
        'Invalid',
        `Pod "target" is invalid: ${cause}`,
      );
    expect((await http.get(`${PODS}/target`)).json.spec.ephemeralContainers).toBeUndefined();
  });

  it('kubectl debug adds one, the kubelet runs it, and it can be neither changed nor removed', async () => {
    await env.ok(['debug', 'target', '--image=busybox', '--target=c', '-c', 'debugger']);
    const pod = (await http.get(`${PODS}/target/ephemeralcontainers`)).json;
    expect(pod.kind).toBe('Pod');
    expect(pod.spec.ephemeralContainers).toEqual([
      expect.objectContaining({ name: 'debugger', image: 'busybox', targetContainerName: 'c' }),
    ]);
    await eventually(async () => {
      const statuses = (await http.get(`${PODS}/target`)).json.status.ephemeralContainerStatuses;
      expect(statuses).toEqual([
        expect.objectContaining({ name: 'debugger', ready: false, state: { running: expect.any(Object) } }),
      ]);
      return true;
    });
    failure(
      await http.patch(
        `${PODS}/target/ephemeralcontainers`,
        [{ op: 'remove', path: '/spec/ephemeralContainers/0' }],
        'application/json-patch+json',
      ),
      422,
      'Invalid',
      'Pod "target" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed\n',
    );
    const changed = failure(
      await http.patch(
        `${PODS}/target/ephemeralcontainers`,
        [{ op: 'replace', path: '/spec/ephemeralContainers/0/image', value: 'alpine' }],
        'application/json-patch+json',
      ),
      422,
      'Invalid',
    );
    expect(changed.message).toMatch(
      /^Pod "target" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be changed\n/,
    );
    // Only the ephemeral containers change through the subresource.
    const r = await http.patch(
      `${PODS}/target/ephemeralcontainers`,
      { metadata: { labels: { x: 'y' } } },
      SMP,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json.metadata.labels?.x).toBeUndefined();
    // And not through the pod itself.
    const direct = failure(
      await http.patch(`${PODS}/target`, debuggerContainer({ name: 'other' }), SMP),
      422,
      'Invalid',
    );
    expect(direct.message).toContain('pod updates may not change fields other than');
  });

  it('kubectl debug -i runs the debug container’s command on a simulated node, its output also in its log', async () => {
    const once = await env.run(
      [
        'debug',
        'target',
        '-i',
        '--image=busybox',
        '--profile=general',
        '-c',
        'echoer',
        '--',
        'echo',
        'hello',
      ],
      {
        input: '',
      },
    );
    expect(once.code, once.stderr).toBe(0);
    expect(once.stdout).toBe('hello\n');
    // No command: the image's shell, reading what the user types.
    const shell = await env.run(
      ['debug', 'target', '-i', '--image=busybox', '--profile=general', '-c', 'shell'],
      {
        input: 'echo "in $HOSTNAME"\nexit\n',
      },
    );
    expect(shell.code, shell.stderr).toBe(0);
    expect(shell.stdout).toBe('in target\n');
    expect(await env.ok(['logs', 'target', '-c', 'echoer'])).toBe(
      'kubeloop: started container "echoer" (image "busybox", command ["echo","hello"])\nhello\n',
    );
  });
});
