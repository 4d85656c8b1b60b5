import type { ClientComparison } from './benchmarks/client-node.js';
import type { CrdCreateResult } from './benchmarks/crd-create.js';
import type { CreateResult } from './benchmarks/create.js';
import { INFORMER_REFERENCE, type InformerSizeResult } from './benchmarks/informer.js';
import type { ListResult } from './benchmarks/list.js';
import type { ReconcileBenchResult } from './benchmarks/reconcile.js';
import type { NodeFloor, StartupResult } from './benchmarks/startup.js';
import type { WatchResult } from './benchmarks/watch.js';
import type { ClientListResult } from './client-list.js';
import { OBJECT_BYTES, storedConfigMap } from './lib/objects.js';
import { LoadMeter } from './lib/proc.js';
import { fmt, type Row } from './lib/report.js';
import { REFERENCE, TARGETS } from './reference.js';
import { args, CLIENTS, type Mode, N, only, WATCHERS } from './run-options.js';

/** What one server session measured. */
export interface Session {
  create: CreateResult;
  rssWithObjectsMb: number;
  list?: ListResult;
  clientNode?: ClientComparison;
  /** kubeloop/client vs client-node, from `client-list.ts`; an error message when it failed. */
  sdkClient?: ClientListResult | { error: string };
  watch?: WatchResult;
  /** Restart on the data directory holding the objects (durable and etcd only). */
  restart?: { readyMs: number; rssMb: number };
  /** CPU share of other processes during the session (see {@link LoadMeter}). */
  otherCpuPercent: number;
}

/** Results of the benchmarks that also run alone (`node bench/dist/benchmarks/<name>.js`). */
export interface Standalone {
  crdCreate?: CrdCreateResult;
  informer?: InformerSizeResult[];
  reconcile?: ReconcileBenchResult;
}

/** Runs the standalone benchmarks that `--only` asks for, each on its own fresh kubeloop server(s). */
/** The standalone benchmarks' rows, in the table's format. */
export function standaloneRows(s: Standalone): Row[] {
  const rows: Row[] = [];
  const c = s.crdCreate;
  if (c) {
    rows.push(
      {
        metric: `creates/s, ${CLIENTS} clients, custom resource (20 fields + 2 CEL)`,
        variant: 'memory',
        unit: '/s',
        better: 'higher',
        ours: c.customResources.perSecond,
        note: `ConfigMaps in the same run: ${fmt(c.configMaps.perSecond, '/s')}; time per create ${c.timeRatio.toFixed(2)}× theirs`,
      },
      {
        metric: 'server CPU per create, custom resource',
        variant: 'memory',
        unit: 'ms',
        better: 'lower',
        ours: c.customResources.serverCpuMsPerCreate,
        // The target is relative: at most 1.25× a ConfigMap create measured in the same run.
        target: { op: '<', value: 1.25 * c.configMaps.serverCpuMsPerCreate },
        note: `${c.serverCpuRatio.toFixed(2)}× a ${c.requestBytes.configMap} B ConfigMap's ${c.configMaps.serverCpuMsPerCreate.toFixed(3)} ms (target ≤ 1.25×); ${c.sizedServerCpuRatio.toFixed(2)}× a ConfigMap of its size (${c.requestBytes.customResource} B): the schema's own cost`,
      },
    );
  }
  for (const r of s.informer ?? []) {
    const ours = r.variants.find((v) => v.variant === 'kubeloop');
    const theirs = r.variants.find((v) => v.variant === 'client-node');
    if (!ours) continue;
    const ten = r.objects === 10_000;
    const ref = INFORMER_REFERENCE;
    const n = r.objects.toLocaleString('en-US');
    rows.push(
      {
        metric: `informer synced, ${n} custom objects`,
        variant: 'memory',
        unit: 's',
        better: 'lower',
        ours: ours.syncedMs / 1000,
        ...(ten && { reference: ref.clientGo10kSyncSeconds }),
        ...(theirs && { target: { op: '<', value: (ref.targetRatio * theirs.syncedMs) / 1000 } }),
        note:
          `@kubernetes/client-node 1.x in the same run: ${theirs ? fmt(theirs.syncedMs / 1000, 's') : 'n/a'} (target ≤ ${ref.targetRatio}× it)` +
          (ten
            ? `; quoted: client-go ${ref.clientGo10kSyncSeconds} s, client-node ${ref.clientNode10kSyncSeconds} s`
            : ''),
      },
      {
        metric: `informer heap growth, ${n} custom objects`,
        variant: 'memory',
        unit: 'MB',
        better: 'lower',
        ours: ours.heapGrowthMb,
        ...(ten && { reference: ref.clientGo10kHeapMb }),
        ...(theirs && { target: { op: '<', value: ref.targetRatio * theirs.heapGrowthMb } }),
        note: `client-node in the same run: ${theirs ? fmt(theirs.heapGrowthMb, 'MB') : 'n/a'} (target ≤ ${ref.targetRatio}× it); RSS growth ${fmt(ours.rssGrowthMb, 'MB')}`,
      },
    );
  }
  if (s.reconcile) rows.push(...s.reconcile.rows);
  return rows;
}

