/**
 * Process-backed pods (`packages/server/src/controllers/kubelet/process-pods.ts`): the default
 * server (`kubeloop server`, one simulated node) with a local image store holding the sample
 * operator (`kubeloop build`) and a minimal image (`sleep`).
 *
 * - deploy to ready: `kubeloop deploy` of a compiled copy of the sample operator (one replica,
 *   image stored by deploy itself as `kubeloop.local/…:sha-…`), timed from the command's start
 *   until its pod is Ready; the command's own time apart (a no-op `tsc -b`, the generator, the
 *   image copy, the apply).
 * - apply to ready: the sample operator's generated manifests (`kubectl kustomize
 *   examples/sample-controller/config/default`, image `kubeloop.local/sample-controller`, one
 *   replica) applied with kubectl, timed until its pod is Ready. Its startup probe polls /readyz
 *   every second; once it passes the kubelet runs the readiness probe at once.
 *
 *   Both are measured once the server has run for more than the readiness probe's period (10 s):
 *   the kubelet of a server started less than a period ago spreads each probe worker's first
 *   probe at random within a period, as kube's does after a kubelet restart.
 * - control-plane memory per pod: the server's RSS after a full GC with N `sleep` pods running,
 *   minus its RSS before them, over N (the processes' own memory is theirs, not the server's).
 *
 *   npm run build && node bench/dist/benchmarks/process-pods.js [--pods=20 --runs=3]
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type Manifest, standInForCertManager, toYaml } from 'kubeloop/manifests';
import { parseAllDocuments } from 'yaml';
import { HttpClient } from '../lib/http.js';
import { gcHooks, memoryAfterGc } from '../lib/memory.js';
import { idle } from '../lib/proc.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const NS = 'sample-controller-system';

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely, as the JSON they are
type Obj = Record<string, any>;

/** One run's figures. */
export interface ProcessPodsResult {
  /** `kubeloop deploy` (a compiled project) from its start to the operator pod Ready. */
  deployToReadyMs: number;
  /** The `kubeloop deploy` command alone. */
  deployCommandMs: number;
  /** kubectl apply of the generated manifests to the operator pod Ready. */
  applyToReadyMs: number;
  /** Server RSS after GC, per running `sleep` pod. */
  serverRssPerPodMb: number;
  pods: number;
}

/** A copy of the sample operator that compiles on its own, compiled (as after `npm run build`). */
function compiledSampleCopy(dir: string): string {
  const project = join(dir, 'sample');
  mkdirSync(project);
  symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
  for (const f of ['package.json', 'src', 'config'])
    cpSync(join(ROOT, 'examples/sample-controller', f), join(project, f), { recursive: true });
  // Without its webhooks (no cert-manager here; this bench is about the operator's pod).
  const manifests = join(project, 'src/manifests.ts');
  writeFileSync(manifests, readFileSync(manifests, 'utf8').replace(/\n {2}webhooks,\n/, '\n'));
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.base.json'),
      compilerOptions: { rootDir: 'src', outDir: 'dist', tsBuildInfoFile: 'dist/.tsbuildinfo' },
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.test.ts'],
    }),
  );
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', project]);
  return project;
}

