/**
 * The built-in controllers at idle: the watches they open (read from the server's audit log: each
 * collection and selector, and how often) and the server's V8 heap after a full GC, for one or
 * more builds side by side (each root must have `kubeloop server --audit-policy-file`).
 *
 *   node bench/dist/benchmarks/controller-watches.js [--nodes=N] [--idle-ms=MS] [--list] [ROOT…]
 *
 * Without a ROOT, the current build. Watches are counted over the controllers' users only
 * (kube-controller-manager, its controllers' service accounts, the scheduler and the nodes).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gcHooks, memoryAfterGc } from '../lib/memory.js';
import { idle } from '../lib/proc.js';
import { startKubeloop } from '../lib/servers.js';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [ResponseStarted, ResponseComplete]
rules:
- level: Metadata
  verbs: [watch]
- level: None
`;

const CONTROLLER_USERS = /^system:(kube-controller-manager|kube-scheduler|node:|serviceaccount:kube-system:)/;

/** The watches the controllers of one build opened by the time it idled, and its heap after GC. */
async function measure(root: string, nodes: number, idleMs: number) {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-watches-'));
  try {
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    const hooks = gcHooks(join(dir, 'gc.json'));
    const server = await startKubeloop({
      root,
      kubeconfigPath: join(dir, 'kubeconfig'),
      nodeArgs: hooks.nodeArgs,
      env: hooks.env,
      args: [
        '--nodes',
        String(nodes),
        '--audit-policy-file',
        join(dir, 'policy.yaml'),
        '--audit-log-path',
        join(dir, 'audit.log'),
      ],
    });
    try {
      await idle(idleMs);
      const memory = await memoryAfterGc(server.pid, join(dir, 'gc.json'));
      const watches = new Map<string, number>();
      for (const line of readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n')) {
        const e = JSON.parse(line) as { requestURI: string; user: { username: string } };
        if (!CONTROLLER_USERS.test(e.user.username)) continue;
        const url = new URL(e.requestURI, 'https://server');
        const selectors = ['labelSelector', 'fieldSelector'].flatMap((k) =>
          url.searchParams.has(k) ? [`${k}=${url.searchParams.get(k)}`] : [],
        );
        const key = [url.pathname, ...selectors].join(' ');
        watches.set(key, (watches.get(key) ?? 0) + 1);
      }
      return { watches, heapUsedMb: memory.heapUsedMb, rssMb: memory.rssMb };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      nodes: { type: 'string', default: '1' },
      'idle-ms': { type: 'string', default: '8000' },
      list: { type: 'boolean', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  const here = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const roots = positionals.length > 0 ? positionals.map((p) => resolve(p)) : [here];
  const nodes = Number(values.nodes);
  console.log(
    `rerun: npm run build && node bench/dist/benchmarks/controller-watches.js --nodes=${nodes} ${positionals.join(' ')}`.trim(),
  );
  for (const root of roots) {
    const r = await measure(root, nodes, Number(values['idle-ms']));
    const total = [...r.watches.values()].reduce((a, b) => a + b, 0);
    const twice = [...r.watches].filter(([, n]) => n > 1);
    console.log(
      `${root}: ${total} watches of ${r.watches.size} collections (${twice.length} watched more than once); ` +
        `after GC: V8 heap used ${r.heapUsedMb.toFixed(1)} MB, RSS ${r.rssMb.toFixed(1)} MB`,
    );
    for (const [key, n] of values.list ? [...r.watches].sort() : twice) console.log(`  ${n} ${key}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