/** Formats the results file as the repository's formatter would, so that committing it keeps `biome check` clean. */

export function buildRows(
  startup: Partial<Record<Mode, StartupResult>>,
  s: Partial<Record<Mode, Session>>,
): Row[] {
  const rows: Row[] = [];
  const e = s.etcd;
  const kObjects = `${(N / 1000).toLocaleString('en-US')}k`;
  for (const mode of ['memory', 'durable'] as const) {
    const st = startup[mode];
    if (!st) continue;
    rows.push({
      metric: 'start-to-ready',
      variant: mode === 'durable' ? 'durable, empty' : mode,
      unit: 'ms',
      better: 'lower',
      ours: st.medianReadyMs,
      ...(startup.etcd && { etcd: startup.etcd.medianReadyMs }),
      reference: REFERENCE.startToReadyMs,
      target: TARGETS.startToReadyMs,
    });
  }
  const restart = s.durable?.restart;
  if (restart) {
    rows.push({
      metric: 'start-to-ready',
      variant: `durable, ${kObjects} objects`,
      unit: 'ms',
      better: 'lower',
      ours: restart.readyMs,
      ...(e?.restart && { etcd: e.restart.readyMs }),
    });
  }
  for (const mode of ['memory', 'durable'] as const) {
    const st = startup[mode];
    if (!st) continue;
    rows.push({
      metric: 'idle RSS',
      variant: mode === 'durable' ? 'durable, empty' : mode,
      unit: 'MB',
      better: 'lower',
      ours: st.medianRssMb,
      ...(startup.etcd && { etcd: startup.etcd.medianRssMb }),
      reference: REFERENCE.idleRssMb,
      target: TARGETS.idleRssMb,
    });
  }
  for (const mode of ['memory', 'durable'] as const) {
    const x = s[mode];
    if (!x) continue;
    rows.push({
      metric: `RSS holding ${kObjects} objects`,
      variant: mode,
      unit: 'MB',
      better: 'lower',
      ours: x.rssWithObjectsMb,
      ...(e && { etcd: e.rssWithObjectsMb }),
    });
  }
  if (only.has('create')) {
    for (const mode of ['memory', 'durable'] as const) {
      const x = s[mode];
      if (!x) continue;
      rows.push({
        metric: `creates/s, ${CLIENTS} clients`,
        variant: mode,
        unit: '/s',
        better: 'higher',
        ours: x.create.perSecond,
        ...(e && { etcd: e.create.perSecond }),
        reference: REFERENCE.createsPerSecond,
        target: mode === 'memory' ? TARGETS.createsPerSecondMemory : TARGETS.createsPerSecondDurable,
      });
    }
    for (const [p, key] of [
      ['p50', 'p50Ms'],
      ['p99', 'p99Ms'],
    ] as const) {
      for (const mode of ['memory', 'durable'] as const) {
        const x = s[mode];
        if (!x) continue;
        rows.push({
          metric: `create latency ${p}, ${CLIENTS} clients`,
          variant: mode,
          unit: 'ms',
          better: 'lower',
          ours: x.create[key],
          ...(e && { etcd: e.create[key] }),
        });
      }
    }
    for (const mode of ['memory', 'durable'] as const) {
      const x = s[mode];
      if (!x) continue;
      rows.push({
        metric: 'server CPU per create',
        variant: mode,
        unit: 'ms',
        better: 'lower',
        ours: x.create.serverCpuMsPerCreate,
        ...(e && { etcd: e.create.serverCpuMsPerCreate }),
        note:
          (mode === 'memory'
            ? 'CPU time (user + system) of the server process over the creates: unlike creates/s, it barely moves when other ' +
              `processes share the machine; 1000 / it = creates/s one core could sustain: `
            : '') + `${Math.round(1000 / x.create.serverCpuMsPerCreate).toLocaleString('en-US')}/s`,
      });
    }
  }
  for (const mode of ['memory', 'durable'] as const) {
    const l = s[mode]?.list;
    if (!l) continue;
    rows.push({
      metric: `list ${N.toLocaleString('en-US')}, full`,
      variant: mode,
      unit: 's',
      better: 'lower',
      ours: l.full.medianMs / 1000,
      ...(e?.list && { etcd: e.list.full.medianMs / 1000 }),
      reference: REFERENCE.list10kSeconds,
      ...(N === 10_000 && { target: TARGETS.list10kSeconds }),
    });
  }
  for (const mode of ['memory', 'durable'] as const) {
    const l = s[mode]?.list;
    if (!l) continue;
    rows.push({
      metric: `list ${N.toLocaleString('en-US')}, limit=${l.paged.limit} × ${l.paged.pages}`,
      variant: mode,
      unit: 's',
      better: 'lower',
      ours: l.paged.medianMs / 1000,
      ...(e?.list && { etcd: e.list.paged.medianMs / 1000 }),
    });
  }
  const cn = s.memory?.clientNode;
  if (cn) {
    rows.push({
      metric: `list ${N.toLocaleString('en-US')} via @kubernetes/client-node`,
      variant: 'memory',
      unit: 's',
      better: 'lower',
      ours: cn.clientNodeMs / 1000,
      reference: REFERENCE.list10kSeconds,
      note: `the same list by a raw keep-alive HTTPS GET + JSON.parse, alternated with it: ${fmt(cn.rawMs / 1000, 's')}`,
    });
  }
  const sdk = s.memory?.sdkClient;
  if (sdk && !('error' in sdk)) {
    rows.push({
      metric: `list ${N.toLocaleString('en-US')} via kubeloop/client`,
      variant: 'memory',
      unit: 's',
      better: 'lower',
      ours: sdk.kubeloop.medianMs / 1000,
      reference: REFERENCE.list10kSeconds,
      note: `@kubernetes/client-node in the same interleaved runs: ${fmt(sdk.clientNode.medianMs / 1000, 's')} (kubeloop/client ${sdk.speedup.toFixed(2)}× its speed)`,
    });
  }
  for (const [p, key] of [
    ['p50', 'p50Ms'],
    ['p99', 'p99Ms'],
  ] as const) {
    for (const mode of ['memory', 'durable'] as const) {
      const w = s[mode]?.watch;
      if (!w) continue;
      rows.push({
        metric: `watch latency ${p}, ${WATCHERS} watchers`,
        variant: mode,
        unit: 'ms',
        better: 'lower',
        ours: w[key],
        ...(e?.watch && { etcd: e.watch[key] }),
      });
    }
  }
  return rows;
}