async function runOnce(pods: number): Promise<ProcessPodsResult> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'kubeloop-bench-procs-')));
  const store = join(dir, 'images');
  try {
    const project = compiledSampleCopy(dir);
    execFileSync(process.execPath, [
      join(ROOT, 'packages/cli/dist/bin.js'),
      'build',
      join(ROOT, 'examples/sample-controller'),
      '--no-compile',
      '--store',
      store,
      '--name',
      'sample-controller',
    ]);
    mkdirSync(join(store, 'sleeper', 'latest', 'app'), { recursive: true });
    writeFileSync(
      join(store, 'sleeper', 'latest', 'image.json'),
      JSON.stringify({ entrypoint: ['sleep', '3600'] }),
    );
    const gcFile = join(dir, 'gc.json');
    const hooks = gcHooks(gcFile);
    const kubeconfigPath = join(dir, 'kubeconfig');
    const serverStart = performance.now();
    const server = await startKubeloop({
      root: ROOT,
      kubeconfigPath,
      nodeArgs: hooks.nodeArgs,
      env: { ...hooks.env, KUBELOOP_IMAGE_STORE: store },
    });
    const http = new HttpClient(server.endpoint, 4);
    const getJson = async (path: string): Promise<Obj> =>
      JSON.parse((await http.request('GET', path)).body.toString('utf8')) as Obj;
    const kubectl = (args: string[], input?: string) =>
      execFileSync('kubectl', ['--kubeconfig', kubeconfigPath, ...args], {
        encoding: 'utf8',
        ...(input !== undefined && { input }),
      });
    const readyPods = async (ns: string, selector: string) =>
      (
        (await getJson(`/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`))
          .items as Obj[]
      ).filter((p) => p.status?.conditions?.some((c: Obj) => c.type === 'Ready' && c.status === 'True'));
    try {
      // No cert-manager here: its Secret made locally; the webhook configurations are not this bench's.
      const generated = toYaml(
        standInForCertManager(
          parseAllDocuments(kubectl(['kustomize', join(ROOT, 'examples/sample-controller/config/default')]))
            .map((d) => d.toJS() as Manifest)
            .filter((o) => o && !o.kind.endsWith('WebhookConfiguration')),
        ),
      ).replace('image: sample-controller:latest', 'image: kubeloop.local/sample-controller:latest');
      const untilReady = async (start: number): Promise<number> => {
        while ((await readyPods(NS, 'control-plane=controller-manager')).length === 0) await idle(20);
        const ms = performance.now() - start;
        kubectl(['delete', 'deployment', '-n', NS, '--all', '--wait=true']);
        while (((await getJson(`/api/v1/namespaces/${NS}/pods`)).items as Obj[]).length > 0) await idle(50);
        return ms;
      };
      // Past the readiness period of the kubelet's start (see the header).
      await idle(Math.max(0, 10_500 - (performance.now() - serverStart)));
      const deployStart = performance.now();
      execFileSync(
        process.execPath,
        [join(ROOT, 'packages/cli/dist/bin.js'), 'deploy', project, '--kubeconfig', kubeconfigPath],
        { env: { ...process.env, KUBELOOP_IMAGE_STORE: store } },
      );
      const deployCommandMs = performance.now() - deployStart;
      const deployToReadyMs = await untilReady(deployStart);
      const applyStart = performance.now();
      kubectl(['apply', '-f', '-'], generated);
      const applyToReadyMs = await untilReady(applyStart);

      await idle(2000);
      const before = await memoryAfterGc(server.pid, gcFile);
      for (let i = 0; i < pods; i++) {
        const pod = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `sleeper-${i}`, labels: { app: 'sleeper' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'sleep', image: 'kubeloop.local/sleeper' }],
          },
        };
        await http.request('POST', '/api/v1/namespaces/default/pods', JSON.stringify(pod), {
          'content-type': 'application/json',
        });
      }
      while ((await readyPods('default', 'app=sleeper')).length < pods) await idle(50);
      await idle(2000);
      const after = await memoryAfterGc(server.pid, gcFile);
      return {
        deployToReadyMs,
        deployCommandMs,
        applyToReadyMs,
        serverRssPerPodMb: (after.rssMb - before.rssMb) / pods,
        pods,
      };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the benchmark `runs` times; medians. */
export async function runProcessPods(o: { pods: number; runs: number }): Promise<ProcessPodsResult[]> {
  const results: ProcessPodsResult[] = [];
  for (let i = 0; i < o.runs; i++) results.push(await runOnce(o.pods));
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { pods: { type: 'string', default: '20' }, runs: { type: 'string', default: '3' } },
  });
  const results = await runProcessPods({ pods: Number(values.pods), runs: Number(values.runs) });
  const m = (f: (r: ProcessPodsResult) => number) => median(results.map(f));
  process.stdout.write(
    `${JSON.stringify(results)}\n` +
      `kubeloop deploy to ready (generated manifests):      ${m((r) => r.deployToReadyMs).toFixed(0)} ms (target < 3000), the command ${m((r) => r.deployCommandMs).toFixed(0)} ms\n` +
      `kubectl apply to ready (generated manifests):        ${m((r) => r.applyToReadyMs).toFixed(0)} ms\n` +
      `control-plane RSS per process-backed pod:             ${m((r) => r.serverRssPerPodMb).toFixed(2)} MB (target < 5)\n`,
  );
}
