/**
 * What admission webhooks add to a create: ConfigMap create latency (p50, p99) from 16
 * concurrent clients on a server with one mutating webhook (a JSONPatch adding a label) and one
 * validating webhook (allowing) against a server with none. The webhooks are served over HTTPS
 * by a separate Node process (its CA passed as `caBundle`), as an operator's webhook server is.
 * Both servers run side by side, taking turns batch by batch (ABBA); medians of the rounds, and
 * the added p50 as the median of each round's difference. Target: added p50 ≤ 1.5 ms.
 *
 * At 16 closed-loop clients both servers are saturated, and the bench, the server and the
 * webhook process share the machine's cores: p50 is then 16 / throughput, and what webhooks add
 * is their CPU, not their wait. So the bench also prints the CPU per create of the server and of
 * the webhook process, and runs a paced phase (`--rate`, creates/s from the same 16 clients,
 * below both servers' saturation) where the added p50 is the time the two calls take; several
 * rates are given as a list (`--rate=300,1000`).
 *
 *   npm run build && node bench/dist/benchmarks/webhook-latency.js --creates=2000 --rounds=4 --rate=300,1000
 *
 * The two webhooks are served by the SDK's `WebhookServer` (a `defaulter` adding the label, a
 * `validator` allowing): the webhook process an operator author runs, whose CPU per call shares
 * the machine's cores with the server's. `--hook=plain` serves them with a minimal node:https
 * handler instead (a hand-written patch, no SDK), the least a webhook process can do on node:https;
 * `--hook=go` with Go's net/http (`bench/go/admission-hook`, built with the Go toolchain), the
 * cheapest webhook process this machine runs.
 *
 * The summary also prints the CPU bound of the closed loop (Little's law): with N clients always
 * waiting, the mean latency is N / throughput, and throughput is at most cores / (CPU per create of
 * server, webhook process and bench), so the mean cannot be under N × that CPU / cores — nor what
 * webhooks add under that bound less the mean without them.
 *
 * With `--base-root=DIR` (another checkout, built) a third server, that checkout's, runs in the
 * same rounds, its webhooks served by that checkout's `WebhookServer` (the plain handler is
 * shared): the CPU per create of a change, server and webhook process, against its baseline,
 * under the same load.
 *
 * With `--kubeconfig=PATH` the same runs go against a running API server (a real kube-apiserver:
 * the anchor's `/tmp/anchor/run/admin.kubeconfig`, started with `NO_KCM=1`). One server cannot be
 * both with and without webhooks, so the two modes are two namespaces of it, made for this run:
 * the webhooks select the first (`namespaceSelector`), the second has none. `--pids=a,b` names the
 * server's processes (kube-apiserver, etcd) whose CPU per create is printed.
 *
 *   node bench/dist/benchmarks/webhook-latency.js --kubeconfig=/tmp/anchor/run/admin.kubeconfig \
 *     --pids=$(cat /tmp/anchor/run/pids/kube-apiserver),$(cat /tmp/anchor/run/pids/etcd)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type AdmissionHook, startGoAdmissionHook, startPlainAdmissionHook } from '../lib/admission-hook.js';
import { HttpClient } from '../lib/http.js';
import { objectName } from '../lib/objects.js';
import { cpuMs } from '../lib/proc.js';
import { type ServerProcess, startKubeloop } from '../lib/servers.js';
import { percentile } from '../lib/stats.js';
import { kubeloopTarget, type Target } from '../lib/targets.js';
import { runCreates } from './create.js';

const { values } = parseArgs({
  options: {
    creates: { type: 'string', default: '2000' },
    clients: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '4' },
    rate: { type: 'string', default: '300,1000' },
    'base-root': { type: 'string' },
    hook: { type: 'string', default: 'kubeloop' },
    'serve-hook': { type: 'string' },
    kubeconfig: { type: 'string' },
    pids: { type: 'string' },
  },
});
if (!['kubeloop', 'plain', 'go'].includes(values.hook!)) throw new Error('--hook is kubeloop, plain or go');
const CREATES = Number(values.creates);
const CLIENTS = Number(values.clients);
const ROUNDS = Number(values.rounds);
const RATES = (values.rate ?? '')
  .split(',')
  .map(Number)
  .filter((r) => r > 0);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const BASE_ROOT = values['base-root'] ? resolve(values['base-root']) : undefined;
/** The namespaces of the two modes on a server given by `--kubeconfig` (fresh names each run). */
const RUN_ID = Date.now().toString(36);