export function details(s: Partial<Record<Mode, Session>>, floor: NodeFloor | undefined): string[] {
  const out: string[] = ['where the time goes:'];
  if (floor) {
    out.push(
      `  node itself (\`node -e\`, the floor under any Node server): ${fmt(floor.readyMs, 'ms')} from spawn to its first line, ${fmt(floor.rssMb, 'MB')} RSS`,
    );
  }
  const name = (m: Mode) => (m === 'etcd' ? 'etcd' : `kubeloop (${m})`);
  for (const m of ['memory', 'durable', 'etcd'] as const) {
    const x = s[m];
    if (!x) continue;
    const c = x.create;
    out.push(
      `  ${name(m)} creates: ${c.total} in ${c.seconds.toFixed(2)} s, max ${fmt(c.maxMs, 'ms')}; ` +
        `server CPU ${c.serverCpuMsPerCreate.toFixed(3)} ms/create, bench client CPU ${c.clientCpuMsPerCreate.toFixed(3)} ms/create; ` +
        `response ${c.responseBytes} B; other processes used ${c.otherCpuPercent.toFixed(0)}% of the machine's CPU meanwhile`,
    );
    if (x.list) {
      const f = x.list.full;
      out.push(
        `  ${name(m)} list: ${(f.bytes / 2 ** 20).toFixed(2)} MiB; headers after ${fmt(f.medianHeadersMs, 'ms')}, ` +
          `last byte after ${fmt(f.medianMs, 'ms')}, client decode ${fmt(f.medianParseMs, 'ms')}`,
      );
    }
    if (x.watch) {
      out.push(
        `  ${name(m)} watch: ${x.watch.events} events × ${x.watch.watchers} watchers, max ${fmt(x.watch.maxMs, 'ms')}; ` +
          `the create itself p50 ${fmt(x.watch.createP50Ms, 'ms')}`,
      );
    }
  }
  const cn = s.memory?.clientNode;
  if (cn) {
    out.push(
      `  client side of a list: @kubernetes/client-node ${fmt(cn.clientNodeMs, 'ms')} vs raw GET + JSON.parse ${fmt(cn.rawMs, 'ms')}: ` +
        `${fmt(cn.clientNodeMs - cn.rawMs, 'ms')} (${(cn.clientNodeMs / cn.rawMs).toFixed(1)}×) spent in client-node itself ` +
        '(its fetch stack and the conversion of every item into its model classes)',
    );
  }
  const sdk = s.memory?.sdkClient;
  if (sdk && 'error' in sdk) out.push(`  kubeloop/client list comparison failed: ${sdk.error}`);
  return out;
}

