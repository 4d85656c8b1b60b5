/**
 * Listing 10,000 custom resources through a CRD conversion webhook against listing them at their
 * storage version, on the same kubeloop server in the same run. The CRD stores `v1` and also
 * serves `v2`; its webhook moves two fields. It runs in its own process, the SDK's
 * `WebhookServer` with the conversion registered, as an operator's webhook is its own process
 * (`--webhook=in-process` runs a minimal node:https handler in this process instead, whose CPU then
 * counts against the lists' wall time). A `v1` list reads the stored objects as they are; a `v2`
 * list sends the page's objects to the webhook in ConversionReviews, checks the answers and writes
 * the converted objects; later `v2` lists reuse those conversions until an object changes, as
 * kube-apiserver's watch cache holds every object converted once per change and version. As in
 * kube-apiserver, whose watch cache of each served version converts every object written, the
 * server converts each object to `v2` as it is written: `--written-runs` rounds write every
 * object (the first creates them, the next change each through `v1`), then time the `v2` list
 * right after the writes (it waits for conversions still under way) against the `v1` list after
 * it — the target's figure — with the writes' time and the server's and webhook's CPU. The
 * first `v2` list after a change of the CRD (all objects converted then) is timed against the v1 list just before it,
 * `--cold-runs` times: between two, the CRD's spec changes (a printer column of v1), which makes
 * new served types and so drops every kept conversion, as any change of the CRD does; then the two
 * lists alternate (ABBA) and each figure is the median, from sending the request to the last byte,
 * plus the client's JSON.parse of the body. The CPU of the server, of the webhook and of this
 * process (the client) during each cold list is printed too. Target: the `v2` list right after
 * the writes takes at most 2× the `v1` list. The server runs without its controllers, so that nothing but the lists calls
 * the webhook. With `--cpu-prof`, the cold lists' windows (µs of the monotonic clock, as the
 * profiles' timestamps) are printed, to read the profiles of those lists only.
 *
 *   npm run build && node bench/dist/benchmarks/conversion-list.js
 *   node bench/dist/benchmarks/conversion-list.js --objects=10000 --runs=10 --cold-runs=3 --written-runs=3 [--webhook=in-process] [--cpu-prof=/tmp/prof]
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { HttpClient } from '../lib/http.js';
import { cpuMs } from '../lib/proc.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';
import {
  GROUP,
  serveWebhook,
  startWebhookInProcess,
  startWebhookProcess,
} from './conversion-list-webhook.js';

const NS = 'conversion-bench';

// biome-ignore lint/suspicious/noExplicitAny: JSON objects of the API and the webhook, read field by field.
type Json = Record<string, any>;

/** The figures of one list variant. */
export interface ListFigures {
  /** Median request-to-last-byte time. */
  totalMs: number;
  /** Median of the client's JSON.parse of the body. */
  parseMs: number;
  bytes: number;
  items: number;
}

/** What the benchmark measures. */
export interface ConversionListResult {
  storage: ListFigures;
  webhook: ListFigures;
  /** (webhook total + parse) / (storage total + parse), lists after the first. */
  ratio: number;
  /**
   * The v2 list right after every object was written (created, then changed through v1 in the
   * next rounds): the server converted them as they were written, as kube-apiserver's watch cache
   * of each served version does, and the list waits for conversions still under way.
   */
  written: ListFigures;
  /** That v2 list against the v1 list right after it (median of the written rounds). */
  writtenRatio: number;
  writtenRatios: number[];
  /** Per written round (medians): its writes' wall time, and the server's and webhook's CPU while writing. */
  writes: { count: number; ms: number; serverMs: number; hookMs: number };
  /** The first v2 list, which sends all objects to the webhook in one review. */
  cold: ListFigures;
  /** The first v2 list against the v1 list just before it (median of the cold runs). */
  coldRatio: number;
  /** The webhook's CPU during the first list (its process's, or its handler's time in this one; median of the cold runs). */
  coldReviewMs: number;
  /** The cold runs' ratios, in order. */
  coldRatios: number[];
  /**
   * The least cold ratio the webhook leaves possible: 1 + its CPU during the cold list / the v1
   * list (median of the cold runs). The v2 list is written only after the webhook's last
   * answer, and writing and parsing it costs what the v1 list does.
   */
  coldBound: number;
  /**
   * CPU of the server and of this process (client and webhook) during the cold v2 list and
   * during the v1 list just before it (medians of the cold runs; the server's only with its pid).
   */
  coldCpu: { v1Server: number; v2Server: number; v1Bench: number; v2Bench: number; v2Hook: number };
  /** Reviews during the measured runs (the conversions of a stored state are reused, as kube's watch cache does); NaN when the webhook is another process. */
  reviews: number;
  /** The webhook's CPU during the measured runs (ms). */
  warmHookMs: number;
}

