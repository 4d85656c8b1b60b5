/**
 * Creates/s with one ValidatingAdmissionPolicy and its binding in force against none, on the
 * same kubeloop server in the same run, with the method of the create benchmark (`runCreates`:
 * concurrent keep-alive clients posting 300 B ConfigMaps). The policy matches every ConfigMap
 * create and runs two validations (one on a variable) that every object passes, so each create
 * pays for the matching, the activation and the CEL evaluation, and none is refused. The runs
 * alternate in rounds of AB–BA blocks, the policy created before and deleted after each B
 * block. Target: with the policy, at least 0.9× the creates/s without.
 *
 *   npm run build && node bench/dist/benchmarks/policy-create.js
 *   node bench/dist/benchmarks/policy-create.js --creates=4000 --clients=16 --rounds=2
 *
 * To see where the policy's cost goes, profile the server doing one kind of block only (the
 * warm-up still meets the policy), once each, and compare the two profiles:
 *
 *   node bench/dist/benchmarks/policy-create.js --only=policy --cpu-prof=/tmp/prof-policy
 *   node bench/dist/benchmarks/policy-create.js --only=none --cpu-prof=/tmp/prof-none
 *
 * With `--base-root=DIR` (another checkout, built) its server runs the same comparison in the
 * same run, the two servers' rounds interleaved: a change's figures beside its baseline's, under
 * the same load of the machine.
 *
 *   node bench/dist/benchmarks/policy-create.js --creates=20000 --rounds=10 --base-root=../base
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type ServerProcess, startKubeloop } from '../lib/servers.js';
import { kubeloopTarget, type Target } from '../lib/targets.js';
import { type CreateResult, combineCreates, runCreates } from './create.js';

const AR = '/apis/admissionregistration.k8s.io/v1';

/** The benchmark's policy: every ConfigMap create, two validations every bench object passes. */
export const BENCH_POLICY = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'bench-configmaps' },
  spec: {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [
        { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
      ],
    },
    variables: [{ name: 'data', expression: 'has(object.data) ? object.data : {}' }],
    validations: [
      { expression: "object.metadata.name.startsWith('cm-')", message: 'bench names start with cm-' },
      {
        expression: 'size(variables.data) <= 16',
        messageExpression: "'too many keys: ' + string(size(variables.data))",
      },
    ],
  },
};

export const BENCH_BINDING = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name: 'bench-configmaps' },
  spec: { policyName: 'bench-configmaps', validationActions: ['Deny'] },
};

/** The run's figures. */
export interface PolicyCreateResult {
  none: CreateResult;
  policy: CreateResult;
  /** Creates/s with the policy over creates/s without (target ≥ 0.9). */
  throughputRatio: number;
  /**
   * The median over the rounds of each round's ratio (its two policy blocks against its two
   * others): a round slowed by another process's burst weighs no more than one round.
   */
  medianRoundRatio: number;
  serverCpuRatio: number;
  p50Ratio: number;
}

async function check(target: Target, method: string, path: string, body: string | undefined, ok: number) {
  const res = await target.http.request(method, path, body);
  if (res.status !== ok) throw new Error(`${method} ${path}: ${res.status} ${res.body.toString()}`);
}

async function setPolicy(target: Target, on: boolean): Promise<void> {
  if (on) {
    await check(target, 'POST', `${AR}/validatingadmissionpolicies`, JSON.stringify(BENCH_POLICY), 201);
    await check(
      target,
      'POST',
      `${AR}/validatingadmissionpolicybindings`,
      JSON.stringify(BENCH_BINDING),
      201,
    );
    // The status controller type-checks a new policy and writes its status (a new version,
    // which the plugin compiles again): done before the block, so that the block measures the
    // policy in force, not its one-time set-up.
    for (let i = 0; ; i++) {
      const res = await target.http.request('GET', `${AR}/validatingadmissionpolicies/bench-configmaps`);
      const p = JSON.parse(res.body.toString()) as {
        metadata?: { generation?: number };
        status?: { observedGeneration?: number };
      };
      if (p.status?.observedGeneration === p.metadata?.generation) break;
      if (i === 1000) throw new Error('the policy status was not written');
      await new Promise((r) => setTimeout(r, 5));
    }
    // The policy is in force: a name it refuses is refused (so the B blocks do measure it).
    const probe = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' } });
    await check(target, 'POST', '/api/v1/namespaces/bench-policy/configmaps', probe, 422);
  } else {
    await check(target, 'DELETE', `${AR}/validatingadmissionpolicybindings/bench-configmaps`, undefined, 200);
    await check(target, 'DELETE', `${AR}/validatingadmissionpolicies/bench-configmaps`, undefined, 200);
  }
}