/** How busy other processes kept the machine during each phase, with a warning when it matters. */
export function loadReport(
  startup: Partial<Record<Mode, StartupResult>>,
  s: Partial<Record<Mode, Session>>,
): string[] {
  const parts: string[] = [];
  for (const m of ['memory', 'durable', 'etcd'] as const) {
    const st = startup[m];
    if (st) parts.push(`startup ${m} ${st.otherCpuPercent.toFixed(0)}%`);
  }
  for (const m of ['memory', 'durable', 'etcd'] as const) {
    const x = s[m];
    if (x)
      parts.push(
        `${m} session ${x.otherCpuPercent.toFixed(0)}% (creates ${x.create.otherCpuPercent.toFixed(0)}%)`,
      );
  }
  if (parts.length === 0) return [];
  const worst = Math.max(
    ...Object.values(startup).map((x) => x.otherCpuPercent),
    ...Object.values(s).map((x) => Math.max(x.otherCpuPercent, x.create.otherCpuPercent)),
  );
  const out = [`machine load: other processes used ${parts.join(', ')} of the CPU capacity`];
  if (worst > 10) {
    out.push(
      `  ! up to ${worst.toFixed(0)}% of the machine was busy with other work: figures are pessimistic and noisy; rerun on an idle machine`,
    );
  }
  return out;
}

export function notes(etcdRun: boolean): string {
  const stored = Buffer.byteLength(storedConfigMap('bench', 'cm-000000'));
  return [
    'how to read this:',
    `  · objects: ConfigMaps of ${OBJECT_BYTES} B of JSON per POST; etcd gets kube-apiserver's key layout (/registry/configmaps/<ns>/<name>),`,
    `    a ${stored} B value (the object with uid and creationTimestamp) and its create transaction (put if create_revision = 0).`,
    '  · kubeloop figures are end to end over HTTPS with a bearer token: authentication, decoding, defaulting, validation,',
    "    admission, storage and encoding. etcd's are storage only, through its v3 JSON gateway over plain HTTP (which adds",
    '    JSON↔protobuf translation and an in-process gRPC hop that kube-apiserver does not pay). kube-apiserver = API work + etcd,',
    "    so ours/etcd > 1 on throughput (< 1 on time) means kubeloop does the whole job faster than kube-apiserver's storage alone.",
    "  · etcd always fsyncs its log, as kubeloop's durable mode does (SQLite WAL, synchronous=FULL, group commit).",
    '  · kube-apiserver figures are quoted from the issue (2-core machine of this kind), not measured here.',
    `  · servers run as separate processes; the ${CLIENTS} clients share one bench process (node:https keep-alive).`,
    etcdRun || args['no-etcd']
      ? ''
      : '  · etcd was not found: install it (Debian: etcd-server) or set ETCD=/path/to/etcd for the side-by-side figures.',
  ]
    .filter(Boolean)
    .join('\n');
}
