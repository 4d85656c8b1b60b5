/**
 * `kubeloop shards`: the rings of sharded operators (`Manager` option `sharding`) as the cluster
 * shows them — from the shard Leases alone, so it works against any cluster and without the
 * operator's code. Per ring: its sharder (holder of `<ring>-sharder`), and per shard its state
 * (live, or expired since when: `renewTime + leaseDurationSeconds`), its last renewal, and per
 * sharded controller the objects labeled with the shard and those draining; plus the objects no
 * shard holds yet. The controllers (kind, namespace, selector) come from the annotation each
 * replica writes on its shard Lease.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { Client, type KubeObject, Lease, loadKubeconfig } from 'kubeloop/client';
import {
  CONTROLLERS_ANNOTATION,
  drainLabel,
  leaseExpiry,
  RING_LABEL,
  type ShardedControllerInfo,
  sharderLeaseName,
  shardLabel,
} from 'kubeloop/runtime';

interface ShardsFlags {
  ring?: string;
  namespace?: string;
  output?: string;
  kubeconfig?: string;
}

/** One shard of a ring, as `-o json` prints it. */
export interface ShardView {
  id: string;
  lease: string;
  state: 'live' | 'expired';
  /** When the shard joined (the Lease's acquireTime). */
  acquireTime?: string;
  renewTime?: string;
  /** When the Lease expires (live) or expired. */
  expiry?: string;
  /** Per controller: objects labeled with this shard, and those among them draining. */
  controllers: Record<string, { objects: number; draining: number }>;
}

/** One ring, as `-o json` prints it. */
export interface RingView {
  name: string;
  namespace: string;
  /** The shard holding the ring's sharder Lease (unexpired), if any. */
  sharder?: string;
  controllers: ShardedControllerInfo[];
  shards: ShardView[];
  /** Per controller: objects it selects that carry no shard label (not assigned yet). */
  unassigned: Record<string, number>;
}

/** Reads the rings of `namespace` (one ring with `ring`), counting the objects of their controllers. */
export async function readRings(
  client: Client,
  namespace: string,
  ring?: string,
  now = Date.now(),
): Promise<RingView[]> {
  const leases = (
    await client.api(Lease, namespace).list({ labelSelector: ring ? `${RING_LABEL}=${ring}` : RING_LABEL })
  ).items;
  const names = [...new Set(leases.map((l) => l.metadata?.labels?.[RING_LABEL] ?? ''))].sort();
  const views: RingView[] = [];
  for (const name of names) {
    const members = leases.filter((l) => l.metadata?.labels?.[RING_LABEL] === name && l.spec?.holderIdentity);
    const controllers = new Map<string, ShardedControllerInfo>();
    for (const l of members) {
      for (const c of parseControllers(l))
        if (!controllers.has(c.controller)) controllers.set(c.controller, c);
    }
    let sharder: string | undefined;
    try {
      const lease = await client.api(Lease, namespace).get(sharderLeaseName(name));
      if (leaseExpiry(lease) > now) sharder = lease.spec?.holderIdentity ?? undefined;
    } catch {
      // No sharder elected (yet): none to show.
    }
    const shards: ShardView[] = members
      .map((l) => {
        const expiry = leaseExpiry(l);
        return {
          id: l.spec!.holderIdentity!,
          lease: l.metadata?.name ?? '',
          state: expiry > now ? ('live' as const) : ('expired' as const),
          ...(l.spec?.acquireTime && { acquireTime: String(l.spec.acquireTime) }),
          ...(l.spec?.renewTime && { renewTime: String(l.spec.renewTime) }),
          ...(expiry > 0 && { expiry: new Date(expiry).toISOString() }),
          controllers: {},
        };
      })
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const unassigned: Record<string, number> = {};
    for (const c of controllers.values()) {
      const objects = await countObjects(client, c);
      for (const s of shards)
        s.controllers[c.controller] = objects.byShard.get(s.id) ?? { objects: 0, draining: 0 };
      unassigned[c.controller] = objects.unassigned;
    }
    views.push({
      name,
      namespace,
      ...(sharder && { sharder }),
      controllers: [...controllers.values()],
      shards,
      unassigned,
    });
  }
  return views;
}

function parseControllers(lease: Lease): ShardedControllerInfo[] {
  const raw = lease.metadata?.annotations?.[CONTROLLERS_ANNOTATION];
  if (!raw) return [];
  try {
    const parsed = JSON.parse(raw) as unknown;
    return Array.isArray(parsed) ? (parsed as ShardedControllerInfo[]) : [];
  } catch {
    return [];
  }
}

