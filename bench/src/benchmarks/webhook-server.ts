/**
 * kubeloop's webhook server (`kubeloop/webhook`: a `defaulter` on a custom kind, the patch
 * computed by the SDK) against a minimal `node:https` handler doing the same work (parse the
 * AdmissionReview, default `spec.replicas`, answer the JSON Patch it writes by hand), each in its
 * own process on the same certificate, driven by 16 concurrent keep-alive HTTPS clients posting
 * the same AdmissionReviews; alternating rounds (ABBA), medians. Figures: requests/s and p99
 * latency; target: kubeloop ≥ 0.8× the minimal handler's requests/s. The report prints how much
 * CPU other processes used during the run: the machine is shared.
 *
 *   npm run build && node bench/dist/benchmarks/webhook-server.js
 *   node bench/dist/benchmarks/webhook-server.js --requests=20000 --clients=16 --rounds=2 [--cpu-prof=DIR]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { KubeObject, ResourceDescriptor } from 'kubeloop/client';
import { defaulter, ensureCertificates, WebhookServer } from 'kubeloop/webhook';
import { cpuMs, LoadMeter } from '../lib/proc.js';
import { median, percentile } from '../lib/stats.js';

const PATH = '/mutate-bench-kubeloop-dev-v1-widget';
const KIND = {
  group: 'bench.kubeloop.dev',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
};

interface Widget extends KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec: { replicas?: number; image: string; env: Array<{ name: string; value: string }> };
}

const WidgetKind: ResourceDescriptor<Widget> = KIND;

/** One AdmissionReview as the API server sends it for a create (~1.2 KB). */
function review(i: number): string {
  const object: Widget = {
    apiVersion: 'bench.kubeloop.dev/v1',
    kind: 'Widget',
    metadata: { name: `w-${i}`, namespace: 'bench', labels: { app: 'bench', tier: 'web' } },
    spec: {
      image: 'registry.example.com/web:1.2.3',
      env: Array.from({ length: 8 }, (_, k) => ({ name: `VAR_${k}`, value: `value-${k}-${i}` })),
    },
  };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
      kind: { group: KIND.group, version: KIND.version, kind: KIND.kind },
      resource: { group: KIND.group, version: KIND.version, resource: KIND.plural },
      requestKind: { group: KIND.group, version: KIND.version, kind: KIND.kind },
      requestResource: { group: KIND.group, version: KIND.version, resource: KIND.plural },
      name: `w-${i}`,
      namespace: 'bench',
      operation: 'CREATE',
      userInfo: { username: 'kubernetes-admin', groups: ['kubeadm:cluster-admins', 'system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  });
}

/** The child: one server on `certDir`, port written to stdout. */
async function serve(kind: 'kubeloop' | 'plain', certDir: string): Promise<void> {
  let port: number;
  if (kind === 'kubeloop') {
    const server = new WebhookServer({ port: 0, certDir }).register(
      defaulter(WidgetKind, (w) => {
        w.spec.replicas ??= 1;
      }),
    );
    await server.listen();
    port = server.port;
  } else {
    const { cert, key } = await ensureCertificates({ dir: certDir }, ['127.0.0.1']);
    const server = createServer({ cert, key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          apiVersion: string;
          request: { uid: string; object: Widget };
        };
        const obj = r.request.object;
        const patch =
          obj.spec.replicas === undefined ? [{ op: 'add', path: '/spec/replicas', value: 1 }] : [];
        const response = {
          uid: r.request.uid,
          allowed: true,
          status: { code: 200 },
          ...(patch.length > 0 && {
            patchType: 'JSONPatch',
            patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
          }),
        };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: r.apiVersion, kind: 'AdmissionReview', response }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  }
  // An orderly exit on SIGTERM, so that --cpu-prof writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  process.stdout.write(`${JSON.stringify({ port })}\n`);
}

interface RoundResult {
  rps: number;
  p50: number;
  p99: number;
  serverCpuMsPerReq: number;
}

async function load(port: number, ca: string, requests: number, clients: number, bodies: string[]) {
  const agent = new Agent({ keepAlive: true, maxSockets: clients, ca });
  const latencies: number[] = [];
  let next = 0;
  const one = (body: string) =>
    new Promise<void>((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port,
          path: `${PATH}?timeout=10s`,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const out = JSON.parse(Buffer.concat(chunks).toString()) as {
              response?: { allowed?: boolean; patch?: string };
            };
            if (res.statusCode !== 200 || !out.response?.allowed || !out.response.patch)
              reject(
                new Error(
                  `unexpected answer ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 200)}`,
                ),
              );
            latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
            resolve();
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < requests) {
        const i = next++;
        await one(bodies[i % bodies.length]!);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return { rps: requests / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function round(
  kind: 'kubeloop' | 'plain',
  certDir: string,
  ca: string,
  o: { requests: number; clients: number; warmup: number },
  bodies: string[],
  meter: LoadMeter,
  cpuProf: string | undefined,
): Promise<RoundResult> {
  const child = spawn(
    process.execPath,
    [
      // CPU profiles of the servers, for looking into a gap: --cpu-prof=DIR.
      ...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : []),
      fileURLToPath(import.meta.url),
      `--serve=${kind}`,
      `--cert-dir=${certDir}`,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (c: Buffer) => {
      text += c.toString();
      const nl = text.indexOf('\n');
      if (nl >= 0) resolve((JSON.parse(text.slice(0, nl)) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
  try {
    await load(port, ca, o.warmup, o.clients, bodies);
    const cpu0 = cpuMs(child.pid!);
    const r = await load(port, ca, o.requests, o.clients, bodies);
    const cpu = cpuMs(child.pid!) - cpu0;
    meter.addChild(cpuMs(child.pid!));
    return { ...r, serverCpuMsPerReq: cpu / o.requests };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      serve: { type: 'string' },
      'cert-dir': { type: 'string' },
      requests: { type: 'string', default: '20000' },
      warmup: { type: 'string', default: '2000' },
      clients: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '2' },
      'cpu-prof': { type: 'string' },
    },
  });
  if (values.serve) return serve(values.serve as 'kubeloop' | 'plain', values['cert-dir'] ?? '');
  const o = {
    requests: Number(values.requests),
    warmup: Number(values.warmup),
    clients: Number(values.clients),
  };
  const rounds = Number(values.rounds);
  const certDir = mkdtempSync(join(tmpdir(), 'kubeloop-webhook-bench-'));
  try {
    const { caBundle } = await ensureCertificates({ dir: certDir }, ['127.0.0.1']);
    const bodies = Array.from({ length: 1000 }, (_, i) => review(i));
    const meter = new LoadMeter();
    const results: Record<'kubeloop' | 'plain', RoundResult[]> = { kubeloop: [], plain: [] };
    for (let r = 0; r < rounds; r++) {
      const order: Array<'kubeloop' | 'plain'> = r % 2 === 0 ? ['plain', 'kubeloop'] : ['kubeloop', 'plain'];
      for (const kind of order)
        results[kind].push(await round(kind, certDir, caBundle, o, bodies, meter, values['cpu-prof']));
    }
    const med = (kind: 'kubeloop' | 'plain', k: keyof RoundResult) => median(results[kind].map((x) => x[k]));
    const ratio = med('kubeloop', 'rps') / med('plain', 'rps');
    const row = (name: string, kind: 'kubeloop' | 'plain') =>
      `${name.padEnd(28)} ${med(kind, 'rps').toFixed(0).padStart(8)} req/s   p50 ${med(kind, 'p50').toFixed(2).padStart(6)} ms   p99 ${med(kind, 'p99').toFixed(2).padStart(6)} ms   server CPU ${(med(kind, 'serverCpuMsPerReq') * 1000).toFixed(0).padStart(5)} µs/req`;
    process.stdout.write(
      [
        `webhook-server: ${o.requests} AdmissionReviews (defaulting, JSON Patch) per round, ${o.clients} keep-alive HTTPS clients, ${rounds} rounds (ABBA), medians`,
        row('minimal node:https handler', 'plain'),
        row('kubeloop WebhookServer', 'kubeloop'),
        `ratio kubeloop / minimal: ${ratio.toFixed(2)}× requests/s (target ≥ 0.80×: ${ratio >= 0.8 ? 'PASS' : 'MISS'})`,
        `other processes used ${meter.otherPercent().toFixed(0)}% of the machine's CPU during the run`,
        '',
      ].join('\n'),
    );
  } finally {
    rmSync(certDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `webhook-server failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
