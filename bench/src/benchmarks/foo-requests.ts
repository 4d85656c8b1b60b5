/**
 * The server's work per Foo in the reconcile bench with the built-in controllers on, counted
 * rather than timed (a figure a loaded machine does not blur): the requests the server answered
 * per Foo by verb and resource (`apiserver_request_total`, over a cold and a warm burst until
 * every Foo's Deployment is available), and the server's and the operator's CPU per Foo. For
 * one or more builds one after the other, e.g. the baseline and the current build.
 *
 *   node bench/dist/benchmarks/foo-requests.js [--foos=N] [--nodes=N] [ROOT…]
 *
 * With `--forms`, the server's CPU per request instead, for each form of the requests the
 * sample operator and client-go's sample-controller make per Foo (issue 24: is a form of ours
 * costlier for the server than client-go's?): the Deployment create with either body, the
 * status write as our merge patch and as client-go's PUT of the whole Foo, the Event as
 * `events.k8s.io/v1` (ours) and core `v1` (client-go's record package). N requests per form
 * from 2 concurrent callers (the operators' 2 workers) on a bare local plane, forms alternated
 * over rounds after a warm-up round; medians of the server's CPU (/proc) per request.
 *
 *   node bench/dist/benchmarks/foo-requests.js --forms [--foos=1000] [--rounds=4]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Deployment, Event, EventsV1Event, type ObjectOf } from 'kubeloop/client';

type Foo = ObjectOf<typeof FooKind>;

import { HttpClient } from '../lib/http.js';
import { cpuMs } from '../lib/proc.js';
import { terminate } from '../lib/process.js';
import { requestCounts } from '../lib/request-counts.js';
import { startKubeloop } from '../lib/servers.js';
import { median } from '../lib/stats.js';
import { Foo as FooKind, installFooCrd } from './operators.js';
import { burst } from './reconcile.js';
import { installCrd, nodesReady, startOperator } from './reconcile-support.js';
import type { ReconcileOptions } from './reconcile-types.js';

async function measure(root: string, foos: number, nodes: number) {
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-foo-requests-'));
  const kubeconfigPath = join(work, 'kubeconfig');
  const server = await startKubeloop({ root, kubeconfigPath, args: ['--nodes', String(nodes)] });
  const http = new HttpClient(server.endpoint, 16);
  const o: ReconcileOptions = {
    root,
    foos,
    clients: 16,
    workers: 2,
    replicas: 1,
    controllers: true,
    nodes,
    timeoutMs: 300_000,
  };
  const metrics = () => requestCounts(http);
  let operator: Awaited<ReturnType<typeof startOperator>> | undefined;
  try {
    await installCrd(http, root);
    await nodesReady(http, nodes);
    operator = await startOperator(o, kubeconfigPath, join(work, 'operator.log'));
    const before = await metrics();
    const server0 = cpuMs(server.pid);
    const operator0 = cpuMs(operator.pid);
    const session = { o, http, serverPid: server.pid, operator, timeoutMs: 300_000, log: () => undefined };
    await burst(session, 'cold');
    await burst(session, 'warm');
    const serverCpu = cpuMs(server.pid) - server0;
    const operatorCpu = cpuMs(operator.pid) - operator0;
    const after = await metrics();
    const perFoo = [...after]
      .map(([k, n]) => [k, (n - (before.get(k) ?? 0)) / (2 * foos)] as const)
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1]);
    return { perFoo, serverCpuMs: serverCpu / (2 * foos), operatorCpuMs: operatorCpu / (2 * foos) };
  } finally {
    http.close();
    if (operator) await terminate(operator.child);
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Runs `fn(0 … n-1)` from `callers` concurrent loops. */
async function concurrently(n: number, callers: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let i = next++; i < n; i = next++) await fn(i);
    }),
  );
}

