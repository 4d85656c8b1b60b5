/**
 * Listing and decoding a large collection with `kubeloop/client` and with
 * `@kubernetes/client-node` 1.x, against the same server in the same run, runs interleaved so
 * that both see the same machine state.
 *
 * As part of `npm run bench` (see `compareClientList`), or alone:
 *
 *   npm run build && node bench/dist/client-list.js                  # 10,000 ConfigMaps
 *   node bench/dist/client-list.js --objects=2000 --runs=5
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Client, ConfigMap, Namespace } from 'kubeloop/client';
import { configMap, isBenchObject, objectName } from './lib/objects.js';
import { startKubeloop } from './lib/servers.js';
import { median, msSince } from './lib/stats.js';

/** Times of one client. */
export interface ClientTimes {
  medianMs: number;
  runsMs: number[];
}

/** The comparison: same list, both clients, interleaved runs. */
export interface ClientListResult {
  items: number;
  kubeloop: ClientTimes;
  clientNode: ClientTimes;
  /** clientNode / kubeloop median (above 1: kubeloop is faster). */
  speedup: number;
}

/**
 * Lists `namespace` (holding `expected` bench ConfigMaps) `runs` times with each client after
 * `warmup` untimed lists each. Each timed run is a full list: request, transfer, and decoding
 * into objects the caller can use.
 */
export async function compareClientList(
  kubeconfigPath: string,
  namespace: string,
  expected: number,
  opts: { runs: number; warmup: number },
): Promise<ClientListResult> {
  const client = await Client.fromKubeconfig({ path: kubeconfigPath });
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const cms = client.api(ConfigMap, namespace);
  const check = (who: string, names: (string | undefined)[]) => {
    const n = names.filter((name) => isBenchObject(name ?? '')).length;
    if (n !== expected) throw new Error(`${who} listed ${n} bench objects, expected ${expected}`);
  };
  const kubeloopRun = async () => {
    const start = process.hrtime.bigint();
    const list = await cms.list();
    const ms = msSince(start);
    check(
      'kubeloop/client',
      list.items.map((i) => i.metadata?.name),
    );
    return ms;
  };
  const clientNodeRun = async () => {
    const start = process.hrtime.bigint();
    const list = await core.listNamespacedConfigMap({ namespace });
    const ms = msSince(start);
    check(
      '@kubernetes/client-node',
      list.items.map((i) => i.metadata?.name),
    );
    return ms;
  };
  try {
    for (let i = 0; i < opts.warmup; i++) {
      await kubeloopRun();
      await clientNodeRun();
    }
    const k: number[] = [];
    const c: number[] = [];
    for (let i = 0; i < opts.runs; i++) {
      // Alternate which goes first, so neither always runs right after the other's garbage.
      if (i % 2 === 0) {
        k.push(await kubeloopRun());
        c.push(await clientNodeRun());
      } else {
        c.push(await clientNodeRun());
        k.push(await kubeloopRun());
      }
    }
    const kubeloop = { medianMs: median(k), runsMs: k };
    const clientNode = { medianMs: median(c), runsMs: c };
    return { items: expected, kubeloop, clientNode, speedup: clientNode.medianMs / kubeloop.medianMs };
  } finally {
    await client.close();
  }
}

/** Creates `count` bench ConfigMaps in `namespace` with `concurrency` requests in flight. */
export async function createConfigMaps(
  client: Client,
  namespace: string,
  count: number,
  concurrency = 16,
): Promise<void> {
  const cms = client.api(ConfigMap, namespace);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await cms.create(JSON.parse(configMap(namespace, objectName(i))) as ConfigMap);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '10000' },
      runs: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
    },
  });
  const objects = Number(values.objects);
  const runs = Number(values.runs);
  const warmup = Number(values.warmup);
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-client-list-'));
  const kubeconfigPath = join(work, 'kubeconfig');
  const server = await startKubeloop({ root, kubeconfigPath });
  const log = (s: string) => process.stdout.write(`${s}\n`);
  try {
    const client = await Client.fromKubeconfig({ path: kubeconfigPath });
    try {
      await client.api(Namespace).create({ metadata: { name: 'bench' } });
      log(`creating ${objects.toLocaleString('en-US')} ConfigMaps…`);
      await createConfigMaps(client, 'bench', objects);
    } finally {
      await client.close();
    }
    log(`listing them ${runs} times with each client (after ${warmup} warm-up lists each)`);
    const r = await compareClientList(kubeconfigPath, 'bench', objects, { runs, warmup });
    const row = (name: string, t: ClientTimes) =>
      `  ${name.padEnd(26)} median ${t.medianMs.toFixed(1).padStart(8)} ms   runs ${t.runsMs.map((v) => v.toFixed(0)).join(', ')}`;
    log(`list + decode ${r.items.toLocaleString('en-US')} ConfigMaps (${server.name}):`);
    log(row('kubeloop/client', r.kubeloop));
    log(row('@kubernetes/client-node', r.clientNode));
    log(`  kubeloop/client is ${r.speedup.toFixed(2)}× the speed of @kubernetes/client-node`);
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `client-list failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
