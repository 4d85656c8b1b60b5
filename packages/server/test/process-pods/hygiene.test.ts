import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../kubectl.js';
import { writeTestImage } from './app.js';

/**
 * The control plane runs in a process of its own (from the build, as `kubeloop server` runs it),
 * with two process-backed pods whose containers also start a child each; the test ends the
 * control plane in each way it can end and looks for what is left.
 */
const DIST = resolve(__dirname, '../../dist/index.js');

const SCRIPT = (imageDir: string, marks: string) => `
import { startControlPlane } from ${JSON.stringify(DIST)};
const cp = await startControlPlane({
  port: 0, host: '127.0.0.1', log: () => undefined,
  nodes: { count: 1, processes: { images: { 'example.com/h:1': { dir: ${JSON.stringify(imageDir)}, entrypoint: ['node', 'server.js', 'with-child'] } } } },
});
for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => cp.stop().then(() => process.exit(0)));
const headers = { authorization: 'Bearer ' + cp.clientConfig.token, 'content-type': 'application/json' };
for (const name of ['a', 'b']) {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: 'kubeloop-node-1',
    containers: [{ name: 'app', image: 'example.com/h:1', env: [{ name: 'PID_FILE', value: ${JSON.stringify(marks)} + '/' + name }] }] } };
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  const res = await fetch(cp.url + '/api/v1/namespaces/default/pods', { method: 'POST', headers, body: JSON.stringify(pod) });
  if (!res.ok) throw new Error(await res.text());
}
console.log('started');
`;

let imageDir: string;
let marks: string;
let plane: ChildProcess | undefined;
beforeEach(() => {
  imageDir = writeTestImage();
  marks = mkdtempSync(join(tmpdir(), 'kubeloop-hygiene-'));
});
afterEach(() => {
  plane?.kill('SIGKILL');
  rmSync(imageDir, { recursive: true, force: true });
  rmSync(marks, { recursive: true, force: true });
});

/** Starts the control plane; resolves to the pids of every container process and their children. */
async function start(): Promise<number[]> {
  const script = join(marks, 'plane.mjs');
  writeFileSync(script, SCRIPT(imageDir, marks));
  plane = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  plane.stdout?.on('data', (d) => (out += d));
  await eventually(() => out.includes('started'), 20_000, 'control plane started');
  // Each pod's main process and the child it started wrote their pids.
  const pids = await eventually(
    () => {
      const files = readdirSync(marks).filter((f) => /^[ab]\.\d+$/.test(f));
      return files.length === 4 ? files.map((f) => Number(f.split('.')[1])) : undefined;
    },
    20_000,
    'the containers and their children running',
  );
  for (const pid of pids) expect(existsSync(`/proc/${pid}`)).toBe(true);
  return pids;
}

/** The pods' state directory: the parent of a container root's pod directory (`$KUBELOOP_ROOT` of its environment). */
function stateDir(pids: number[]): string {
  for (const pid of pids) {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const root = env.find((e) => e.startsWith('KUBELOOP_ROOT='))?.slice('KUBELOOP_ROOT='.length);
    if (root) return dirname(dirname(root));
  }
  throw new Error('no container environment names KUBELOOP_ROOT');
}

const alive = (pids: number[]) => pids.filter((pid) => existsSync(`/proc/${pid}`) && !isZombie(pid));
function isZombie(pid: number): boolean {
  try {
    return /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

describe('process hygiene of process-backed pods', () => {
  it('a stopped control plane (SIGTERM) leaves no process behind', async () => {
    const pids = await start();
    const state = stateDir(pids);
    plane?.kill('SIGTERM');
    await new Promise((r) => plane?.once('exit', r));
    await eventually(() => alive(pids).length === 0, 5000, 'no container process left');
    expect(existsSync(state)).toBe(false);
  });

  it('a control plane killed with SIGKILL (kill -9) leaves no process behind for more than a few seconds', async () => {
    const pids = await start();
    const state = stateDir(pids);
    expect(existsSync(state)).toBe(true);
    plane?.kill('SIGKILL');
    await new Promise((r) => plane?.once('exit', r));
    await eventually(() => alive(pids).length === 0, 5000, 'no container process left');
    // Nor the pods' files.
    await eventually(() => !existsSync(state), 5000, 'the state directory removed');
  });
});