/** One metadata-only list of the controller's objects, counted by shard and drain label. */
async function countObjects(client: Client, c: ShardedControllerInfo) {
  const shard = shardLabel(c.controller);
  const drain = drainLabel(c.controller);
  const byShard = new Map<string, { objects: number; draining: number }>();
  let unassigned = 0;
  const api = client.api({ group: c.group, version: c.version, kind: c.kind }, c.namespace);
  let cont: string | undefined;
  do {
    const page = await api.list({
      metadataOnly: true,
      limit: 5_000,
      ...(c.labelSelector && { labelSelector: c.labelSelector }),
      ...(cont && { continue: cont }),
    });
    for (const o of page.items as KubeObject[]) {
      const labels = o.metadata?.labels ?? {};
      const s = labels[shard];
      if (s === undefined) {
        unassigned++;
        continue;
      }
      const entry = byShard.get(s) ?? { objects: 0, draining: 0 };
      entry.objects++;
      if (labels[drain] !== undefined) entry.draining++;
      byShard.set(s, entry);
    }
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return { byShard, unassigned };
}

/** A duration as kubectl prints ages (k8s.io/apimachinery's `duration.HumanDuration`). */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  const h = Math.floor(m / 60);
  if (m < 180) return `${m}m`;
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  const d = Math.floor(h / 24);
  if (h < 48) return `${h}h`;
  if (h < 192) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  const y = Math.floor(d / 365);
  if (h < 24 * 365 * 2) return `${d}d`;
  if (h < 24 * 365 * 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
  return `${y}y`;
}

/** The rings as a kubectl-like table: one row per shard and controller, then the unassigned. */
export function formatRings(rings: readonly RingView[], now = Date.now()): string {
  const rows: string[][] = [
    ['RING', 'SHARD', 'STATE', 'SINCE', 'RENEWED', 'CONTROLLER', 'OBJECTS', 'DRAINING'],
  ];
  const age = (t: string | undefined) => (t ? humanDuration(now - Date.parse(t)) : '<unknown>');
  for (const r of rings) {
    const controllers = r.controllers.length > 0 ? r.controllers.map((c) => c.controller) : ['<none>'];
    for (const s of r.shards) {
      const live = s.state === 'live';
      const state = live ? (r.sharder === s.id ? 'Live,Sharder' : 'Live') : 'Expired';
      // Live: in the ring since it acquired its Lease; expired: since the expiry.
      const since = live ? age(s.acquireTime) : age(s.expiry);
      for (const c of controllers) {
        const counts = s.controllers[c];
        rows.push([
          r.name,
          s.id,
          state,
          since,
          age(s.renewTime),
          c,
          String(counts?.objects ?? 0),
          String(counts?.draining ?? 0),
        ]);
      }
    }
    for (const c of r.controllers)
      rows.push([
        r.name,
        '<none>',
        'Unassigned',
        '-',
        '-',
        c.controller,
        String(r.unassigned[c.controller] ?? 0),
        '0',
      ]);
  }
  if (rows.length === 1) return '';
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  // kubectl's tabwriter: columns padded to the widest cell, three spaces apart, no trailing blanks.
  return `${rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(i === row.length - 1 ? 0 : widths[i]! + 3))
        .join('')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** Registers `kubeloop shards`. */
export function registerShardsCommand(program: Command): void {
  program
    .command('shards')
    .description('show the rings of sharded operators: shards, their Leases and the objects each holds')
    .option('--ring <name>', 'only this ring (the `sharding.name` of the operator)')
    .option('-n, --namespace <namespace>', "namespace of the shard Leases (default: the kubeconfig's)")
    .option('-o, --output <format>', 'json for scripts (default: a table)')
    .option('--kubeconfig <path>', 'the kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .action(async (flags: ShardsFlags) => {
      if (flags.output !== undefined && flags.output !== 'json') {
        throw new Error(
          `unable to match a printer suitable for the output format "${flags.output}", allowed formats are: json`,
        );
      }
      const connection = await loadKubeconfig(flags.kubeconfig ? { path: resolve(flags.kubeconfig) } : {});
      const client = new Client(connection);
      try {
        const namespace = flags.namespace ?? client.namespace;
        const rings = await readRings(client, namespace, flags.ring);
        if (flags.output === 'json') {
          process.stdout.write(`${JSON.stringify({ rings }, null, 2)}\n`);
        } else if (rings.length === 0) {
          process.stderr.write(`No sharded rings found in ${namespace} namespace.\n`);
        } else {
          process.stdout.write(formatRings(rings));
        }
      } finally {
        await client.close();
      }
    });
}
