/**
 * What authorization costs a create: ConfigMap creates/s on `kubeloop server --authorization-mode
 * RBAC` against `--authorization-mode AlwaysAllow`, sent by a service account that a RoleBinding
 * lets create ConfigMaps (so RBAC resolves its rules on every request), among 200 other bindings
 * (more than kube's bootstrap policy holds), and by the admin (system:masters, allowed before
 * RBAC is asked). Two memory servers run side by side, taking turns batch by batch (ABBA); medians.
 * Target: RBAC ≥ 0.9× AlwaysAllow.
 *
 *   npm run build && node bench/dist/benchmarks/authz-create.js --creates=3000 --rounds=4
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { HttpClient } from '../lib/http.js';
import { startKubeloop } from '../lib/servers.js';
import { kubeloopTarget } from '../lib/targets.js';
import { runCreates } from './create.js';

const { values } = parseArgs({
  options: {
    creates: { type: 'string', default: '3000' },
    clients: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '4' },
  },
});
const CREATES = Number(values.creates);
const CLIENTS = Number(values.clients);
const ROUNDS = Number(values.rounds);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const NS = 'bench';

type Mode = 'RBAC' | 'AlwaysAllow';
type Who = 'sa' | 'admin';
/** Creates/s, and the server's CPU per create (less swayed than wall time by a busy machine). */
interface Figures {
  perSecond: number;
  cpuMs: number;
}

async function post(http: HttpClient, path: string, body: object): Promise<{ status?: { token?: string } }> {
  const res = await http.request('POST', path, JSON.stringify(body));
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.body.toString()}`);
  return JSON.parse(res.body.toString()) as { status?: { token?: string } };
}

/** A server in `mode`, set up, with a client as the service account and one as the admin. */
interface Setup {
  stop(): Promise<void>;
  run(who: Who, first: number): Promise<Figures>;
}

async function setUp(mode: Mode, dir: string): Promise<Setup> {
  const server = await startKubeloop({
    root,
    kubeconfigPath: join(dir, `kubeconfig-${mode}`),
    args: ['--no-controllers', '--authorization-mode', mode],
  });
  const admin = new HttpClient(server.endpoint, 4);
  await post(admin, '/api/v1/namespaces', { metadata: { name: NS } });
  await post(admin, `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'writer' } });
  await post(admin, `${RBAC}/namespaces/${NS}/roles`, {
    metadata: { name: 'cm-writer' },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'list', 'delete', 'deletecollection'] },
    ],
  });
  const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });
  for (let i = 0; i < 100; i++) {
    await post(admin, `${RBAC}/clusterrolebindings`, {
      metadata: { name: `filler-${i}` },
      roleRef: ref('ClusterRole', `filler-${i}`),
      subjects: [ref(i % 2 ? 'User' : 'Group', `someone-${i}`)],
    });
    await post(admin, `${RBAC}/namespaces/${NS}/rolebindings`, {
      metadata: { name: `filler-${i}` },
      roleRef: ref('Role', 'cm-writer'),
      subjects: [ref('User', `someone-${i}`)],
    });
  }
  await post(admin, `${RBAC}/namespaces/${NS}/rolebindings`, {
    metadata: { name: 'writer' },
    roleRef: ref('Role', 'cm-writer'),
    subjects: [{ kind: 'ServiceAccount', name: 'writer', namespace: NS }],
  });
  const issued = await post(admin, `/api/v1/namespaces/${NS}/serviceaccounts/writer/token`, { spec: {} });
  const token = issued.status?.token ?? '';
  const targets = {
    sa: kubeloopTarget({ ...server, endpoint: { ...server.endpoint, token } }, CLIENTS),
    admin: kubeloopTarget(server, CLIENTS),
  };
  // Warm-up of both paths.
  await runCreates(targets.sa, NS, 500, CLIENTS, 1_000_000);
  await runCreates(targets.admin, NS, 500, CLIENTS, 2_000_000);
  return {
    async run(who, first) {
      const r = await runCreates(targets[who], NS, CREATES, CLIENTS, first);
      return { perSecond: r.perSecond, cpuMs: r.serverCpuMsPerCreate };
    },
    async stop() {
      await targets.sa.close();
      await targets.admin.close();
      admin.close();
      await server.stop();
    },
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const dir = mkdtempSync(join(tmpdir(), 'kubeloop-authz-bench-'));
try {
  const runs: Record<Mode, Record<Who, Figures[]>> = {
    RBAC: { sa: [], admin: [] },
    AlwaysAllow: { sa: [], admin: [] },
  };
  // Both servers run side by side and take turns, batch by batch (ABBA), so that what else the
  // machine does at any moment weighs on both modes alike.
  const servers: Record<Mode, Setup> = {
    RBAC: await setUp('RBAC', dir),
    AlwaysAllow: await setUp('AlwaysAllow', dir),
  };
  try {
    let first = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const order: Mode[] = r % 2 === 0 ? ['RBAC', 'AlwaysAllow'] : ['AlwaysAllow', 'RBAC'];
      for (const who of ['sa', 'admin'] as const)
        for (const mode of order) {
          const f = await servers[mode].run(who, first);
          first += CREATES;
          runs[mode][who].push(f);
          console.log(
            `round ${r + 1} ${mode} ${who}: ${f.perSecond.toFixed(0)}/s (server ${f.cpuMs.toFixed(3)} ms CPU/create)`,
          );
        }
    }
  } finally {
    await servers.RBAC.stop();
    await servers.AlwaysAllow.stop();
  }
  for (const who of ['sa', 'admin'] as const) {
    const rate = (mode: Mode) => median(runs[mode][who].map((f) => f.perSecond));
    const cpu = (mode: Mode) => median(runs[mode][who].map((f) => f.cpuMs));
    const ratio = rate('RBAC') / rate('AlwaysAllow');
    const cpuRatio = cpu('AlwaysAllow') / cpu('RBAC');
    const verdict = (x: number) => (x >= 0.9 ? 'PASS' : 'MISS');
    console.log(
      `${who === 'sa' ? 'service account' : 'admin (system:masters)'}: creates/s RBAC ${rate('RBAC').toFixed(0)} vs AlwaysAllow ${rate('AlwaysAllow').toFixed(0)}, ratio ${ratio.toFixed(3)} ${verdict(ratio)}; ` +
        `server CPU/create RBAC ${cpu('RBAC').toFixed(3)} ms vs AlwaysAllow ${cpu('AlwaysAllow').toFixed(3)} ms, throughput ratio ${cpuRatio.toFixed(3)} ${verdict(cpuRatio)} (target ≥ 0.9)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