interface Kind {
  on: boolean;
  ns: string;
  parts: CreateResult[];
  latencies: number[];
  done: number;
}

/** One server's share of a run: its blocks of each kind, over the rounds. */
interface Side {
  target: Target;
  kinds: [Kind, Kind];
  /** Each round's creates/s with the policy over without. */
  roundRatios: number[];
}

interface RunOptions {
  warmup?: number;
  rounds?: number;
  only?: 'none' | 'policy';
}

/** Warms a server up (with and without the policy) and readies its namespaces. */
async function prepare(target: Target, clients: number, warmup: number): Promise<Side> {
  for (const ns of ['warmup', 'bench-none', 'bench-policy']) await target.prepare(ns);
  await runCreates(target, 'warmup', warmup, clients);
  await setPolicy(target, true);
  await runCreates(target, 'warmup', warmup, clients, warmup);
  await setPolicy(target, false);
  await target.deleteAll('warmup');
  const kind = (on: boolean): Kind => ({
    on,
    ns: on ? 'bench-policy' : 'bench-none',
    parts: [],
    latencies: [],
    done: 0,
  });
  return { target, kinds: [kind(false), kind(true)], roundRatios: [] };
}

/** Round `r` of `rounds` on one server: an AB–BA block sequence of `total / (2 * rounds)` creates a block. */
async function round(side: Side, r: number, total: number, clients: number, opts: RunOptions): Promise<void> {
  const rounds = Math.max(1, opts.rounds ?? 2);
  const block = Math.max(1, Math.floor(total / (2 * rounds)));
  const { target, kinds } = side;
  // This round's creates and seconds, without and with the policy.
  const creates = [0, 0];
  const seconds = [0, 0];
  for (const k of [...kinds, ...[...kinds].reverse()]) {
    // With `only`, the other kind's blocks are skipped (its figures are then NaN).
    if (opts.only && opts.only !== (k.on ? 'policy' : 'none')) continue;
    const n = r === rounds - 1 && k.parts.length === 2 * rounds - 1 ? total - k.done : block;
    if (k.on) await setPolicy(target, true);
    const timed: Target = {
      ...target,
      async create(ns, name) {
        const res = await target.create(ns, name);
        k.latencies.push(res.totalMs);
        return res;
      },
    };
    const part = await runCreates(timed, k.ns, n, clients, k.done);
    k.parts.push(part);
    k.done += n;
    creates[k.on ? 1 : 0]! += part.total;
    seconds[k.on ? 1 : 0]! += part.seconds;
    if (k.on) await setPolicy(target, false);
  }
  side.roundRatios.push(creates[1]! / seconds[1]! / (creates[0]! / seconds[0]!));
}

