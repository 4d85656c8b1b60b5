/**
 * Creating custom resources (a 20-field schema with defaults and two CEL rules) against creating
 * ConfigMaps, on the same kubeloop server in the same run, with the method of the create
 * benchmark (`runCreates`: concurrent keep-alive clients, each sending its next create as soon
 * as its previous one is answered). A third kind, ConfigMaps of the Gadget's size, tells the
 * bigger body's cost from the schema's. The runs alternate the kinds in rounds of ABC–CBA
 * blocks so that none always runs on a warmer or a fuller server, or while a neighbour is busy.
 * Target: a custom resource create costs at most 1.25× a (300 B) ConfigMap create (server CPU
 * per create; time per create is printed beside it).
 *
 *   npm run build && node bench/dist/benchmarks/crd-create.js
 *   node bench/dist/benchmarks/crd-create.js --creates=2000 --clients=16 --rounds=4 --cpu-prof=/tmp/prof
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Response } from '../lib/http.js';
import { OBJECT_BYTES } from '../lib/objects.js';
import { startKubeloop } from '../lib/servers.js';
import { percentile } from '../lib/stats.js';
import { kubeloopTarget, type Target } from '../lib/targets.js';
import { type CreateResult, combineCreates, runCreates } from './create.js';

const GROUP = 'bench.kubeloop.dev';

/** The benchmark's CRD: 20 spec fields of every common kind, 3 defaults, 2 CEL rules. */
export const BENCH_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `gadgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', shortNames: ['gg'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: 'Image', type: 'string', jsonPath: '.spec.image' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['image', 'replicas'],
                'x-kubernetes-validations': [
                  {
                    rule: 'self.minReplicas <= self.maxReplicas',
                    message: 'minReplicas must not exceed maxReplicas',
                  },
                  {
                    rule: "self.image.startsWith('registry.example.com/')",
                    message: 'images come from registry.example.com',
                  },
                ],
                properties: {
                  image: { type: 'string', maxLength: 128 },
                  replicas: { type: 'integer', minimum: 0, maximum: 100 },
                  minReplicas: { type: 'integer', minimum: 0, default: 1 },
                  maxReplicas: { type: 'integer', maximum: 1000, default: 10 },
                  paused: { type: 'boolean' },
                  tier: { type: 'string', enum: ['frontend', 'backend', 'batch'] },
                  owner: { type: 'string', pattern: '^[a-z][a-z0-9-]*$', maxLength: 63 },
                  ratio: { type: 'number', minimum: 0, maximum: 1 },
                  port: { 'x-kubernetes-int-or-string': true },
                  timeoutSeconds: { type: 'integer', format: 'int32', default: 30 },
                  createdAt: { type: 'string', format: 'date-time' },
                  args: { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 64 } },
                  tags: {
                    type: 'array',
                    maxItems: 8,
                    'x-kubernetes-list-type': 'set',
                    items: { type: 'string', maxLength: 32 },
                  },
                  env: {
                    type: 'object',
                    maxProperties: 16,
                    additionalProperties: { type: 'string', maxLength: 256 },
                  },
                  resources: {
                    type: 'object',
                    properties: { cpu: { type: 'string' }, memory: { type: 'string' } },
                  },
                  schedule: { type: 'string', maxLength: 64 },
                  priority: { type: 'integer', minimum: -10, maximum: 10 },
                  region: { type: 'string', maxLength: 32 },
                  debug: { type: 'boolean' },
                  note: { type: 'string', maxLength: 256 },
                },
              },
              status: {
                type: 'object',
                properties: { readyReplicas: { type: 'integer' }, phase: { type: 'string' } },
              },
            },
          },
        },
      },
    ],
  },
};

/** A Gadget with every field set but the defaulted ones. */
export function gadget(namespace: string, name: string): string {
  return JSON.stringify({
    apiVersion: `${GROUP}/v1`,
    kind: 'Gadget',
    metadata: { name, namespace, labels: { app: 'kubeloop-bench', tier: 'small' } },
    spec: {
      image: 'registry.example.com/app:1.2.3',
      replicas: 3,
      paused: false,
      tier: 'backend',
      owner: 'team-a',
      ratio: 0.5,
      port: 'http',
      createdAt: '2024-01-01T00:00:00Z',
      args: ['--verbose', '--port=8080'],
      tags: ['a', 'b'],
      env: { MODE: 'prod', LEVEL: 'info' },
      resources: { cpu: '500m', memory: '256Mi' },
      schedule: '*/5 * * * *',
      priority: 1,
      region: 'eu-west-1',
      debug: false,
      note: 'bench',
    },
  });
}

/**
 * A ConfigMap of the Gadget's size, holding the same values as flat strings: beside the 300 B
 * ConfigMap of the create benchmark it separates what the bigger body costs (parsing, storing,
 * answering) from what the schema costs (pruning, defaulting, validation, CEL).
 */
export function sizedConfigMap(namespace: string, name: string): string {
  const base = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { app: 'kubeloop-bench', tier: 'small' } },
    data: {
      image: 'registry.example.com/app:1.2.3',
      replicas: '3',
      tier: 'backend',
      owner: 'team-a',
      port: 'http',
      createdAt: '2024-01-01T00:00:00Z',
      args: '--verbose --port=8080',
      env: 'MODE=prod,LEVEL=info',
      schedule: '*/5 * * * *',
      region: 'eu-west-1',
      payload: '',
    },
  };
  const pad = Buffer.byteLength(gadget(namespace, name)) - JSON.stringify(base).length;
  base.data.payload = 'x'.repeat(Math.max(0, pad));
  return JSON.stringify(base);
}

/** The run's figures: the three kinds, and the custom resource over ConfigMap ratios. */
export interface CrdCreateResult {
  configMaps: CreateResult;
  customResources: CreateResult;
  /** ConfigMaps of the Gadget's size. */
  sizedConfigMaps: CreateResult;
  /** Server CPU per create, custom resource over ConfigMap (the cost the target is about). */
  serverCpuRatio: number;
  /** Time per create at the same concurrency (inverse throughput), custom resource over ConfigMap. */
  timeRatio: number;
  p50Ratio: number;
  /** Server CPU per create, custom resource over the ConfigMap of its size: the schema's own cost. */
  sizedServerCpuRatio: number;
  requestBytes: { configMap: number; customResource: number };
}

/** A target whose `create` posts ConfigMaps of the Gadget's size. */
function sizedTarget(base: Target): Target {
  return {
    ...base,
    async create(ns: string, name: string): Promise<Response> {
      const res = await base.http.request(
        'POST',
        `/api/v1/namespaces/${ns}/configmaps`,
        sizedConfigMap(ns, name),
      );
      if (res.status !== 201)
        throw new Error(`create configmap ${ns}/${name}: ${res.status} ${res.body.toString()}`);
      return res;
    },
  };
}

/** A target whose `create` posts Gadgets instead of ConfigMaps. */
function gadgetTarget(base: Target): Target {
  return {
    ...base,
    async create(ns: string, name: string): Promise<Response> {
      const res = await base.http.request(
        'POST',
        `/apis/${GROUP}/v1/namespaces/${ns}/gadgets`,
        gadget(ns, name),
      );
      if (res.status !== 201)
        throw new Error(`create gadget ${ns}/${name}: ${res.status} ${res.body.toString()}`);
      return res;
    },
    async deleteAll(ns: string): Promise<void> {
      const res = await base.http.request('DELETE', `/apis/${GROUP}/v1/namespaces/${ns}/gadgets`);
      if (res.status !== 200) throw new Error(`deletecollection gadgets ${ns}: ${res.status}`);
    },
  };
}

/**
 * Runs the comparison on a server that is already up: installs the CRD, warms up every path,
 * then creates `total` objects of each kind from `clients` clients, in `rounds` rounds of
 * ABC–CBA blocks so that a busy neighbour or a fuller store weighs on every kind alike.
 */
export async function runCrdCreates(
  base: Target,
  total: number,
  clients: number,
  opts: { warmup?: number; rounds?: number } = {},
): Promise<CrdCreateResult> {
  const warmup = opts.warmup ?? 1000;
  const rounds = Math.max(1, opts.rounds ?? 4);
  const res = await base.http.request(
    'POST',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    JSON.stringify(BENCH_CRD),
  );
  if (res.status !== 201) throw new Error(`create CRD: ${res.status} ${res.body.toString()}`);
  const cr = gadgetTarget(base);
  // Served as soon as its names are accepted; wait until a list answers.
  for (let i = 0; ; i++) {
    const r = await base.http.request('GET', `/apis/${GROUP}/v1/gadgets?limit=1`);
    if (r.status === 200) break;
    if (i > 400) throw new Error(`the CRD was not served: ${r.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const sized = sizedTarget(base);
  for (const ns of ['warmup', 'warmup-sized', 'bench-cm', 'bench-cr', 'bench-sized']) await base.prepare(ns);
  await runCreates(base, 'warmup', warmup, clients);
  await runCreates(cr, 'warmup', warmup, clients);
  await runCreates(sized, 'warmup-sized', warmup, clients);
  await base.deleteAll('warmup');
  await base.deleteAll('warmup-sized');
  await cr.deleteAll('warmup');

  // Each kind: its target, namespace, blocks, latencies and how many it created so far.
  const kinds = [
    { target: base, ns: 'bench-cm', parts: [] as CreateResult[], latencies: [] as number[], done: 0 },
    { target: cr, ns: 'bench-cr', parts: [] as CreateResult[], latencies: [] as number[], done: 0 },
    { target: sized, ns: 'bench-sized', parts: [] as CreateResult[], latencies: [] as number[], done: 0 },
  ];
  const block = Math.max(1, Math.floor(total / (2 * rounds)));
  for (let r = 0; r < rounds; r++) {
    // ABC then CBA: every kind runs as often early and late in a round.
    for (const k of [...kinds, ...[...kinds].reverse()]) {
      const n = r === rounds - 1 && k.parts.length === 2 * rounds - 1 ? total - k.done : block;
      const timed: Target = {
        ...k.target,
        async create(ns, name) {
          const res = await k.target.create(ns, name);
          k.latencies.push(res.totalMs);
          return res;
        },
      };
      k.parts.push(await runCreates(timed, k.ns, n, clients, k.done));
      k.done += n;
    }
  }
  const [configMaps, customResources, sizedConfigMaps] = kinds.map((k) =>
    combineCreates(k.parts, k.latencies),
  ) as [CreateResult, CreateResult, CreateResult];
  return {
    configMaps,
    customResources,
    sizedConfigMaps,
    serverCpuRatio: customResources.serverCpuMsPerCreate / configMaps.serverCpuMsPerCreate,
    timeRatio: configMaps.perSecond / customResources.perSecond,
    p50Ratio: customResources.p50Ms / configMaps.p50Ms,
    sizedServerCpuRatio: customResources.serverCpuMsPerCreate / sizedConfigMaps.serverCpuMsPerCreate,
    requestBytes: {
      configMap: OBJECT_BYTES,
      customResource: Buffer.byteLength(gadget('bench-cr', 'cm-000000')),
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      creates: { type: 'string', default: '10000' },
      clients: { type: 'string', default: '16' },
      warmup: { type: 'string', default: '1000' },
      rounds: { type: 'string', default: '4' },
      'cpu-prof': { type: 'string' },
    },
  });
  const creates = Number(values.creates);
  const clients = Number(values.clients);
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-crd-create-'));
  const server = await startKubeloop({
    root,
    kubeconfigPath: join(work, 'kubeconfig'),
    ...(values['cpu-prof'] && { cpuProfDir: values['cpu-prof'] }),
  });
  const target = kubeloopTarget(server, clients);
  const log = (s: string) => process.stdout.write(`${s}\n`);
  try {
    log(
      `creating ${creates.toLocaleString('en-US')} each of ConfigMaps, Gadgets and Gadget-sized ConfigMaps, ${clients} clients, ${values.rounds} rounds of ABC-CBA blocks (${server.name})`,
    );
    const r = await runCrdCreates(target, creates, clients, {
      warmup: Number(values.warmup),
      rounds: Number(values.rounds),
    });
    const row = (name: string, c: CreateResult) =>
      `  ${name.padEnd(34)} ${Math.round(c.perSecond).toLocaleString('en-US').padStart(7)}/s   p50 ${c.p50Ms.toFixed(2).padStart(6)} ms   p99 ${c.p99Ms.toFixed(2).padStart(6)} ms   server CPU ${c.serverCpuMsPerCreate.toFixed(3)} ms/create`;
    log(row(`ConfigMap (${r.requestBytes.configMap} B)`, r.configMaps));
    log(row(`Gadget, 20 fields + 2 CEL (${r.requestBytes.customResource} B)`, r.customResources));
    log(row(`ConfigMap (${r.requestBytes.customResource} B)`, r.sizedConfigMaps));
    const verdict = (x: number) => (x <= 1.25 ? 'PASS' : 'MISS');
    log(
      `  server CPU per create: ${r.serverCpuRatio.toFixed(2)}× the ConfigMap's (target ≤ 1.25×) ${verdict(r.serverCpuRatio)}`,
    );
    log(
      `  time per create:       ${r.timeRatio.toFixed(2)}× the ConfigMap's (target ≤ 1.25×) ${verdict(r.timeRatio)}`,
    );
    log(`  p50 latency:           ${r.p50Ratio.toFixed(2)}× the ConfigMap's`);
    log(
      `  server CPU per create: ${r.sizedServerCpuRatio.toFixed(2)}× a ConfigMap of the same size (the schema's own cost)`,
    );
    log(
      `  other processes used ${r.configMaps.otherCpuPercent.toFixed(0)}% / ${r.customResources.otherCpuPercent.toFixed(0)}% / ${r.sizedConfigMaps.otherCpuPercent.toFixed(0)}% of the machine's CPU during the runs`,
    );
  } finally {
    await target.close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `crd-create failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
