/**
 * The control plane's webhook client alone: CPU per call of `createWebhookCaller().post` in this
 * process (user and system), against the same client of another checkout (`--base-root`), both
 * calling one minimal node:https webhook process over kept-alive TLS from 16 concurrent callers,
 * alternating rounds (ABBA), medians. The webhook process's CPU per call is printed too.
 *
 *   npm run build && node bench/dist/benchmarks/webhook-client.js --base-root=/work/wt/base-s13 [--calls=4000 --rounds=6]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startPlainAdmissionHook } from '../lib/admission-hook.js';
import { cpuMs } from '../lib/proc.js';
import { median } from '../lib/stats.js';

const { values } = parseArgs({
  options: {
    'base-root': { type: 'string' },
    calls: { type: 'string', default: '4000' },
    clients: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '6' },
  },
});
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CALLS = Number(values.calls);
const CLIENTS = Number(values.clients);
const ROUNDS = Number(values.rounds);

interface Caller {
  post(config: object, body: unknown, options: { timeoutSeconds: number }): Promise<unknown>;
  close?(): void;
}

async function callerOf(checkout: string): Promise<Caller> {
  const dist = join(checkout, 'packages/server/dist');
  const client = await import(pathToFileURL(join(dist, 'admission/webhook/client.js')).href);
  const store = await import(pathToFileURL(join(dist, 'storage/store.js')).href);
  return client.createWebhookCaller(store.Store.open()) as Caller;
}

const dir = mkdtempSync(join(tmpdir(), 'kubeloop-webhook-client-'));
const { port, caBundle, child: hook } = await startPlainAdmissionHook(dir);
try {
  const object = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'x', namespace: 'bench', uid: 'u' },
    data: { a: 'b'.repeat(100) },
  };
  const review = (i: number) => ({
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: { uid: `uid-${i}`, operation: 'CREATE', object, oldObject: null, dryRun: false },
  });
  const run = async (caller: Caller, n: number) => {
    let next = 0;
    const cpu0 = process.cpuUsage();
    const hook0 = cpuMs(hook.pid!);
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < n) {
          const i = next++;
          const url = `https://127.0.0.1:${port}/${i % 2 ? 'mutate' : 'validate'}`;
          await caller.post({ url, caBundle }, review(i), { timeoutSeconds: 10 });
        }
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    return {
      user: cpu.user / n,
      total: (cpu.user + cpu.system) / n,
      hook: ((cpuMs(hook.pid!) - hook0) * 1000) / n,
    };
  };
  const sides: Record<string, Caller> = { current: await callerOf(root) };
  if (values['base-root']) sides.base = await callerOf(resolve(values['base-root']));
  const names = Object.keys(sides);
  for (const name of names) await run(sides[name]!, 1000); // warm-up
  const results: Record<string, { user: number; total: number; hook: number }[]> = Object.fromEntries(
    names.map((n) => [n, []]),
  );
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of r % 2 ? [...names].reverse() : names)
      results[name]!.push(await run(sides[name]!, CALLS));
  }
  for (const name of names) {
    const m = (k: 'user' | 'total' | 'hook') => median(results[name]!.map((x) => x[k])).toFixed(1);
    console.log(
      `${name.padEnd(8)} caller CPU ${m('total')} µs per call (user ${m('user')}), webhook process ${m('hook')} µs per call`,
    );
  }
  for (const s of Object.values(sides)) s.close?.();
  console.log(
    `rerun: node bench/dist/benchmarks/webhook-client.js --calls=${CALLS} --clients=${CLIENTS} --rounds=${ROUNDS}${values['base-root'] ? ` --base-root=${values['base-root']}` : ''}`,
  );
} finally {
  hook.kill();
  rmSync(dir, { recursive: true, force: true });
}