function resultOf(side: Side): PolicyCreateResult {
  const [none, policy] = side.kinds.map((k) => combineCreates(k.parts, k.latencies)) as [
    CreateResult,
    CreateResult,
  ];
  return {
    none,
    policy,
    throughputRatio: policy.perSecond / none.perSecond,
    medianRoundRatio: median(side.roundRatios),
    serverCpuRatio: policy.serverCpuMsPerCreate / none.serverCpuMsPerCreate,
    p50Ratio: policy.p50Ms / none.p50Ms,
  };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Runs the comparison on a server that is already up (see the module's description). */
export async function runPolicyCreates(
  target: Target,
  total: number,
  clients: number,
  opts: RunOptions = {},
): Promise<PolicyCreateResult> {
  return (await runPolicyCreatesOn([target], total, clients, opts))[0]!;
}

/**
 * The comparison on each of `targets` (servers already up), their rounds interleaved — round r
 * runs on each server in turn, the order reversed every other round — so that a change of the
 * machine's load meets all of them alike.
 */
export async function runPolicyCreatesOn(
  targets: readonly Target[],
  total: number,
  clients: number,
  opts: RunOptions = {},
): Promise<PolicyCreateResult[]> {
  const sides: Side[] = [];
  for (const t of targets) sides.push(await prepare(t, clients, opts.warmup ?? 1000));
  const rounds = Math.max(1, opts.rounds ?? 2);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) await round(side, r, total, clients, opts);
  }
  return sides.map(resultOf);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      creates: { type: 'string', default: '10000' },
      clients: { type: 'string', default: '16' },
      warmup: { type: 'string', default: '1000' },
      rounds: { type: 'string', default: '2' },
      'cpu-prof': { type: 'string' },
      only: { type: 'string' },
      'base-root': { type: 'string' },
    },
  });
  const creates = Number(values.creates);
  const clients = Number(values.clients);
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const baseRoot = values['base-root'] ? resolve(values['base-root']) : undefined;
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-policy-create-'));
  const servers: ServerProcess[] = [];
  const targets: Target[] = [];
  const log = (s: string) => process.stdout.write(`${s}\n`);
  try {
    for (const [i, r] of [root, ...(baseRoot ? [baseRoot] : [])].entries()) {
      const server = await startKubeloop({
        root: r,
        kubeconfigPath: join(work, `kubeconfig-${i}`),
        ...(values['cpu-prof'] && { cpuProfDir: values['cpu-prof'] }),
      });
      servers.push(server);
      targets.push(kubeloopTarget(server, clients));
    }
    log(
      `creating ${creates.toLocaleString('en-US')} ConfigMaps without and with one ValidatingAdmissionPolicy + binding, ${clients} clients, ${values.rounds} rounds of AB-BA blocks (${servers[0]!.name}${baseRoot ? `; and on the server of ${baseRoot}, its rounds interleaved` : ''})`,
    );
    const results = await runPolicyCreatesOn(targets, creates, clients, {
      warmup: Number(values.warmup),
      rounds: Number(values.rounds),
      ...((values.only === 'none' || values.only === 'policy') && { only: values.only }),
    });
    const row = (name: string, c: CreateResult) =>
      `  ${name.padEnd(30)} ${Math.round(c.perSecond).toLocaleString('en-US').padStart(7)}/s   p50 ${c.p50Ms.toFixed(2).padStart(6)} ms   p99 ${c.p99Ms.toFixed(2).padStart(6)} ms   server CPU ${c.serverCpuMsPerCreate.toFixed(3)} ms/create`;
    for (const [i, r] of results.entries()) {
      if (baseRoot) log(i === 0 ? 'this checkout:' : `base (${baseRoot}):`);
      if (values.only) {
        // One kind only (for a profile): no ratios.
        log(values.only === 'none' ? row('no policy', r.none) : row('one policy + binding', r.policy));
        continue;
      }
      log(row('no policy', r.none));
      log(row('one policy + binding', r.policy));
      log(
        `  creates/s with the policy: ${r.throughputRatio.toFixed(2)}× without (target ≥ 0.9×) ${r.throughputRatio >= 0.9 ? 'PASS' : 'MISS'}; median of the rounds' ratios ${r.medianRoundRatio.toFixed(2)}×`,
      );
      log(
        `  server CPU per create: ${r.serverCpuRatio.toFixed(2)}×   p50 latency: ${r.p50Ratio.toFixed(2)}×`,
      );
      log(
        `  other processes used ${r.none.otherCpuPercent.toFixed(0)}% / ${r.policy.otherCpuPercent.toFixed(0)}% of the machine's CPU during the runs`,
      );
    }
    const [cur, base] = results;
    if (cur && base && !values.only)
      log(
        `this checkout / base: server CPU per create with the policy ×${(cur.policy.serverCpuMsPerCreate / base.policy.serverCpuMsPerCreate).toFixed(2)}, without ×${(cur.none.serverCpuMsPerCreate / base.none.serverCpuMsPerCreate).toFixed(2)}; the policy's extra CPU per create ${((cur.policy.serverCpuMsPerCreate - cur.none.serverCpuMsPerCreate) * 1000).toFixed(0)} µs against ${((base.policy.serverCpuMsPerCreate - base.none.serverCpuMsPerCreate) * 1000).toFixed(0)} µs`,
      );
  } finally {
    for (const t of targets) await t.close();
    for (const s of servers) await s.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `policy-create failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
