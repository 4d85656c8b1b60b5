/**
 * Informers of custom objects: time from start to synced, and memory growth (V8 heap and RSS,
 * both after GC) for 10,000 and 50,000 small custom objects, `kubeloop/runtime` side by side
 * with `@kubernetes/client-node` 1.x against the same local control plane in the same run.
 *
 * Each measurement runs in a fresh Node process (`--expose-gc`), so that one client's garbage,
 * JIT state or connection pool never counts for the other; runs of the clients alternate and
 * the median is reported.
 *
 *   npm run build && node bench/dist/benchmarks/informer.js
 *   node bench/dist/benchmarks/informer.js --sizes=10000 --runs=5
 *   node bench/dist/benchmarks/informer.js --kubeconfig=/tmp/anchor/run/admin.kubeconfig --sizes=10000
 *
 * With `--kubeconfig=PATH` the same runs go against any API server (a real kube-apiserver, e.g.
 * `../shared/tools/anchor/`) instead of a fresh local control plane; objects already there are
 * counted and only the missing ones created. client-go joins the comparison when the anchor's
 * `anchor-informer` is built (`--client-go=PATH`, default `$ANCHOR_BIN/anchor-informer` or
 * `/tmp/anchor/bin/anchor-informer`): client-go 1.24's dynamic SharedInformer with an add
 * handler, its memory read by the Go process itself (heap after GC and VmRSS growth).
 *
 * The objects are what the server stores, `managedFields` included (as a real kube-apiserver,
 * the local control plane records them on every write; the bench prints whether they are
 * there): kubeloop's informers drop them by default, client-node's keep them.
 *
 * Variants of kubeloop: the default informer (watch-list where the server supports it, which
 * the local control plane does; with no handler, objects are kept as received until read), with
 * an `onAdd` handler (every object decoded as it arrives, as in a controller), paged lists
 * (`watchList: false`, 500 per page, as client-go), and without freezing cached objects (to
 * measure what freezing costs).
 *
 * "Heap" is V8's heap plus the memory of Buffers (`external`): a deferred object's text is
 * kept in a Buffer, and leaving it out would flatter kubeloop.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import {
  Client,
  CustomResourceDefinition,
  isAlreadyExists,
  type KubeObject,
  Namespace,
  type ResourceDescriptor,
} from 'kubeloop/client';
import { startKubeloop } from '../lib/servers.js';
import { median, msSince } from '../lib/stats.js';

const GROUP = 'bench.kubeloop.dev';
const VERSION = 'v1';
const PLURAL = 'widgets';
const NAMESPACE = 'bench';

interface Widget extends KubeObject {
  spec?: { size?: number; color?: string; replicas?: number };
}

const Widget: ResourceDescriptor<Widget> = {
  group: GROUP,
  version: VERSION,
  kind: 'Widget',
  plural: PLURAL,
  namespaced: true,
};

/** The informers compared. */
export const VARIANTS = [
  'kubeloop',
  'kubeloop-handler',
  'kubeloop-list',
  'kubeloop-nofreeze',
  'client-node',
] as const;
/** A compared informer: one of {@link VARIANTS}, or client-go (when its binary is there). */
export type Variant = (typeof VARIANTS)[number] | 'client-go';

const LABELS: Record<Variant, string> = {
  kubeloop: 'kubeloop/runtime Informer',
  'kubeloop-handler': 'kubeloop (with a handler)',
  'kubeloop-list': 'kubeloop (paged list)',
  'kubeloop-nofreeze': 'kubeloop (no freeze)',
  'client-node': '@kubernetes/client-node 1.x',
  'client-go': 'client-go 1.24 (dynamic, handler)',
};

/** One measurement, made by a child process. */
export interface Sample {
  syncedMs: number;
  heapGrowthMb: number;
  rssGrowthMb: number;
  objects: number;
}

/** Medians of one variant at one size. */
export interface VariantResult {
  variant: Variant;
  label: string;
  syncedMs: number;
  heapGrowthMb: number;
  rssGrowthMb: number;
  runs: Sample[];
}