/** The server's CPU per request (µs) of each request form; see the file's comment. */
async function measureForms(root: string, foos: number, rounds: number) {
  const work = mkdtempSync(join(tmpdir(), 'kubeloop-request-forms-'));
  const kubeconfigPath = join(work, 'kubeconfig');
  const server = await startKubeloop({ root, kubeconfigPath, args: ['--no-controllers', '--nodes', '0'] });
  const client = await Client.fromKubeconfig({ path: kubeconfigPath });
  try {
    await installFooCrd(client, root);
    const ns = 'default';
    const api = client.api(FooKind, ns);
    const name = (i: number) => `foo-${String(i).padStart(6, '0')}`;
    await concurrently(foos, 16, (i) =>
      api.create({ metadata: { name: name(i) }, spec: { deploymentName: name(i), replicas: 1 } }),
    );
    const current = new Map<string, Foo>((await api.list()).items.map((f) => [f.metadata!.name!, f]));
    let round = 0;
    const deployment = (i: number, clientGo: boolean): Deployment => {
      const foo = current.get(name(i))!;
      const labels = { app: 'nginx', controller: name(i) };
      const owner = {
        apiVersion: `${FooKind.group}/${FooKind.version}`,
        kind: 'Foo',
        name: name(i),
        uid: foo.metadata!.uid!,
        controller: true,
        blockOwnerDeletion: true,
      };
      const metadata = {
        name: `${clientGo ? 'g' : 'k'}${round}-${name(i)}`,
        namespace: ns,
        ownerReferences: [owner],
      };
      // What Go's encoding/json writes of client-go's typed Deployment: empty structs and null times included.
      return clientGo
        ? ({
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { ...metadata, creationTimestamp: null },
            spec: {
              replicas: 1,
              selector: { matchLabels: labels },
              template: {
                metadata: { creationTimestamp: null, labels },
                spec: { containers: [{ name: 'nginx', image: 'nginx:latest', resources: {} }] },
              },
              strategy: {},
            },
            status: {},
          } as unknown as Deployment)
        : {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata,
            spec: {
              replicas: 1,
              selector: { matchLabels: labels },
              template: {
                metadata: { labels },
                spec: { containers: [{ name: 'nginx', image: 'nginx:latest' }] },
              },
            },
          };
    };
    const keep = (f: Foo) => current.set(f.metadata!.name!, f);
    const regarding = (i: number) => ({
      apiVersion: `${FooKind.group}/${FooKind.version}`,
      kind: 'Foo',
      name: name(i),
      namespace: ns,
      uid: current.get(name(i))!.metadata!.uid!,
    });
    const seconds = () => `${new Date().toISOString().slice(0, 19)}Z`;
    const forms: Record<string, (i: number) => Promise<unknown>> = {
      'POST deployments (kubeloop body)': (i) => client.api(Deployment, ns).create(deployment(i, false)),
      'POST deployments (client-go body)': (i) => client.api(Deployment, ns).create(deployment(i, true)),
      'PATCH foos/status (kubeloop: merge patch)': (i) =>
        api.patchStatus(name(i), { status: { availableReplicas: 1000 + round } }).then(keep),
      'PUT foos/status (client-go: whole Foo)': (i) =>
        api.updateStatus({ ...current.get(name(i))!, status: { availableReplicas: round } }).then(keep),
      'POST events.k8s.io/v1 events (kubeloop)': (i) =>
        client.api(EventsV1Event, ns).create({
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name: `${name(i)}.k${round}`, namespace: ns },
          eventTime: `${new Date().toISOString().slice(0, -1)}000Z`,
          reportingController: 'sample-controller',
          reportingInstance: 'sample-controller-host',
          action: 'Synced',
          reason: 'Synced',
          type: 'Normal',
          note: 'Foo synced successfully',
          regarding: regarding(i),
        }),
      'POST v1 events (client-go)': (i) =>
        client.api(Event, ns).create({
          metadata: { name: `${name(i)}.g${round}`, namespace: ns },
          involvedObject: regarding(i),
          reason: 'Synced',
          message: 'Foo synced successfully',
          source: { component: 'sample-controller' },
          firstTimestamp: seconds(),
          lastTimestamp: seconds(),
          count: 1,
          type: 'Normal',
        } as Event),
    };
    const names = Object.keys(forms);
    const samples = new Map<string, number[]>(names.map((k) => [k, []]));
    // Round 0 warms the server's code for every form up; forms alternate in order over rounds.
    for (round = 0; round <= rounds; round++) {
      for (const form of round % 2 === 0 ? names : [...names].reverse()) {
        const before = cpuMs(server.pid);
        await concurrently(foos, 2, forms[form]!);
        if (round > 0) samples.get(form)!.push(((cpuMs(server.pid) - before) * 1000) / foos);
      }
    }
    return names.map((form) => ({ form, usPerRequest: samples.get(form)! }));
  } finally {
    await client.close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

export async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      foos: { type: 'string', default: '100' },
      nodes: { type: 'string', default: '20' },
      forms: { type: 'boolean', default: false },
      rounds: { type: 'string', default: '4' },
    },
    allowPositionals: true,
    strict: true,
  });
  const here = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  if (values.forms) {
    const foos = values.foos === '100' ? 1000 : Number(values.foos);
    const rounds = Number(values.rounds);
    console.log(
      `rerun: npm run build && node bench/dist/benchmarks/foo-requests.js --forms --foos=${foos} --rounds=${rounds}`,
    );
    console.log(
      `server CPU per request, µs (${foos} requests per form and round, 2 callers; median, then each round):`,
    );
    for (const { form, usPerRequest } of await measureForms(here, foos, rounds))
      console.log(
        `  ${form.padEnd(44)} ${median(usPerRequest).toFixed(0).padStart(6)}   (${usPerRequest.map((x) => x.toFixed(0)).join(' ')})`,
      );
    return;
  }
  const roots = positionals.length > 0 ? positionals.map((p) => resolve(p)) : [here];
  const foos = Number(values.foos);
  const nodes = Number(values.nodes);
  console.log(
    `rerun: npm run build && node bench/dist/benchmarks/foo-requests.js --foos=${foos} --nodes=${nodes} ${positionals.join(' ')}`.trim(),
  );
  for (const root of roots) {
    const r = await measure(root, foos, nodes);
    const writes = r.perFoo.filter(([k]) => !/^(GET|LIST|WATCH) /.test(k)).reduce((s, [, n]) => s + n, 0);
    console.log(
      `${root}: per Foo (cold and warm bursts of ${foos}, until available): ${writes.toFixed(1)} writes; ` +
        `server CPU ${r.serverCpuMs.toFixed(1)} ms, operator CPU ${r.operatorCpuMs.toFixed(1)} ms`,
    );
    for (const [k, n] of r.perFoo) console.log(`  ${n.toFixed(2).padStart(6)} ${k}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
