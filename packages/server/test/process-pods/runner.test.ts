import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, ConfigMap, Pod, Secret } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { writeTestImage } from './app.js';

let k: KubectlEnv;
let client: Client;
let imageDir: string;
let imageDirV2: string;
let marks: string;
const IMAGE = 'example.com/test-app:dev';
const IMAGE_V2 = 'example.com/test-app:v2';

beforeAll(async () => {
  imageDir = writeTestImage();
  imageDirV2 = writeTestImage();
  marks = mkdtempSync(join(tmpdir(), 'kubeloop-marks-'));
  k = await startKubectlEnv({
    nodes: {
      count: 1,
      processes: {
        images: {
          [IMAGE]: { dir: imageDir, entrypoint: ['node', 'server.js'] },
          [IMAGE_V2]: { dir: imageDirV2, entrypoint: ['node', 'server.js'], env: { APP_VERSION: 'v2' } },
        },
        backoffScale: 0.01,
        syncIntervalMs: 200,
      },
    },
  });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
  rmSync(imageDir, { recursive: true, force: true });
  rmSync(imageDirV2, { recursive: true, force: true });
  rmSync(marks, { recursive: true, force: true });
});

/** GET from a pod's IP; the body as text. */
function get(ip: string, path: string, port = 8080): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: ip, port, path }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const ready = (name: string) =>
  eventually(
    async () => {
      const p = await client.api(Pod, 'default').get(name);
      return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
    },
    15_000,
    `pod ${name} ready`,
  );

const pod = (
  name: string,
  container: Record<string, unknown> = {},
  spec: Record<string, unknown> = {},
): Pod =>
  ({
    metadata: { name, labels: { app: name } },
    spec: {
      nodeName: 'kubeloop-node-1',
      terminationGracePeriodSeconds: 1,
      ...spec,
      containers: [
        {
          name: 'app',
          image: IMAGE,
          ports: [{ name: 'http', containerPort: 8080 }],
          // Ready once it serves (a pod without a readiness probe is ready as soon as it runs).
          readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1 },
          ...container,
        },
      ],
    },
  }) as Pod;