/** The webhook process (unless `--hook=plain`): the SDK's webhook server on `/mutate` and `/validate`. */
async function serveKubeloopHook(certDir: string): Promise<void> {
  const { ConfigMap } = await import('kubeloop/client');
  const { defaulter, validator, WebhookServer } = await import('kubeloop/webhook');
  const server = new WebhookServer({ port: 0, certDir }).register(
    defaulter(
      ConfigMap,
      (cm) => {
        cm.metadata = { ...cm.metadata, labels: { ...cm.metadata?.labels, injected: 'yes' } };
      },
      { path: '/mutate' },
    ),
    validator(ConfigMap, {}, { path: '/validate' }),
  );
  await server.listen();
  console.log(`listening ${server.port} ${Buffer.from(server.caBundle).toString('base64')}`);
}

/**
 * The webhook process: the SDK's, from the checkout at `checkoutRoot` (this one, or `--base-root`'s
 * for the base mode: its server and its SDK side by side with this checkout's), or the plain one.
 */
async function startWebhookServer(dir: string, checkoutRoot = root, name = 'hook'): Promise<AdmissionHook> {
  if (values.hook === 'kubeloop') {
    const prof = process.env.WEBHOOK_BENCH_PROF;
    const profArgs = prof
      ? ['--cpu-prof', `--cpu-prof-dir=${prof}`, `--cpu-prof-name=${name}.cpuprofile`]
      : [];
    const child = spawn(
      process.execPath,
      [...profArgs, join(checkoutRoot, 'bench/dist/benchmarks/webhook-latency.js'), `--serve-hook=${dir}`],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    return new Promise((ok, fail) => {
      child.stdout!.on('data', (d: Buffer) => {
        const m = /listening (\d+) (\S+)/.exec(d.toString());
        if (m) ok({ port: Number(m[1]), caBundle: m[2]!, child });
      });
      child.on('exit', (code) => fail(new Error(`webhook server exited ${code}`)));
    });
  }
  mkdirSync(dir, { recursive: true });
  return values.hook === 'go' ? startGoAdmissionHook(dir) : startPlainAdmissionHook(dir);
}

/** `base`: with the webhooks, on the `--base-root` checkout's server. */
type Mode = 'webhooks' | 'none' | 'base';

async function post(http: HttpClient, path: string, body: object): Promise<void> {
  const res = await http.request('POST', path, JSON.stringify(body));
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.body.toString()}`);
}

/** A running API server from a kubeconfig (its embedded CA and token), as a bench target. */
function external(kubeconfigPath: string, pid: number): ServerProcess {
  const kubeconfig = readFileSync(kubeconfigPath, 'utf8');
  const field = (name: string) => new RegExp(`${name}:\\s*(\\S+)`).exec(kubeconfig)?.[1];
  const [base, ca, token] = [field('server'), field('certificate-authority-data'), field('token')];
  if (!base || !ca || !token) throw new Error(`no server, embedded CA and token in ${kubeconfigPath}`);
  const endpoint = { base, ca: Buffer.from(ca, 'base64').toString('utf8'), token };
  return { name: `external (${base})`, pid, endpoint, readyMs: 0, stop: async () => {} };
}

async function setUp(
  mode: Mode,
  dir: string,
  hook: { port: number; caBundle: string },
  externalServer?: ServerProcess,
) {
  const NS = externalServer ? `bench-${mode}-${RUN_ID}` : 'bench';
  const server =
    externalServer ??
    (await startKubeloop({
      root: mode === 'base' ? BASE_ROOT! : root,
      kubeconfigPath: join(dir, `kubeconfig-${mode}`),
      args: ['--no-controllers'],
      // WEBHOOK_BENCH_PROF=<dir>: a CPU profile of each server, for looking into the figures.
      ...(process.env.WEBHOOK_BENCH_PROF && {
        cpuProfDir: process.env.WEBHOOK_BENCH_PROF,
        cpuProfName: `${mode}.cpuprofile`,
      }),
    }));
  const admin = new HttpClient(server.endpoint, 2);
  await post(admin, '/api/v1/namespaces', { metadata: { name: NS } });
  if (mode !== 'none') {
    const webhook = (path: string) => ({
      name: `${path}.bench.example.com`,
      clientConfig: { url: `https://127.0.0.1:${hook.port}/${path}`, caBundle: hook.caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    });
    const AR = '/apis/admissionregistration.k8s.io/v1';
    const name = externalServer ? `bench-${RUN_ID}` : 'bench';
    await post(admin, `${AR}/mutatingwebhookconfigurations`, {
      metadata: { name },
      webhooks: [webhook('mutate')],
    });
    await post(admin, `${AR}/validatingwebhookconfigurations`, {
      metadata: { name },
      webhooks: [webhook('validate')],
    });
  }
  admin.close();
  const target: Target = kubeloopTarget(server, CLIENTS);
  await runCreates(target, NS, 500, CLIENTS, 1_000_000); // warm-up
  return {
    target,
    ns: NS,
    async stop() {
      await target.close();
      await server.stop();
    },
  };
}