/** The benchmark at one size. */
export interface InformerSizeResult {
  objects: number;
  variants: VariantResult[];
  /** kubeloop (default) / client-node: below 1 is better; the target is ≤ 0.5. */
  ratio: { syncedMs: number; heapGrowthMb: number; rssGrowthMb: number };
  /** kubeloop (default) / client-go, when it ran: targets ≤ 1.0 (time) and ≤ 0.5 (RSS growth). */
  ratioGo?: { syncedMs: number; rssGrowthMb: number };
}

/** The issue's reference figures (real kube-apiserver 1.24) and targets. */
export const INFORMER_REFERENCE = {
  clientNode10kSyncSeconds: 1.45,
  clientGo10kSyncSeconds: 0.8,
  clientGo10kHeapMb: 44,
  targetRatio: 0.5,
} as const;

const MB = 2 ** 20;

/** A small custom object (about 300 bytes of JSON as sent; the server adds metadata). */
function widget(i: number): Widget {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Widget',
    metadata: { name: `w-${String(i).padStart(6, '0')}`, labels: { app: 'bench', shard: String(i % 16) } },
    spec: { size: i, color: i % 2 ? 'blue' : 'green', replicas: 3 },
  };
}

/** Creates the Widget CRD and waits until its resource is served. */
export async function installCrd(client: Client): Promise<void> {
  await client.api(CustomResourceDefinition).create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: PLURAL, singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    size: { type: 'integer' },
                    color: { type: 'string' },
                    replicas: { type: 'integer' },
                  },
                },
              },
            },
          },
        },
      ],
    },
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await client.api(Widget, NAMESPACE).list({ limit: 1 });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Creates widgets `from` … `to - 1` with `concurrency` requests in flight. */
export async function createWidgets(
  client: Client,
  from: number,
  to: number,
  concurrency = 32,
): Promise<void> {
  const api = client.api(Widget, NAMESPACE);
  let next = from;
  const worker = async () => {
    while (next < to) await api.create(widget(next++));
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Where the anchor's client-go informer is, if built. */
export function clientGoInformer(explicit?: string): string | undefined {
  const path = explicit ?? join(process.env.ANCHOR_BIN ?? '/tmp/anchor/bin', 'anchor-informer');
  return existsSync(path) ? path : undefined;
}

/**
 * One client-go measurement: `anchor-informer` syncs the collection with an add handler and
 * prints `informer synced N … in S s; heap … (+H MB over …); RSS R MB (+G MB)` (Go's MB: 10^6).
 */
function sampleGo(binary: string, kubeconfigPath: string, expected: number): Promise<Sample> {
  const args = ['-kubeconfig', kubeconfigPath, '-group', GROUP, '-version', VERSION, '-resource', PLURAL];
  return new Promise((resolvePromise, reject) => {
    execFile(binary, [...args, '-namespace', NAMESPACE], { timeout: 300_000 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`client-go run failed: ${err.message}\n${stderr}`));
        return;
      }
      const m =
        /informer synced (\d+) .* in ([\d.]+) s; .*\(\+(-?[\d.]+) MB over .*RSS [\d.]+ MB \(\+(-?[\d.]+) MB\)/.exec(
          stdout,
        );
      if (!m) {
        reject(new Error(`client-go printed no result:\n${stdout}\n${stderr}`));
        return;
      }
      const objects = Number(m[1]);
      if (objects !== expected) {
        reject(new Error(`client-go cached ${objects} objects, expected ${expected}`));
        return;
      }
      resolvePromise({
        syncedMs: Number(m[2]) * 1000,
        heapGrowthMb: (Number(m[3]) * 1e6) / MB,
        rssGrowthMb: (Number(m[4]) * 1e6) / MB,
        objects,
      });
    });
  });
}