describe('process-backed pods', () => {
  it('run the container as a process with its env, volumes, working directory and ServiceAccount token', async () => {
    await client.api(ConfigMap, 'default').create({
      metadata: { name: 'app-config' },
      data: { GREETING: 'hello', 'app.conf': 'listen 8080\n' },
    });
    await client
      .api(Secret, 'default')
      .create({ metadata: { name: 'app-secret' }, stringData: { password: 's3cret' } });
    await client.api(Pod, 'default').create(
      pod(
        'env',
        {
          env: [
            { name: 'MODE', value: 'prod' },
            { name: 'DERIVED', value: '$(MODE)-x' },
            { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'GREETING' } } },
            { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'password' } } },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
          ],
          envFrom: [{ configMapRef: { name: 'app-config' }, prefix: 'CFG_' }],
          resources: { limits: { memory: '64Mi' } },
          volumeMounts: [
            { name: 'cfg', mountPath: '/etc/app' },
            { name: 'sec', mountPath: '/etc/secret', readOnly: true },
          ],
        },
        {
          volumes: [
            { name: 'cfg', configMap: { name: 'app-config' } },
            { name: 'sec', secret: { secretName: 'app-secret' } },
          ],
        },
      ),
    );
    const p = await ready('env');
    const ip = p.status?.podIP ?? '';
    expect(ip).toMatch(/^127\.244\.\d+\.\d+$/);
    const env = JSON.parse((await get(ip, '/env')).body) as Record<string, string>;
    expect(env).toMatchObject({
      MODE: 'prod',
      DERIVED: 'prod-x',
      GREETING: 'hello',
      PASSWORD: 's3cret',
      POD_NAME: 'env',
      POD_IP: ip,
      MEM: '64',
      CFG_GREETING: 'hello',
      HOSTNAME: 'env',
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: new URL(k.cp.url).port,
    });
    const root = env.KUBELOOP_ROOT ?? '';
    const cwd = JSON.parse((await get(ip, '/cwd')).body) as { cwd: string; files: string[] };
    expect(cwd.cwd).toBe(join(root, 'app'));
    expect(cwd.files).toEqual(expect.arrayContaining(['server.js', 'package.json']));
    expect((await get(ip, '/file?path=/etc/app/app.conf')).body).toBe('listen 8080\n');
    expect((await get(ip, '/file?path=/etc/secret/password')).body).toBe('s3cret');
    expect((await get(ip, '/file?path=/var/run/secrets/kubernetes.io/serviceaccount/namespace')).body).toBe(
      'default',
    );
    // The projected token authenticates as the pod's ServiceAccount, bound to the pod.
    const review = JSON.parse((await get(ip, '/whoami')).body);
    expect(review.status.userInfo.username).toBe('system:serviceaccount:default:default');
    expect(review.status.userInfo.extra['authentication.kubernetes.io/pod-name']).toEqual(['env']);
  });

  it('bring ConfigMap volumes up to date when the ConfigMap changes', async () => {
    const p = await ready('env');
    await client.api(ConfigMap, 'default').patch('app-config', { data: { 'app.conf': 'listen 9090\n' } });
    await eventually(
      async () => (await get(p.status?.podIP ?? '', '/file?path=/etc/app/app.conf')).body === 'listen 9090\n',
      10_000,
      'the new content in the volume',
    );
  });

  it('give each pod its own loopback address, so two pods listen on the same port', async () => {
    await client.api(Pod, 'default').create(pod('twin-a'));
    await client.api(Pod, 'default').create(pod('twin-b'));
    const [a, b] = await Promise.all([ready('twin-a'), ready('twin-b')]);
    expect(a.status?.podIP).not.toBe(b.status?.podIP);
    const hostA = JSON.parse((await get(a.status?.podIP ?? '', '/env')).body).HOSTNAME;
    const hostB = JSON.parse((await get(b.status?.podIP ?? '', '/env')).body).HOSTNAME;
    expect([hostA, hostB]).toEqual(['twin-a', 'twin-b']);
  });

  it('restart a crashing container with the crash-loop back-off, keeping its last state', async () => {
    await client.api(Pod, 'default').create(pod('crash', { args: ['exit', '3'] }));
    const p = await eventually(
      async () => {
        const got = await client.api(Pod, 'default').get('crash');
        const s = got.status?.containerStatuses?.[0];
        return s && (s.restartCount ?? 0) >= 2 && s.state?.waiting?.reason === 'CrashLoopBackOff'
          ? got
          : undefined;
      },
      15_000,
      'CrashLoopBackOff',
    );
    const s = p.status?.containerStatuses?.[0];
    expect(p.status?.phase).toBe('Running');
    expect(s?.state?.waiting?.message).toMatch(
      /^back-off \d+s restarting failed container=app pod=crash_default\(/,
    );
    expect(s?.lastState?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(s?.ready).toBe(false);
  });

  it("restart a container whose image the pod's spec changes, from the new image", async () => {
    await client.api(Pod, 'default').create(pod('reimage'));
    const before = (await ready('reimage')).status?.containerStatuses?.[0];
    await k.ok(['set', 'image', 'pod/reimage', `app=${IMAGE_V2}`]);
    const after = await eventually(
      async () => {
        const p = await client.api(Pod, 'default').get('reimage');
        const s = p.status?.containerStatuses?.[0];
        return s?.image === IMAGE_V2 && s.state?.running && s.ready ? p : undefined;
      },
      15_000,
      'running the new image',
    );
    const s = after.status?.containerStatuses?.[0];
    expect(s?.restartCount).toBe(1);
    expect(s?.imageID).not.toBe(before?.imageID);
    expect(s?.containerID).not.toBe(before?.containerID);
    expect(s?.lastState?.terminated).toBeDefined();
    expect(JSON.parse((await get(after.status?.podIP ?? '', '/env')).body).APP_VERSION).toBe('v2');
    expect(await k.ok(['logs', 'reimage', '--previous'])).toContain('definition changed');
  });

  it('kill a container whose memory passes its limit: OOMKilled, exit code 137', async () => {
    await client.api(Pod, 'default').create(
      pod(
        'hungry',
        {
          // 16 MiB more resident memory every 50 ms, kept.
          command: ['node', '-e', 'const a = []; setInterval(() => a.push(Buffer.alloc(16 << 20, 1)), 50)'],
          resources: { limits: { memory: '96Mi' } },
          readinessProbe: undefined,
        },
        { restartPolicy: 'Never' },
      ),
    );
    const failed = await eventually(
      async () => {
        const got = await client.api(Pod, 'default').get('hungry');
        return got.status?.phase === 'Failed' ? got : undefined;
      },
      15_000,
      'OOMKilled',
    );
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 137,
      reason: 'OOMKilled',
    });
  });

  it('refuse runAsNonRoot for an image that runs as root, as the kubelet: CreateContainerConfigError', async () => {
    await client
      .api(Pod, 'default')
      .create(pod('rooted', { readinessProbe: undefined }, { securityContext: { runAsNonRoot: true } }));
    const p = await eventually(
      async () => {
        const got = await client.api(Pod, 'default').get('rooted');
        const s = got.status?.containerStatuses?.[0];
        return s?.state?.waiting?.reason === 'CreateContainerConfigError' ? got : undefined;
      },
      15_000,
      'CreateContainerConfigError',
    );
    expect(p.status?.phase).toBe('Pending');
    expect(p.status?.containerStatuses?.[0]?.state?.waiting?.message).toBe(
      `container has runAsNonRoot and image will run as root (pod: "rooted_default(${p.metadata?.uid})", container: app)`,
    );
  });

  it('end a pod per its restartPolicy: Failed with the exit code under Never, Succeeded under OnFailure', async () => {
    await client
      .api(Pod, 'default')
      .create(pod('never', { args: ['exit', '4'] }, { restartPolicy: 'Never' }));
    await client
      .api(Pod, 'default')
      .create(pod('onfailure', { args: ['exit', '0'] }, { restartPolicy: 'OnFailure' }));
    const failed = await eventually(async () => {
      const got = await client.api(Pod, 'default').get('never');
      return got.status?.phase === 'Failed' ? got : undefined;
    });
    expect(failed.status?.containerStatuses?.[0]).toMatchObject({
      restartCount: 0,
      state: { terminated: { exitCode: 4, reason: 'Error' } },
    });
    const done = await eventually(async () => {
      const got = await client.api(Pod, 'default').get('onfailure');
      return got.status?.phase === 'Succeeded' ? got : undefined;
    });
    expect(done.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: 'Completed',
    });
  });

  it('terminate a deleted pod with SIGTERM, then SIGKILL after its grace period', async () => {
    const pidFile = join(marks, 'stubborn.pid');
    const termFile = join(marks, 'stubborn.term');
    await client.api(Pod, 'default').create(
      pod('stubborn', {
        args: ['stubborn'],
        env: [
          { name: 'PID_FILE', value: pidFile },
          { name: 'TERM_FILE', value: termFile },
        ],
      }),
    );
    await ready('stubborn');
    const pid = Number(
      readdirSync(marks)
        .find((f) => f.startsWith('stubborn.pid.'))
        ?.split('.')
        .pop(),
    );
    expect(pid).toBeGreaterThan(0);
    await client.api(Pod, 'default').delete('stubborn');
    await eventually(
      async () => {
        const gone = await client
          .api(Pod, 'default')
          .get('stubborn')
          .then(
            () => false,
            () => true,
          );
        return gone;
      },
      15_000,
      'pod gone',
    );
    // It was asked to stop, ignored it, and was killed.
    expect(readFileSync(termFile, 'utf8')).toBe('SIGTERM');
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  });

  it('run init containers one at a time to completion before the containers; a failed one fails the pod under Never', async () => {
    const init = (name: string, code: string) => ({ name, image: IMAGE, args: ['exit', code] });
    await client
      .api(Pod, 'default')
      .create(pod('inits', {}, { initContainers: [init('first', '0'), init('second', '0')] }));
    const p = await ready('inits');
    expect(
      p.status?.initContainerStatuses?.map((s) => [
        s.name,
        s.state?.terminated?.exitCode,
        s.state?.terminated?.reason,
      ]),
    ).toEqual([
      ['first', 0, 'Completed'],
      ['second', 0, 'Completed'],
    ]);
    expect(p.status?.conditions?.find((c) => c.type === 'Initialized')?.status).toBe('True');

    await client
      .api(Pod, 'default')
      .create(
        pod(
          'init-fails',
          {},
          { restartPolicy: 'Never', initContainers: [init('broken', '2'), init('never-run', '0')] },
        ),
      );
    const failed = await eventually(
      async () => {
        const got = await client.api(Pod, 'default').get('init-fails');
        return got.status?.phase === 'Failed' ? got : undefined;
      },
      15_000,
      'the pod failed',
    );
    expect(failed.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode).toBe(2);
    expect(failed.status?.initContainerStatuses?.[1]?.state?.waiting?.reason).toBe('PodInitializing');
    expect(failed.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('PodInitializing');
    expect(failed.status?.conditions?.find((c) => c.type === 'Initialized')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotInitialized',
    });
  });
});
