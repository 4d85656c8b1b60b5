import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDuration } from './server.js';

// The CLI is tested as a user runs it: the built bin (`npm test` builds first).
const bin = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

function startServer(args: string[]): { child: ChildProcess; ready: Promise<string>; output: () => string } {
  const child = spawn(process.execPath, [bin, 'server', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('ready'));
      if (line) resolve(line);
    });
    child.stderr!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  ready.catch(() => undefined); // a test that expects a failed start reads the exit code instead
  return { child, ready, output: () => out };
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

describe('kubeloop server', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('prints a ready line with the URL, writes a working kubeconfig, and exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cli-'));
    dirs.push(dir);
    const kubeconfig = join(dir, 'kubeconfig');
    const { child, ready } = startServer(['--port', '0', '--kubeconfig', kubeconfig]);
    const line = await ready;
    const url = /https:\/\/127\.0\.0\.1:\d+/.exec(line)?.[0];
    expect(url).toBeDefined();

    const config = readFileSync(kubeconfig, 'utf8');
    expect(config).toContain(`server: ${url}`);
    const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(config)![1]!, 'base64').toString();
    const token = /token: (\S+)/.exec(config)![1]!;
    const status = (auth: string | undefined) =>
      new Promise<number>((resolve, reject) => {
        get(
          `${url}/api/v1/namespaces`,
          { agent: new Agent({ ca }), headers: auth ? { Authorization: auth } : {} },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        ).on('error', reject);
      });
    expect(await status(`Bearer ${token}`)).toBe(200);
    // No credentials: system:anonymous, whom RBAC (the default mode) does not let list namespaces.
    expect(await status(undefined)).toBe(403);
    expect(await status('Bearer wrong')).toBe(401);

    const exited = exitCode(child);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('--authorization-mode AlwaysAllow lets anyone do anything; an unknown mode is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cli-'));
    dirs.push(dir);
    const kubeconfig = join(dir, 'kubeconfig');
    const { child, ready } = startServer([
      '--port',
      '0',
      '--kubeconfig',
      kubeconfig,
      '--authorization-mode',
      'AlwaysAllow',
    ]);
    const url = /https:\/\/127\.0\.0\.1:\d+/.exec(await ready)![0];
    const ca = Buffer.from(
      /certificate-authority-data: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))![1]!,
      'base64',
    ).toString();
    const anonymous = await new Promise<number>((resolve, reject) => {
      get(`${url}/api/v1/namespaces`, { agent: new Agent({ ca }) }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject);
    });
    expect(anonymous).toBe(200);
    const exited = exitCode(child);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const bad = startServer(['--port', '0', '--kubeconfig', kubeconfig, '--authorization-mode', 'ABAC']);
    expect(await exitCode(bad.child)).not.toBe(0);
    expect(bad.output()).toContain('--authorization-mode must be RBAC or AlwaysAllow, got "ABAC"');
  });

  it("--audit-policy-file with --audit-log-path writes audit events; a bad policy refuses to start with kube-apiserver's message", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cli-'));
    dirs.push(dir);
    const kubeconfig = join(dir, 'kubeconfig');
    const policy = join(dir, 'policy.yaml');
    const log = join(dir, 'logs', 'audit.log');
    writeFileSync(
      policy,
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: "", resources: ["namespaces"]}]\n',
    );
    const { child, ready } = startServer([
      '--port',
      '0',
      '--kubeconfig',
      kubeconfig,
      '--audit-policy-file',
      policy,
      '--audit-log-path',
      log,
    ]);
    const url = /https:\/\/127\.0\.0\.1:\d+/.exec(await ready)![0];
    const config = readFileSync(kubeconfig, 'utf8');
    const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(config)![1]!, 'base64').toString();
    const token = /token: (\S+)/.exec(config)![1]!;
    const auditId = await new Promise<string | undefined>((resolve, reject) => {
      get(
        `${url}/api/v1/namespaces/default`,
        { agent: new Agent({ ca }), headers: { Authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers['audit-id'] as string | undefined));
        },
      ).on('error', reject);
    });
    const exited = exitCode(child);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const events = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.auditID === auditId);
    expect(events.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(events[1]).toMatchObject({
      level: 'Metadata',
      verb: 'get',
      objectRef: { resource: 'namespaces', namespace: 'default', name: 'default', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 200 },
    });

    writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n');
    const bad = startServer(['--port', '0', '--kubeconfig', kubeconfig, '--audit-policy-file', policy]);
    expect(await exitCode(bad.child)).not.toBe(0);
    expect(bad.output()).toContain(
      `loading audit policy file: rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse": from file ${policy}`,
    );
  });

  it('exits 0 on SIGINT too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cli-'));
    dirs.push(dir);
    const { child, ready } = startServer(['--port', '0', '--kubeconfig', join(dir, 'kc')]);
    await ready;
    const exited = exitCode(child);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('--no-controllers serves a bare API server: no ReplicaSet for a Deployment, no Node', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-cli-'));
    dirs.push(dir);
    const start = async (name: string, args: string[]) => {
      const kubeconfig = join(dir, name);
      const s = startServer(['--port', '0', '--kubeconfig', kubeconfig, ...args]);
      const url = /https:\/\/127\.0\.0\.1:\d+/.exec(await s.ready)![0];
      const config = readFileSync(kubeconfig, 'utf8');
      const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(config)![1]!, 'base64').toString();
      const token = /token: (\S+)/.exec(config)![1]!;
      const agent = new Agent({ ca });
      const call = (method: string, path: string, body?: unknown) =>
        new Promise<{ status: number; json: { items?: unknown[] } }>((resolve, reject) => {
          const req = request(
            `${url}${path}`,
            {
              method,
              agent,
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            },
            (res) => {
              let text = '';
              res.on('data', (d: Buffer) => {
                text += d.toString();
              });
              res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
            },
          );
          req.on('error', reject);
          req.end(body === undefined ? undefined : JSON.stringify(body));
        });
      return { child: s.child, call, agent };
    };
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    };
    // The same Deployment on a default server and a bare one, started side by side: once the
    // default one's controllers have acted, the bare one's would have too.
    const full = await start('full', []);
    const bare = await start('bare', ['--no-controllers']);
    try {
      for (const s of [full, bare]) {
        expect(
          (await s.call('POST', '/apis/apps/v1/namespaces/default/deployments', deployment)).status,
        ).toBe(201);
      }
      const replicaSets = async (s: typeof full) =>
        (await s.call('GET', '/apis/apps/v1/namespaces/default/replicasets')).json.items?.length ?? 0;
      const deadline = Date.now() + 30_000;
      while ((await replicaSets(full)) === 0) {
        if (Date.now() > deadline) throw new Error('the default server made no ReplicaSet');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await full.call('GET', '/api/v1/nodes')).json.items?.length).toBe(1);
      expect(await replicaSets(bare)).toBe(0);
      expect((await bare.call('GET', '/api/v1/nodes')).json.items?.length).toBe(0);
      // The namespace and CRD controllers still run: the API itself is complete.
      expect((await bare.call('GET', '/api/v1/namespaces/default')).status).toBe(200);
    } finally {
      for (const s of [full, bare]) {
        s.agent.destroy();
        const exited = exitCode(s.child);
        s.child.kill('SIGTERM');
        expect(await exited).toBe(0);
      }
    }
  });

  it('rejects a bad --port with a clear message and a non-zero exit', async () => {
    const { child, output } = startServer(['--port', 'abc']);
    const code = await exitCode(child);
    expect(code).not.toBe(0);
    expect(output()).toContain('--port must be an integer');
  });

  it('rejects a bad --compaction-interval with a clear message and a non-zero exit', async () => {
    const { child, output } = startServer(['--port', '0', '--compaction-interval', '5 minutes']);
    const code = await exitCode(child);
    expect(code).not.toBe(0);
    expect(output()).toContain('--compaction-interval must be a duration such as 5m, 90s or 0');
  });
});

describe('parseDuration', () => {
  it('reads Go-style durations as --etcd-compaction-interval takes them', () => {
    expect(['5m', '1m30s', '250ms', '1h', '0', '1.5s'].map(parseDuration)).toEqual([
      300_000, 90_000, 250, 3_600_000, 0, 1500,
    ]);
    expect(['', '5', 'm', '5 m', '-1s', '5x'].map(parseDuration)).toEqual(Array(6).fill(undefined));
  });
});
