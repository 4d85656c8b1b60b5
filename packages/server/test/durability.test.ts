/**
 * Durability of the real `kubeloop server` process on a data directory: every acknowledged
 * write survives `kill -9`, the restarted server continues the revision sequence, keeps its CA
 * and token, serves watches from its list resourceVersion, stops cleanly on SIGTERM, and refuses
 * to share its data directory with a second server.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { ControlPlane } from '../src/index.js';
import { openSqliteJournal } from '../src/storage/sqlite-journal.js';
import { Store } from '../src/storage/store.js';
import { httpClient } from './http.js';
import { eventually } from './kubectl.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = join(ROOT, 'packages/cli/dist/bin.js');
const PACKAGES = ['packages/kubeloop', 'packages/server', 'packages/cli'];

/** Newest modification time of the sources a build reads (tests excluded). */
function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (/\.(ts|json)$/.test(entry.name) && !entry.name.endsWith('.test.ts'))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** CI builds before testing; a local run rebuilds when a package's dist is missing or older than its sources. */
function ensureBuilt(): void {
  const stale = PACKAGES.some((p) => {
    const info = join(ROOT, p, 'dist/.tsbuildinfo');
    return !existsSync(info) || statSync(info).mtimeMs < newestSource(join(ROOT, p, 'src'));
  });
  if (!stale && existsSync(BIN)) return;
  try {
    execFileSync('npx', ['tsc', '-b', ...PACKAGES], { cwd: ROOT, stdio: 'pipe' });
  } catch (err) {
    // Type errors elsewhere in the tree do not stop tsc -b from emitting; a missing CLI does.
    if (!existsSync(BIN)) throw err;
  }
}

