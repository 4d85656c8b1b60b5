import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { isBenchObject } from '../lib/objects.js';
import { median, msSince } from '../lib/stats.js';
import type { Target } from '../lib/targets.js';

/** The same full list through `@kubernetes/client-node` and through a raw HTTPS GET + JSON.parse. */
export interface ClientComparison {
  /** `CoreV1Api.listNamespacedConfigMap`, call to typed result. */
  clientNodeMs: number;
  /** Raw keep-alive GET to last byte, plus JSON.parse. */
  rawMs: number;
  clientNodeRunsMs: number[];
  rawRunsMs: number[];
}

/**
 * Lists `namespace`'s ConfigMaps alternately with client-node (as an operator written with it
 * would) and with a raw request, `runs` times each after `warmup` rounds: alternating keeps both
 * under the same conditions on a shared machine.
 */
export async function compareClients(
  target: Target,
  kubeconfigPath: string,
  namespace: string,
  expected: number,
  opts: { runs: number; warmup: number },
): Promise<ClientComparison> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const api = kc.makeApiClient(CoreV1Api);
  const clientNodeRunsMs: number[] = [];
  const rawRunsMs: number[] = [];
  for (let i = 0; i < opts.warmup + opts.runs; i++) {
    const start = process.hrtime.bigint();
    const list = await api.listNamespacedConfigMap({ namespace });
    const ms = msSince(start);
    const count = list.items.filter((it) => isBenchObject(it.metadata?.name ?? '')).length;
    if (count !== expected)
      throw new Error(`client-node list returned ${count} bench objects, expected ${expected}`);
    const raw = await target.list(namespace, 0, undefined);
    if (i >= opts.warmup) {
      clientNodeRunsMs.push(ms);
      rawRunsMs.push(raw.res.totalMs + raw.parseMs);
    }
  }
  return { clientNodeMs: median(clientNodeRunsMs), rawMs: median(rawRunsMs), clientNodeRunsMs, rawRunsMs };
}