/** The CRD; `column` names a printer column of v1, changed between cold runs to make new served types. */
function crd(url: string, caBundle: string, column = 'Tier'): Json {
  const spec = (props: Json) => ({
    openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `services.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'services', kind: 'Service' },
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { url, caBundle } },
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          additionalPrinterColumns: [{ name: column, type: 'string', jsonPath: '.spec.tier' }],
          schema: spec({
            endpoint: { type: 'string' },
            replicas: { type: 'integer' },
            image: { type: 'string' },
            tier: { type: 'string' },
          }),
        },
        {
          name: 'v2',
          served: true,
          storage: false,
          schema: spec({
            host: { type: 'string' },
            port: { type: 'integer' },
            replicas: { type: 'integer' },
            image: { type: 'string' },
            tier: { type: 'string' },
          }),
        },
      ],
    },
  };
}

/** Lists the collection at `version` once: request-to-last-byte and the client's parse. */
async function listOnce(http: HttpClient, version: string) {
  const res = await http.request('GET', `/apis/${GROUP}/${version}/namespaces/${NS}/services`);
  if (res.status !== 200)
    throw new Error(`list ${version}: ${res.status} ${res.body.toString().slice(0, 500)}`);
  const t0 = process.hrtime.bigint();
  const list = JSON.parse(res.body.toString('utf8')) as { items: Json[] };
  const parseMs = Number(process.hrtime.bigint() - t0) / 1e6;
  return { totalMs: res.totalMs, parseMs, bytes: res.body.length, items: list.items.length, list };
}

/** Runs the benchmark against a started kubeloop server. */
export async function runConversionList(
  http: HttpClient,
  opts: {
    objects: number;
    runs: number;
    clients: number;
    coldRuns?: number;
    log: (s: string) => void;
    /** The server's process, whose CPU the cold lists report. */
    serverPid?: number;
    /** Rounds of writing every object then listing it (the first creates them). */
    writtenRuns?: number;
    /** Where the webhook runs: its own process (the SDK's WebhookServer, default) or this one. */
    webhook?: 'process' | 'in-process';
    /** Directory for the webhook process's CPU profile. */
    cpuProf?: string;
  },
): Promise<ConversionListResult> {
  const hook =
    opts.webhook === 'in-process'
      ? await startWebhookInProcess()
      : await startWebhookProcess(fileURLToPath(import.meta.url), opts.cpuProf);
  try {
    const post = async (path: string, body: Json) => {
      const res = await http.request('POST', path, JSON.stringify(body));
      if (res.status !== 201)
        throw new Error(`POST ${path}: ${res.status} ${res.body.toString().slice(0, 500)}`);
    };
    await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd(hook.url, hook.caBundle));
    for (;;) {
      const r = await http.request('GET', `/apis/${GROUP}/v1/namespaces/${NS}/services?limit=1`);
      if (r.status === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const name = (i: number) => `svc-${String(i).padStart(6, '0')}`;
    /** Round 0 creates every object at the storage version (v1); later rounds change each through v1. */
    const writeAll = async (round: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: opts.clients }, async () => {
          for (let i = next++; i < opts.objects; i = next++) {
            if (round > 0) {
              const path = `/apis/${GROUP}/v1/namespaces/${NS}/services/${name(i)}`;
              const res = await http.request(
                'PATCH',
                path,
                JSON.stringify({ spec: { replicas: round * 7 + i } }),
                {
                  'Content-Type': 'application/merge-patch+json',
                },
              );
              if (res.status !== 200)
                throw new Error(`PATCH ${path}: ${res.status} ${res.body.toString().slice(0, 500)}`);
              continue;
            }
            await post(`/apis/${GROUP}/v1/namespaces/${NS}/services`, {
              apiVersion: `${GROUP}/v1`,
              kind: 'Service',
              metadata: { name: name(i), labels: { app: 'bench', shard: String(i % 16) } },
              spec: {
                endpoint: `svc-${i}.example.com:${8000 + (i % 1000)}`,
                replicas: i % 5,
                image: 'registry.example.com/app:1.2.3',
                tier: 'backend',
              },
            });
          }
        }),
      );
    };
    // Written, then listed: the server converts each object to v2 as it is written (kube: the
    // watch cache of each served version converts every change), so the v2 list right after the
    // writes finds them converted, or waits for the conversions still under way.
    const writtenRounds: {
      v1: Awaited<ReturnType<typeof listOnce>>;
      v2: Awaited<ReturnType<typeof listOnce>>;
      ms: number;
      serverMs: number;
      hookMs: number;
    }[] = [];
    for (let round = 0; round < Math.max(1, opts.writtenRuns ?? 3); round++) {
      opts.log(
        round === 0
          ? `creating ${opts.objects.toLocaleString('en-US')} objects at the storage version (v1)`
          : `changing every object through v1 (round ${round + 1})`,
      );
      const server0 = opts.serverPid ? cpuMs(opts.serverPid) : 0;
      const hook0 = hook.cpuMs();
      const t0 = process.hrtime.bigint();
      await writeAll(round);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const serverMs = opts.serverPid ? cpuMs(opts.serverPid) - server0 : 0;
      const hookMs = hook.cpuMs() - hook0;
      const v2 = await listOnce(http, 'v2');
      const v1 = await listOnce(http, 'v1');
      if (
        v2.items !== opts.objects ||
        v2.list.items.some((i) => i.apiVersion !== `${GROUP}/v2` || !('host' in i.spec))
      )
        throw new Error('the v2 list is not converted');
      writtenRounds.push({ v1, v2, ms, serverMs, hookMs });
      opts.log(
        `  written in ${ms.toFixed(0)} ms (CPU server ${serverMs.toFixed(0)} ms, webhook ${hookMs.toFixed(0)} ms); ` +
          `then v2 list ${(v2.totalMs + v2.parseMs).toFixed(0)} ms vs v1 ${(v1.totalMs + v1.parseMs).toFixed(0)} ms (${((v2.totalMs + v2.parseMs) / (v1.totalMs + v1.parseMs)).toFixed(2)}×)`,
      );
    }
    // A v2 list with nothing converted yet converts every object; it is checked, and timed
    // against the v1 list just before it. Between cold runs the CRD's webhook URL changes.
    const colds: {
      v1: Awaited<ReturnType<typeof listOnce>>;
      v2: Awaited<ReturnType<typeof listOnce>>;
      cpu: { v1Server: number; v2Server: number; v1Bench: number; v2Bench: number; v2Hook: number };
    }[] = [];
    /** CPU ms of the server and of this process while `f` runs. */
    const cpuOf = async <T>(f: () => Promise<T>) => {
      const server0 = opts.serverPid ? cpuMs(opts.serverPid) : 0;
      const bench0 = process.cpuUsage();
      const value = await f();
      const bench = process.cpuUsage(bench0);
      return {
        value,
        server: opts.serverPid ? cpuMs(opts.serverPid) - server0 : 0,
        bench: (bench.user + bench.system) / 1000,
      };
    };
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/services.${GROUP}`;
    /** The stored CRD with its spec as `crd(…, column)` writes it (for an update). */
    const crdNow = async (column: string) => {
      const got = await http.request('GET', crdPath);
      const current = JSON.parse(got.body.toString('utf8')) as Json;
      return { ...current, spec: crd(hook.url, hook.caBundle, column).spec };
    };
    for (let c = 0; c < (opts.coldRuns ?? 3); c++) {
      // Any change of the CRD's spec makes new served types, which drops every kept conversion
      // (the writes above converted every object already).
      const column = `Tier${c}`;
      const res = await http.request('PUT', crdPath, JSON.stringify(await crdNow(column)));
      if (res.status !== 200)
        throw new Error(`update CRD: ${res.status} ${res.body.toString().slice(0, 300)}`);
      // Served with the new types once a table of v1 (no conversion) shows the new column.
      for (;;) {
        const t = await http.request(
          'GET',
          `/apis/${GROUP}/v1/namespaces/${NS}/services?limit=1`,
          undefined,
          {
            Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
          },
        );
        if (t.status === 200 && t.body.toString().includes(`"name":"${column}"`)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const { value: v1, server: v1Server, bench: v1Bench } = await cpuOf(() => listOnce(http, 'v1'));
      const reviews0 = hook.reviews();
      const hook0 = hook.cpuMs();
      const from = process.hrtime.bigint() / 1000n;
      const { value: v2, server: v2Server, bench: v2Bench } = await cpuOf(() => listOnce(http, 'v2'));
      if (opts.cpuProf) opts.log(`  cold window ${from} ${process.hrtime.bigint() / 1000n}`);
      const v2Hook = hook.cpuMs() - hook0;
      if (
        v2.items !== opts.objects ||
        v2.list.items.some((i) => i.apiVersion !== `${GROUP}/v2` || !('host' in i.spec))
      )
        throw new Error('the v2 list is not converted');
      colds.push({ v1, v2, cpu: { v1Server, v2Server, v1Bench, v2Bench, v2Hook } });
      opts.log(
        `  cold run ${c + 1}: v2 ${(v2.totalMs + v2.parseMs).toFixed(0)} ms vs v1 ${(v1.totalMs + v1.parseMs).toFixed(0)} ms (${((v2.totalMs + v2.parseMs) / (v1.totalMs + v1.parseMs)).toFixed(2)}×); CPU server ${v2Server.toFixed(0)} vs ${v1Server.toFixed(0)} ms, webhook ${v2Hook.toFixed(0)} ms${Number.isNaN(reviews0) ? '' : `, ${hook.reviews() - reviews0} reviews`}`,
      );
    }
    const coldRatios = colds.map((c) => (c.v2.totalMs + c.v2.parseMs) / (c.v1.totalMs + c.v1.parseMs));
    // The webhook converts one review at a time in its one thread, and the v2 list can be
    // written only once its last object is converted; writing and parsing it costs what the v1
    // list costs. So no server can make the cold v2 list cheaper than the v1 list plus the
    // webhook's CPU.
    const coldBounds = colds.map((c) => 1 + c.cpu.v2Hook / (c.v1.totalMs + c.v1.parseMs));
    const cold = colds[0]!.v2;
    const coldReviewMs = median(colds.map((c) => c.cpu.v2Hook));
    const runs = {
      v1: [] as Awaited<ReturnType<typeof listOnce>>[],
      v2: [] as Awaited<ReturnType<typeof listOnce>>[],
    };
    const reviewsBefore = hook.reviews();
    const hookBefore = hook.cpuMs();
    for (let i = 0; i < opts.runs; i++) {
      const order = i % 2 === 0 ? (['v1', 'v2'] as const) : (['v2', 'v1'] as const);
      for (const v of order) {
        const r = await listOnce(http, v);
        runs[v].push({ ...r, list: { items: [] } });
      }
    }
    const figures = (rs: Awaited<ReturnType<typeof listOnce>>[]): ListFigures => ({
      totalMs: median(rs.map((r) => r.totalMs)),
      parseMs: median(rs.map((r) => r.parseMs)),
      bytes: rs[0]!.bytes,
      items: rs[0]!.items,
    });
    const storage = figures(runs.v1);
    const webhook = figures(runs.v2);
    const writtenRatios = writtenRounds.map(
      (w) => (w.v2.totalMs + w.v2.parseMs) / (w.v1.totalMs + w.v1.parseMs),
    );
    return {
      storage,
      webhook,
      ratio: (webhook.totalMs + webhook.parseMs) / (storage.totalMs + storage.parseMs),
      written: figures(writtenRounds.map((w) => w.v2)),
      writtenRatio: median(writtenRatios),
      writtenRatios,
      writes: {
        count: opts.objects,
        ms: median(writtenRounds.map((w) => w.ms)),
        serverMs: median(writtenRounds.map((w) => w.serverMs)),
        hookMs: median(writtenRounds.map((w) => w.hookMs)),
      },
      cold: {
        totalMs: median(colds.map((c) => c.v2.totalMs)),
        parseMs: median(colds.map((c) => c.v2.parseMs)),
        bytes: cold.bytes,
        items: cold.items,
      },
      coldRatio: median(coldRatios),
      coldRatios,
      coldBound: median(coldBounds),
      coldReviewMs,
      coldCpu: {
        v1Server: median(colds.map((c) => c.cpu.v1Server)),
        v2Server: median(colds.map((c) => c.cpu.v2Server)),
        v1Bench: median(colds.map((c) => c.cpu.v1Bench)),
        v2Bench: median(colds.map((c) => c.cpu.v2Bench)),
        v2Hook: median(colds.map((c) => c.cpu.v2Hook)),
      },
      reviews: hook.reviews() - reviewsBefore,
      warmHookMs: hook.cpuMs() - hookBefore,
    };
  } finally {
    await hook.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '10000' },
      runs: { type: 'string', default: '10' },
      clients: { type: 'string', default: '16' },
      'cold-runs': { type: 'string', default: '3' },
      'written-runs': { type: 'string', default: '3' },
      'cpu-prof': { type: 'string' },
      webhook: { type: 'string', default: 'process' },
      'serve-webhook': { type: 'boolean' },
      'cert-dir': { type: 'string' },
    },
  });
  if (values['serve-webhook']) return serveWebhook(values['cert-dir'] ?? '');
  if (values.webhook !== 'process' && values.webhook !== 'in-process')
    throw new Error(`--webhook=${values.webhook}: process or in-process`);
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-conversion-list-'));
  const server = await startKubeloop({
    root,
    kubeconfigPath: join(work, 'kubeconfig'),
    args: ['--no-controllers'],
    ...(values['cpu-prof'] && { cpuProfDir: values['cpu-prof'] }),
  });
  const http = new HttpClient(server.endpoint, Number(values.clients));
  const log = (s: string) => process.stdout.write(`${s}\n`);
  try {
    const r = await runConversionList(http, {
      objects: Number(values.objects),
      runs: Number(values.runs),
      clients: Number(values.clients),
      coldRuns: Number(values['cold-runs']),
      writtenRuns: Number(values['written-runs']),
      log,
      serverPid: server.pid,
      webhook: values.webhook,
      ...(values['cpu-prof'] && { cpuProf: values['cpu-prof'] }),
    });
    const row = (name: string, f: ListFigures) =>
      `  ${name.padEnd(40)} ${f.totalMs.toFixed(1).padStart(7)} ms to last byte + ${f.parseMs.toFixed(1).padStart(6)} ms parse   ${(f.bytes / 1e6).toFixed(2)} MB, ${f.items} items`;
    log(
      `list of ${r.storage.items.toLocaleString('en-US')} custom resources, median of ${values.runs} runs each (ABBA), ${server.name}`,
    );
    log(row('v1, the storage version', r.storage));
    log(row('v2, right after the writes', r.written));
    log(
      `    converted as written (kube: a watch cache per served version): ${r.writes.count.toLocaleString('en-US')} writes in ${r.writes.ms.toFixed(0)} ms, CPU server ${r.writes.serverMs.toFixed(0)} ms, webhook ${r.writes.hookMs.toFixed(0)} ms (medians of ${r.writtenRatios.length} rounds)`,
    );
    log(row('v2, cold: every object converted', r.cold));
    const inProcess = values.webhook === 'in-process';
    log(
      inProcess
        ? `    webhook in this process (--webhook=in-process): its handler took ${r.coldReviewMs.toFixed(1)} ms (parse, convert, stringify)`
        : `    webhook in its own process (the SDK's WebhookServer): ${r.coldReviewMs.toFixed(0)} ms CPU`,
    );
    const c = r.coldCpu;
    log(
      `    CPU, cold v2 list vs the v1 list before it: server ${c.v2Server.toFixed(0)} vs ${c.v1Server.toFixed(0)} ms, ` +
        `bench process (client${inProcess ? ' + webhook' : ''}) ${c.v2Bench.toFixed(0)} vs ${c.v1Bench.toFixed(0)} ms (10 ms ticks for processes read from /proc)`,
    );
    log(row('v2, next lists (conversions reused)', r.webhook));
    log(
      Number.isNaN(r.reviews)
        ? `  webhook CPU during the ${values.runs} measured v2 lists: ${r.warmHookMs.toFixed(0)} ms`
        : `  ${r.reviews} reviews during the ${values.runs} measured v2 lists`,
    );
    log(
      `  v2 list right after the writes / v1 list: ${r.writtenRatio.toFixed(2)}× (median of ${r.writtenRatios.map((x) => x.toFixed(2)).join(', ')}; target ≤ 2×) ${r.writtenRatio <= 2 ? 'PASS' : 'MISS'}`,
    );
    log(
      `  cold v2 list (after a change of the CRD: nothing converted) / v1 list just before: ${r.coldRatio.toFixed(2)}× (median of ${r.coldRatios.map((x) => x.toFixed(2)).join(', ')}; kube-apiserver rebuilds its watch caches then, converting one object per review)`,
    );
    log(
      `  the least cold ratio the webhook leaves possible: 1 + its CPU / the v1 list = ${r.coldBound.toFixed(2)}× (median; the v2 list is written only after its last answer)`,
    );
    log(
      `  rerun: node bench/dist/benchmarks/conversion-list.js --objects=${values.objects} --runs=${values.runs} --cold-runs=${values['cold-runs']} --written-runs=${values['written-runs']}${inProcess ? ' --webhook=in-process' : ''}`,
    );
    log(`  v2 / v1: ${r.ratio.toFixed(2)}× (target ≤ 2×) ${r.ratio <= 2 ? 'PASS' : 'MISS'}`);
  } finally {
    http.close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `conversion-list failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