/** A `kubeloop server` child process. */
interface Server {
  proc: ChildProcess;
  url: string;
  kubeconfig: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startServer(dataDir: string, kubeconfigPath: string, extraArgs: string[] = []): Promise<Server> {
  const proc = spawn(
    process.execPath,
    [BIN, 'server', '--port', '0', '--data-dir', dataDir, '--kubeconfig', kubeconfigPath, ...extraArgs],
    {
      cwd: dirname(dataDir),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    proc.on('exit', (code, signal) => done({ code, signal }));
    proc.on('error', (e) => {
      err += String(e);
      done({ code: null, signal: null });
    });
  });
  return new Promise((resolveStart, reject) => {
    const onData = () => {
      const m = /kubeloop control plane ready at (https:\/\/\S+)/.exec(out);
      if (!m) return;
      proc.stdout!.off('data', onData);
      resolveStart({
        proc,
        url: m[1]!,
        kubeconfig: readFileSync(kubeconfigPath, 'utf8'),
        stdout: () => out,
        stderr: () => err,
        exited,
      });
    };
    proc.stdout!.on('data', onData);
    exited.then(({ code, signal }) =>
      reject(new Error(`kubeloop server exited (${code ?? signal}) before it was ready:\n${err}${out}`)),
    );
  });
}

/** A client of a server process, from the kubeconfig it wrote. */
function clientOf(server: { url: string; kubeconfig: string }) {
  const kc = parseYaml(server.kubeconfig) as any;
  const ca = Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString('utf8');
  const token = kc.users[0].user.token as string;
  const cp = {
    url: server.url,
    clientConfig: { server: server.url, token, caData: ca },
  } as unknown as ControlPlane;
  return { http: httpClient(cp), ca, token, server: kc.clusters[0].cluster.server as string };
}

const CM = '/api/v1/namespaces/default/configmaps';
const servers: Server[] = [];
const dirs: string[] = [];

beforeAll(() => {
  ensureBuilt();
}, 120_000);

afterAll(async () => {
  for (const s of servers) {
    if (s.proc.exitCode === null && s.proc.signalCode === null) {
      s.proc.kill('SIGKILL');
      await s.exited;
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kubeloop-durability-'));
  dirs.push(d);
  return d;
}

describe('kubeloop server on a data directory', () => {
  it('keeps every acknowledged write through kill -9, and carries on after a restart', async () => {
    const dir = tempDir();
    const kubeconfigPath = join(dir, 'kubeconfig');
    const first = await startServer(join(dir, 'data'), kubeconfigPath);
    servers.push(first);
    const c1 = clientOf(first);

    // Concurrent writers, each creating and then updating its own objects, recording what the
    // server acknowledged and what was in flight when the process died.
    const acked = new Map<string, { data: Record<string, string>; rv: number }>();
    const inFlight = new Map<string, Record<string, string>>();
    let maxRv = 0;
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const name = `w${w}-${Math.floor(i / 2)}`;
        const data = { writer: String(w), step: String(i), payload: 'x'.repeat(200 + ((w * 37 + i) % 500)) };
        inFlight.set(name, data);
        try {
          const r =
            i % 2 === 0
              ? await c1.http.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data })
              : await c1.http.patch(`${CM}/${name}`, { data }, 'application/merge-patch+json');
          if (r.status >= 200 && r.status < 300) {
            const rv = Number(r.json.metadata.resourceVersion);
            acked.set(name, { data, rv });
            maxRv = Math.max(maxRv, rv);
            inFlight.delete(name);
          } else if (r.status >= 500) return;
          else throw new Error(`unexpected answer ${r.status}: ${r.text}`);
        } catch (err) {
          if ((err as Error).message.startsWith('unexpected answer')) throw err;
          return; // the connection died with the server
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    await eventually(() => acked.size >= 150, 30_000, '150 acknowledged writes');
    first.proc.kill('SIGKILL');
    const killed = await first.exited;
    expect(killed.signal).toBe('SIGKILL');
    stop = true;
    await Promise.all(writers);
    c1.http.close();

    const second = await startServer(join(dir, 'data'), kubeconfigPath);
    servers.push(second);
    const c2 = clientOf(second);
    try {
      // Same CA and token: the old client configuration works against the new process.
      expect(c2.ca).toBe(c1.ca);
      expect(c2.token).toBe(c1.token);
      const old = clientOf({ url: second.url, kubeconfig: first.kubeconfig });
      expect((await old.http.get('/api/v1/namespaces/default')).status).toBe(200);
      old.http.close();

      // Every acknowledged write is there with its content (or the write that was in flight).
      const list = await c2.http.get(CM);
      expect(list.status).toBe(200);
      const stored = new Map<string, any>(list.json.items.map((i: any) => [i.metadata.name, i]));
      const missing: string[] = [];
      for (const [name, { data, rv }] of acked) {
        const o = stored.get(name);
        if (!o) {
          missing.push(`${name}: gone`);
          continue;
        }
        const pending = inFlight.get(name);
        const matches = JSON.stringify(o.data) === JSON.stringify(data);
        const matchesPending = pending !== undefined && JSON.stringify(o.data) === JSON.stringify(pending);
        if (!matches && !matchesPending)
          missing.push(`${name}: has step ${o.data?.step}, acknowledged ${data.step}`);
        if (matches && Number(o.metadata.resourceVersion) !== rv)
          missing.push(`${name}: resourceVersion ${o.metadata.resourceVersion}, acknowledged ${rv}`);
      }
      expect(missing).toEqual([]);
      const listRv = Number(list.json.metadata.resourceVersion);
      expect(listRv).toBeGreaterThanOrEqual(maxRv);

      // A watch from the restarted server's list resourceVersion sees what happens next, and
      // new writes get larger resourceVersions than anything acknowledged before the crash.
      const w = c2.http.watch(`${CM}?watch=true&resourceVersion=${listRv}`);
      try {
        const created = await c2.http.post(CM, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'after-restart' },
          data: { ok: 'yes' },
        });
        expect(created.status).toBe(201);
        expect(Number(created.json.metadata.resourceVersion)).toBeGreaterThan(listRv);
        const anyAcked = [...acked.keys()][0]!;
        const updated = await c2.http.patch(
          `${CM}/${anyAcked}`,
          { data: { after: 'restart' } },
          'application/merge-patch+json',
        );
        expect(updated.status).toBe(200);
        await eventually(() => w.events.length >= 2, 10_000, 'two watch events');
        expect(w.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
          ['ADDED', 'after-restart'],
          ['MODIFIED', anyAcked],
        ]);
        expect(w.events[0].object.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion);
      } finally {
        w.close();
      }
      // A watch from before the restart resumes: the history survived the crash.
      const resumed = c2.http.watch(`${CM}?watch=true&resourceVersion=${Math.max(1, maxRv - 5)}`);
      try {
        await eventually(() => resumed.events.length >= 1, 10_000, 'a resumed watch event');
        expect(resumed.events[0].type).not.toBe('ERROR');
        expect(Number(resumed.events[0].object.metadata.resourceVersion)).toBeGreaterThan(maxRv - 5);
      } finally {
        resumed.close();
      }
    } finally {
      c2.http.close();
    }

    // SIGTERM stops the server cleanly and quietly.
    second.proc.kill('SIGTERM');
    const stopped = await second.exited;
    expect(stopped.code).toBe(0);
    expect(second.stderr()).toBe('');
    expect(second.stdout()).not.toMatch(/error|exception|warn/i);
  });

  it('refuses a second server on the same data directory', async () => {
    const dir = tempDir();
    const first = await startServer(join(dir, 'data'), join(dir, 'kubeconfig'));
    servers.push(first);
    const second = spawn(
      process.execPath,
      [
        BIN,
        'server',
        '--port',
        '0',
        '--data-dir',
        join(dir, 'data'),
        '--kubeconfig',
        join(dir, 'kubeconfig2'),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    second.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    second.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number | null>((done) => second.on('exit', (c) => done(c)));
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(err).toMatch(/data directory .* is in use by another kubeloop server \(pid \d+\)/);
    expect(out).not.toMatch(/ready/);
    // The first server is unharmed.
    const c = clientOf(first);
    try {
      expect((await c.http.get('/readyz')).status).toBe(200);
      expect((await c.http.get(CM)).status).toBe(200);
    } finally {
      c.http.close();
    }
    first.proc.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
  });
});

describe('watch history across kill -9', () => {
  const cm = (name: string, v: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { test: 'history' } },
    data: { v },
  });
  /** Only this test's objects (the namespace controller adds its own ConfigMap, whenever it likes). */
  const SEL = 'labelSelector=test%3Dhistory';

  it('resumes a watch, an exact list and a continue token from before the crash; 410 once compacted past them', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const kubeconfigPath = join(dir, 'kubeconfig');
    // No compaction while the test runs: it compacts the data directory itself, between restarts.
    const args = ['--no-controllers', '--compaction-interval', '0'];
    const first = await startServer(dataDir, kubeconfigPath, args);
    servers.push(first);
    const c1 = clientOf(first);

    for (let i = 0; i < 5; i++) expect((await c1.http.post(CM, cm(`c${i}`, '0'))).status).toBe(201);
    const page1 = await c1.http.get(`${CM}?${SEL}&limit=2`);
    expect(page1.json.items.map((i: any) => i.metadata.name)).toEqual(['c0', 'c1']);
    const noted = Number(page1.json.metadata.resourceVersion);

    // What a watch from `noted` must see: [type, name, data.v, resourceVersion of the write].
    const expected: Array<[string, string, string, number | undefined]> = [];
    const ok = (r: { status: number; text: string }) => {
      if (r.status >= 300) throw new Error(`write failed ${r.status}: ${r.text}`);
      return r as any;
    };
    const patch = async (name: string, v: string) => {
      const r = ok(await c1.http.patch(`${CM}/${name}`, { data: { v } }, 'application/merge-patch+json'));
      expected.push(['MODIFIED', name, v, Number(r.json.metadata.resourceVersion)]);
    };
    const create = async (name: string) => {
      const r = ok(await c1.http.post(CM, cm(name, '0')));
      expected.push(['ADDED', name, '0', Number(r.json.metadata.resourceVersion)]);
    };
    const remove = async (name: string, lastV: string) => {
      ok(await c1.http.delete(`${CM}/${name}`));
      expected.push(['DELETED', name, lastV, undefined]);
    };
    await patch('c0', '1');
    await remove('c1', '0');
    await patch('c2', '1');
    // Elsewhere: not part of the watched collection.
    ok(await c1.http.post('/api/v1/namespaces/kube-system/configmaps', cm('elsewhere', '0')));
    for (let i = 5; i < 10; i++) await create(`c${i}`);
    for (const v of ['1', '2', '3']) await patch('c5', v);
    await remove('c9', '0');
    await remove('c5', '3');
    c1.http.close();
    first.proc.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startServer(dataDir, kubeconfigPath, args);
    servers.push(second);
    const c2 = clientOf(second);
    let seenRvs: number[] = [];
    try {
      const w = c2.http.watch(`${CM}?${SEL}&watch=true&resourceVersion=${noted}`);
      try {
        await eventually(
          () => w.events.length >= expected.length,
          10_000,
          'the events since the noted revision',
        );
        const after = ok(await c2.http.post(CM, cm('after-restart', '0')));
        expected.push(['ADDED', 'after-restart', '0', Number(after.json.metadata.resourceVersion)]);
        await eventually(() => w.events.length >= expected.length, 10_000, 'the event after the restart');
        // Every change once, in order, then the live one: nothing repeated, nothing missing.
        expect(w.events.map((e) => [e.type, e.object.metadata.name, e.object.data?.v])).toEqual(
          expected.map(([type, name, v]) => [type, name, v]),
        );
        const rvs = w.events.map((e) => Number(e.object.metadata.resourceVersion));
        for (let i = 0; i < rvs.length; i++) {
          expect(rvs[i]).toBeGreaterThan(i === 0 ? noted : rvs[i - 1]!);
          if (expected[i]![3] !== undefined) expect(rvs[i]).toBe(expected[i]![3]);
        }
        seenRvs = rvs;
      } finally {
        w.close();
      }

      // The state at the noted revision, read back after the crash.
      const exact = await c2.http.get(`${CM}?${SEL}&resourceVersion=${noted}&resourceVersionMatch=Exact`);
      expect(exact.status).toBe(200);
      expect(exact.json.metadata.resourceVersion).toBe(String(noted));
      expect(exact.json.items.map((i: any) => [i.metadata.name, i.data.v])).toEqual(
        ['c0', 'c1', 'c2', 'c3', 'c4'].map((n) => [n, '0']),
      );
      const page2 = await c2.http.get(
        `${CM}?${SEL}&limit=2&continue=${encodeURIComponent(page1.json.metadata.continue)}`,
      );
      expect(page2.status).toBe(200);
      expect(page2.json.items.map((i: any) => [i.metadata.name, i.data.v])).toEqual([
        ['c2', '0'],
        ['c3', '0'],
      ]);
    } finally {
      c2.http.close();
    }
    second.proc.kill('SIGKILL');
    await second.exited;

    // Compact the data directory past the noted revision, as the server's compactor would.
    const compactTo = noted + 3;
    const store = Store.open({ journal: openSqliteJournal(dataDir) });
    await store.compact(compactTo);
    await store.close();

    const third = await startServer(dataDir, kubeconfigPath, args);
    servers.push(third);
    const c3 = clientOf(third);
    try {
      const tooOld = c3.http.watch(`${CM}?${SEL}&watch=true&resourceVersion=${noted}`);
      await eventually(() => tooOld.ended, 10_000, 'the too-old watch to end');
      expect(tooOld.events).toHaveLength(1);
      expect(tooOld.events[0].type).toBe('ERROR');
      expect(tooOld.events[0].object).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        code: 410,
        reason: 'Expired',
        message: `too old resource version: ${noted} (${compactTo + 1})`,
      });
      const exact = await c3.http.get(`${CM}?${SEL}&resourceVersion=${noted}&resourceVersionMatch=Exact`);
      expect([exact.status, exact.json.reason]).toEqual([410, 'Expired']);
      const expired = await c3.http.get(
        `${CM}?${SEL}&limit=2&continue=${encodeURIComponent(page1.json.metadata.continue)}`,
      );
      expect([expired.status, expired.json.reason]).toEqual([410, 'Expired']);

      // From the compacted revision on, the history is still whole.
      const w = c3.http.watch(`${CM}?${SEL}&watch=true&resourceVersion=${compactTo}`);
      try {
        const later = seenRvs.filter((rv) => rv > compactTo);
        await eventually(() => w.events.length >= later.length, 10_000, 'the events after the compaction');
        expect(Number(w.events[0].object.metadata.resourceVersion)).toBeGreaterThan(compactTo);
        expect(w.events.map((e) => Number(e.object.metadata.resourceVersion))).toEqual(later);
      } finally {
        w.close();
      }
    } finally {
      c3.http.close();
    }
    third.proc.kill('SIGTERM');
    expect((await third.exited).code).toBe(0);
  });
});