/**
 * `total` creates from `clients` clients at `rate` creates/s overall: each client sends its next
 * create at its slot, or at once when the previous answer came later. Below saturation the
 * latency is the request's own, not the queue's.
 */
async function runPaced(
  target: Target,
  ns: string,
  total: number,
  clients: number,
  rate: number,
  first: number,
  hookPid: number,
) {
  const latencies: number[] = [];
  let next = 0;
  const cpu0 = cpuMs(target.server.pid);
  const hook0 = cpuMs(hookPid);
  const bench0 = process.cpuUsage();
  const t0 = performance.now();
  const client = async () => {
    while (next < total) {
      const i = next++;
      const wait = t0 + (i * 1000) / rate - performance.now();
      if (wait > 0) await new Promise((ok) => setTimeout(ok, wait));
      const res = await target.create(ns, objectName(first + i));
      latencies.push(res.totalMs);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const seconds = (performance.now() - t0) / 1000;
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    perSecond: total / seconds,
    cpu: (cpuMs(target.server.pid) - cpu0) / total,
    hookCpu: (cpuMs(hookPid) - hook0) / total,
    benchCpu: cpuUsageMs(process.cpuUsage(bench0)) / total,
  };
}

const cpuUsageMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

if (values['serve-hook']) {
  await serveKubeloopHook(values['serve-hook']);
  // An orderly exit when the bench ends it, so that --cpu-prof writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  // Serves until the bench kills it.
  await new Promise(() => undefined);
}
const dir = mkdtempSync(join(tmpdir(), 'kubeloop-webhook-bench-'));
const hook = await startWebhookServer(join(dir, 'hook'));
// With the SDK's webhook server, the base mode calls the base checkout's.
const baseHook =
  BASE_ROOT && values.hook === 'kubeloop'
    ? await startWebhookServer(join(dir, 'base-hook'), BASE_ROOT, 'base-hook')
    : hook;
const hookOf = (mode: Mode) => (mode === 'base' ? baseHook : hook);
try {
  /** `serverPartsCpu`: the CPU per create of the server's other processes (`--pids`' etcd). */
  type Run = {
    p50: number;
    p99: number;
    perSecond: number;
    cpu: number;
    hookCpu: number;
    benchCpu: number;
    serverPartsCpu?: number;
  };
  const modes: Mode[] = BASE_ROOT ? ['webhooks', 'base', 'none'] : ['webhooks', 'none'];
  const runs: Record<Mode, Run[]> = { webhooks: [], none: [], base: [] };
  /** Per rate, per mode: the paced rounds (p50, p99 and CPU per create). */
  const paced = new Map<number, Record<Mode, Run[]>>(
    RATES.map((rate) => [rate, { webhooks: [], none: [], base: [] }]),
  );
  const pids = (values.pids ?? '').split(',').filter(Boolean).map(Number);
  const ext = values.kubeconfig ? external(values.kubeconfig, pids[0] ?? process.pid) : undefined;
  const servers: Partial<Record<Mode, Awaited<ReturnType<typeof setUp>>>> = {};
  for (const mode of modes) servers[mode] = await setUp(mode, dir, hookOf(mode), ext);
  const line = (r: Run) =>
    `p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, server ${r.cpu.toFixed(3)} ms CPU/create, webhook process ${r.hookCpu.toFixed(3)} ms CPU/create, bench ${r.benchCpu.toFixed(3)} ms CPU/create`;
  try {
    let first = 0;
    for (let r = 0; r < ROUNDS; r++) {
      // ABBA: the order turns around every round.
      const order = r % 2 === 0 ? modes : [...modes].reverse();
      for (const mode of order) {
        const server = servers[mode]!;
        const hookPid = hookOf(mode).child.pid!;
        const hook0 = cpuMs(hookPid);
        const others0 = pids.slice(1).map(cpuMs);
        const res = await runCreates(server.target, server.ns, CREATES, CLIENTS, first);
        const hookCpu = (cpuMs(hookPid) - hook0) / CREATES;
        const others = pids.slice(1).map((p, k) => (cpuMs(p) - others0[k]!) / CREATES);
        first += CREATES;
        const run = {
          p50: res.p50Ms,
          p99: res.p99Ms,
          perSecond: res.perSecond,
          cpu: res.serverCpuMsPerCreate,
          hookCpu,
          benchCpu: res.clientCpuMsPerCreate,
          serverPartsCpu: others.reduce((a, b) => a + b, 0),
        };
        runs[mode].push(run);
        console.log(
          `round ${r + 1} ${mode}: ${line(run)}, ${res.perSecond.toFixed(0)}/s (other load ${res.otherCpuPercent.toFixed(0)}%)${others.map((c, k) => `, pid ${pids[k + 1]} ${c.toFixed(3)} ms CPU/create`).join('')}`,
        );
        for (const rate of RATES) {
          const total = Math.min(CREATES, rate * 3);
          const p = await runPaced(server.target, server.ns, total, CLIENTS, rate, first, hookPid);
          first += total;
          paced.get(rate)![mode].push(p);
          console.log(`round ${r + 1} ${mode} paced at ${rate}/s: ${line(p)}`);
        }
      }
    }
  } finally {
    for (const mode of modes) await servers[mode]!.stop();
  }
  const m = (set: Record<Mode, Run[]>, mode: Mode, k: keyof Run) => median(set[mode].map((x) => x[k] ?? 0));
  // The added latency is the median of the rounds' own differences: both modes of a round ran
  // back to back under the same load, which the medians of each mode alone do not pair.
  const added = (set: Record<Mode, Run[]>, mode: Mode) =>
    median(set[mode].map((w, i) => w.p50 - set.none[i]!.p50));
  const verdict = (ms: number) => `${ms.toFixed(2)} ms ${ms <= 1.5 ? 'PASS' : 'MISS'} (target ≤ 1.5 ms)`;
  const cpus = (set: Record<Mode, Run[]>, mode: Mode) =>
    `server CPU per create ${m(set, mode, 'cpu').toFixed(3)} vs ${m(set, 'none', 'cpu').toFixed(3)} ms (added ${(m(set, mode, 'cpu') - m(set, 'none', 'cpu')).toFixed(3)} ms), webhook process ${m(set, mode, 'hookCpu').toFixed(3)} ms CPU per create`;
  const withHooks: Mode[] = BASE_ROOT ? ['webhooks', 'base'] : ['webhooks'];
  for (const mode of withHooks) {
    const who = mode === 'base' ? ` [base: ${BASE_ROOT}]` : '';
    console.log(
      `create latency at ${CLIENTS} clients, one mutating + one validating webhook vs none${who}: ` +
        `p50 ${m(runs, mode, 'p50').toFixed(2)} vs ${m(runs, 'none', 'p50').toFixed(2)} ms (×${(m(runs, mode, 'p50') / m(runs, 'none', 'p50')).toFixed(2)}), ` +
        `p99 ${m(runs, mode, 'p99').toFixed(2)} vs ${m(runs, 'none', 'p99').toFixed(2)} ms (×${(m(runs, mode, 'p99') / m(runs, 'none', 'p99')).toFixed(2)}), ` +
        `creates/s ${m(runs, mode, 'perSecond').toFixed(0)} vs ${m(runs, 'none', 'perSecond').toFixed(0)}; ` +
        `added p50 (median of the rounds' differences) ${verdict(added(runs, mode))}; ${cpus(runs, mode)}`,
    );
    // Little's law on the closed loop: the floor any server reaches with this webhook process.
    const cores = availableParallelism();
    const cpuOf = (mode: Mode) =>
      m(runs, mode, 'cpu') +
      m(runs, mode, 'serverPartsCpu') +
      m(runs, mode, 'hookCpu') +
      m(runs, mode, 'benchCpu');
    // Mean latency is clients / throughput, and throughput at most cores / CPU per create.
    const mean = (mode: Mode) => (1000 * CLIENTS) / m(runs, mode, 'perSecond');
    const bound = (cpu: number) => (CLIENTS * cpu) / cores;
    const hookAlone = bound(cpuOf('none') + m(runs, mode, 'hookCpu')) - mean('none');
    console.log(
      `  CPU bound at ${CLIENTS} closed-loop clients on ${cores} cores: ${cpuOf(mode).toFixed(3)} vs ${cpuOf('none').toFixed(3)} ms CPU per create (server${pids.length > 1 ? ' and its other processes' : ''} + webhook process + bench); ` +
        `mean latency (clients / throughput) ${mean(mode).toFixed(2)} vs ${mean('none').toFixed(2)} ms, its bound (clients × CPU / cores) ${bound(cpuOf(mode)).toFixed(2)} vs ${bound(cpuOf('none')).toFixed(2)} ms; ` +
        `with a server adding no CPU at all, this webhook process alone would add ≥ ${hookAlone.toFixed(2)} ms to the mean; ` +
        `an added ${1.5} ms needs server + webhook process to add ≤ ${((1.5 * cores) / CLIENTS).toFixed(3)} ms CPU per create`,
    );
    for (const [rate, set] of paced) {
      console.log(
        `  paced at ${rate} creates/s from ${CLIENTS} clients${who}: p50 ${m(set, mode, 'p50').toFixed(2)} vs ${m(set, 'none', 'p50').toFixed(2)} ms, ` +
          `p99 ${m(set, mode, 'p99').toFixed(2)} vs ${m(set, 'none', 'p99').toFixed(2)} ms; added p50 ${verdict(added(set, mode))}; ${cpus(set, mode)}`,
      );
    }
  }
  if (BASE_ROOT) {
    const ratio = (set: Record<Mode, Run[]>, k: keyof Run) =>
      median(set.webhooks.map((w, i) => (w[k] ?? 0) / (set.base[i]![k] ?? 1))).toFixed(2);
    console.log(
      `this checkout / base, with webhooks (median of the rounds' ratios): server CPU per create ×${ratio(runs, 'cpu')}, webhook process ×${ratio(runs, 'hookCpu')}, p50 ×${ratio(runs, 'p50')}` +
        [...paced]
          .map(
            ([rate, set]) =>
              `; paced at ${rate}/s: server CPU ×${ratio(set, 'cpu')}, p50 ×${ratio(set, 'p50')}`,
          )
          .join(''),
    );
  }
  console.log(
    `rerun: node bench/dist/benchmarks/webhook-latency.js --creates=${CREATES} --clients=${CLIENTS} --rounds=${ROUNDS} --rate=${RATES.join(',') || 0}${values.hook === 'kubeloop' ? '' : ` --hook=${values.hook}`}${BASE_ROOT ? ` --base-root=${BASE_ROOT}` : ''}${values.kubeconfig ? ` --kubeconfig=${values.kubeconfig} --pids=<kube-apiserver>,<etcd>` : ''}`,
  );
} finally {
  hook.child.kill();
  if (baseHook !== hook) baseHook.child.kill();
  rmSync(dir, { recursive: true, force: true });
}