/** Settles when `p` does or fails with 409 AlreadyExists. */
async function ignoreExists(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/** The widgets in the bench namespace. */
async function countWidgets(client: Client): Promise<number> {
  let n = 0;
  for await (const page of client.api(Widget, NAMESPACE).listPages({ limit: 5000, metadataOnly: true }))
    n += page.items?.length ?? 0;
  return n;
}

/** Runs one measurement in a fresh process. */
function sample(
  kubeconfigPath: string,
  variant: Variant,
  expected: number,
  goBinary?: string,
): Promise<Sample> {
  if (variant === 'client-go') {
    if (!goBinary) throw new Error('no client-go informer binary (build ../shared/tools/anchor)');
    return sampleGo(goBinary, kubeconfigPath, expected);
  }
  const self = fileURLToPath(import.meta.url);
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', self, `--child=${variant}`, `--kubeconfig=${kubeconfigPath}`, `--expect=${expected}`],
      { maxBuffer: 16 * MB, timeout: 300_000 },
      (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`${variant} run failed: ${err.message}\n${stderr}`));
          return;
        }
        const last = stdout.trim().split('\n').at(-1) ?? '';
        try {
          resolvePromise(JSON.parse(last) as Sample);
        } catch {
          reject(new Error(`${variant} run printed no result:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

/**
 * Measures every variant `runs` times at each size, creating objects as sizes grow. The server
 * must be empty of Widgets (a fresh `kubeloop server`); `kubeconfigPath` reaches it.
 */
export async function runInformer(
  kubeconfigPath: string,
  options: {
    sizes: readonly number[];
    runs: number;
    variants?: readonly Variant[];
    /** The client-go informer binary, for the `client-go` variant. */
    clientGo?: string;
    log?: (s: string) => void;
  },
): Promise<InformerSizeResult[]> {
  const log = options.log ?? (() => undefined);
  const variants = options.variants ?? VARIANTS;
  const client = await Client.fromKubeconfig({ path: kubeconfigPath });
  const results: InformerSizeResult[] = [];
  try {
    // Idempotent, for a server that is not fresh (`--kubeconfig`): what exists is kept.
    await ignoreExists(client.api(Namespace).create({ metadata: { name: NAMESPACE } }));
    await ignoreExists(installCrd(client));
    let have = await countWidgets(client);
    if (have > 0) log(`${have.toLocaleString('en-US')} widgets exist already`);
    for (const size of [...options.sizes].sort((a, b) => a - b)) {
      if (size < have) {
        log(`skipping ${size.toLocaleString('en-US')}: ${have.toLocaleString('en-US')} widgets exist`);
        continue;
      }
      log(`creating widgets ${have.toLocaleString('en-US')} → ${size.toLocaleString('en-US')}…`);
      await createWidgets(client, have, size);
      if (results.length === 0) {
        // What informers receive: with managedFields when the server records them, as real ones do.
        const [first] = (await client.api(Widget, NAMESPACE).list({ limit: 1 })).items;
        log(
          `  objects as stored: ${JSON.stringify(first).length} bytes of JSON, managedFields ${first?.metadata?.managedFields ? 'recorded' : 'absent'}`,
        );
      }
      have = size;
      const runs = new Map<Variant, Sample[]>(variants.map((v) => [v, []]));
      for (let r = 0; r < options.runs; r++) {
        // Rotate the order, so that no variant always follows the same one.
        const order = variants.map((_, i) => variants[(i + r) % variants.length]!);
        for (const v of order) {
          const s = await sample(kubeconfigPath, v, size, options.clientGo);
          runs.get(v)!.push(s);
          log(
            `  ${size} ${v.padEnd(18)} run ${r + 1}: synced ${s.syncedMs.toFixed(0)} ms, heap +${s.heapGrowthMb.toFixed(1)} MB, rss +${s.rssGrowthMb.toFixed(1)} MB`,
          );
        }
      }
      const summary = variants.map((variant): VariantResult => {
        const rs = runs.get(variant)!;
        return {
          variant,
          label: LABELS[variant],
          syncedMs: median(rs.map((s) => s.syncedMs)),
          heapGrowthMb: median(rs.map((s) => s.heapGrowthMb)),
          rssGrowthMb: median(rs.map((s) => s.rssGrowthMb)),
          runs: rs,
        };
      });
      const ours = summary.find((s) => s.variant === 'kubeloop');
      const theirs = summary.find((s) => s.variant === 'client-node');
      const ratio = (k: 'syncedMs' | 'heapGrowthMb' | 'rssGrowthMb') =>
        ours && theirs ? ours[k] / theirs[k] : Number.NaN;
      const go = summary.find((s) => s.variant === 'client-go');
      results.push({
        objects: size,
        variants: summary,
        ratio: {
          syncedMs: ratio('syncedMs'),
          heapGrowthMb: ratio('heapGrowthMb'),
          rssGrowthMb: ratio('rssGrowthMb'),
        },
        ...(ours &&
          go && {
            ratioGo: {
              syncedMs: ours.syncedMs / go.syncedMs,
              rssGrowthMb: ours.rssGrowthMb / go.rssGrowthMb,
            },
          }),
      });
    }
  } finally {
    await client.close();
  }
  return results;
}

/** The results as a table, with the ratios and the targets. */
export function renderInformer(results: readonly InformerSizeResult[], runs: number): string {
  const lines: string[] = [];
  const ref = INFORMER_REFERENCE;
  for (const r of results) {
    lines.push(
      `informer of ${r.objects.toLocaleString('en-US')} custom objects (median of ${runs}; memory after GC, growth over the idle client):`,
    );
    lines.push(
      `  ${'client'.padEnd(36)}${'synced'.padStart(12)}${'heap growth'.padStart(14)}${'RSS growth'.padStart(14)}`,
    );
    for (const v of r.variants) {
      lines.push(
        `  ${v.label.padEnd(36)}${`${v.syncedMs.toFixed(0)} ms`.padStart(12)}${`${v.heapGrowthMb.toFixed(1)} MB`.padStart(14)}${`${v.rssGrowthMb.toFixed(1)} MB`.padStart(14)}`,
      );
    }
    const verdict = (x: number) =>
      Number.isNaN(x) ? 'n/a' : `${x.toFixed(2)}× ${x <= ref.targetRatio ? 'PASS' : 'MISS'}`;
    lines.push(
      `  kubeloop / client-node: synced ${verdict(r.ratio.syncedMs)}, heap ${verdict(r.ratio.heapGrowthMb)}, RSS ${verdict(r.ratio.rssGrowthMb)} (target ≤ ${ref.targetRatio}×)`,
    );
    if (r.ratioGo) {
      const vs = (x: number, target: number) => `${x.toFixed(2)}× ${x <= target ? 'PASS' : 'MISS'}`;
      lines.push(
        `  kubeloop / client-go: synced ${vs(r.ratioGo.syncedMs, 1)} (target ≤ 1.0×), RSS growth ${vs(r.ratioGo.rssGrowthMb, 0.5)} (target ≤ 0.5×)`,
      );
    }
    lines.push('');
  }
  lines.push(
    `reference (issue, real kube-apiserver 1.24, 10,000 small custom objects): client-node 1.4.0 synced in ${ref.clientNode10kSyncSeconds} s; client-go's dynamic informer in ${ref.clientGo10kSyncSeconds} s with a ${ref.clientGo10kHeapMb} MB heap`,
  );
  return lines.join('\n');
}

// ---- child process: one informer, measured ----

async function settle(): Promise<{ heap: number; rss: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
}

async function child(variant: Variant, kubeconfigPath: string, expected: number): Promise<Sample> {
  if (variant === 'client-node') {
    const k8s = await import('@kubernetes/client-node');
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const listFn = () =>
      api.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: NAMESPACE,
        plural: PLURAL,
      }) as Promise<KubernetesListObject<KubernetesObject>>;
    const informer = k8s.makeInformer<KubernetesObject>(
      kc,
      `/apis/${GROUP}/${VERSION}/namespaces/${NAMESPACE}/${PLURAL}`,
      listFn,
    );
    let errors = 0;
    informer.on('error', () => {
      errors++;
    });
    const before = await settle();
    const start = process.hrtime.bigint();
    await informer.start();
    const syncedMs = msSince(start);
    const objects = informer.list(NAMESPACE).length;
    const after = await settle();
    await informer.stop();
    if (objects !== expected)
      throw new Error(`client-node cached ${objects} objects (${errors} errors), expected ${expected}`);
    return {
      syncedMs,
      heapGrowthMb: (after.heap - before.heap) / MB,
      rssGrowthMb: (after.rss - before.rss) / MB,
      objects,
    };
  }
  const { Informer } = await import('kubeloop/runtime');
  const client = await Client.fromKubeconfig({ path: kubeconfigPath });
  const informer = new Informer(client.api(Widget, NAMESPACE), {
    // The default ('auto'): watch-list where the server has it, else lists (kube-apiserver < 1.27).
    ...(variant === 'kubeloop-list' && { watchList: false }),
    freeze: variant !== 'kubeloop-nofreeze',
  });
  let handled = 0;
  if (variant === 'kubeloop-handler') {
    informer.addEventHandler({
      onAdd: (w) => {
        if (w.metadata?.name) handled++;
      },
    });
  }
  const before = await settle();
  const start = process.hrtime.bigint();
  informer.start();
  await informer.waitForSync({ timeoutMs: 120_000 });
  const syncedMs = msSince(start);
  const objects = informer.store.size;
  const after = await settle();
  await informer.stop();
  await client.close();
  if (objects !== expected) throw new Error(`kubeloop cached ${objects} objects, expected ${expected}`);
  if (variant === 'kubeloop-handler' && handled !== expected)
    throw new Error(`the handler saw ${handled} objects, expected ${expected}`);
  return {
    syncedMs,
    heapGrowthMb: (after.heap - before.heap) / MB,
    rssGrowthMb: (after.rss - before.rss) / MB,
    objects,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      child: { type: 'string' },
      kubeconfig: { type: 'string' },
      expect: { type: 'string' },
      sizes: { type: 'string', default: '10000,50000' },
      runs: { type: 'string', default: '3' },
      variants: { type: 'string' },
      'client-go': { type: 'string' },
      json: { type: 'string' },
    },
  });
  if (values.child) {
    const s = await child(values.child as Variant, values.kubeconfig!, Number(values.expect));
    process.stdout.write(`${JSON.stringify(s)}\n`);
    // The child's only job is done; leftover client-node sockets must not keep it waiting.
    process.exit(0);
  }
  const sizes = values.sizes.split(',').map(Number);
  const runs = Number(values.runs);
  const clientGo = clientGoInformer(values['client-go']);
  const variants = (
    values.variants ? values.variants.split(',') : [...VARIANTS, ...(clientGo ? ['client-go'] : [])]
  ) as Variant[];
  for (const v of variants)
    if (!(VARIANTS as readonly string[]).includes(v) && v !== 'client-go')
      throw new Error(`unknown variant ${v}`);
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-informer-'));
  const log = (s: string) => process.stdout.write(`${s}\n`);
  const rerun = [
    'rerun: npm run build && node bench/dist/benchmarks/informer.js',
    `--sizes=${sizes.join(',')}`,
    `--runs=${runs}`,
    `--variants=${variants.join(',')}`,
    ...(values.kubeconfig ? [`--kubeconfig=${values.kubeconfig}`] : []),
    ...(values['client-go'] ? [`--client-go=${values['client-go']}`] : []),
  ].join(' ');
  log(rerun);
  // A given API server, or a fresh local control plane.
  const kubeconfigPath = values.kubeconfig ? resolve(values.kubeconfig) : join(work, 'kubeconfig');
  const server = values.kubeconfig ? undefined : await startKubeloop({ root, kubeconfigPath });
  try {
    log(
      `${server ? `${server.name} ready in ${server.readyMs.toFixed(0)} ms` : `API server of ${kubeconfigPath}`}; sizes ${sizes.join(', ')}; ${runs} runs each; client-go: ${clientGo ?? 'not built'}`,
    );
    const results = await runInformer(kubeconfigPath, {
      sizes,
      runs,
      variants,
      log,
      ...(clientGo && { clientGo }),
    });
    log('');
    log(renderInformer(results, runs));
    log(rerun);
    if (values.json) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(values.json, `${JSON.stringify(results, null, 2)}\n`);
    }
  } finally {
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `informer bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
