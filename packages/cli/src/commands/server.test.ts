import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

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
    expect(await status(undefined)).toBe(401);
    expect(await status('Bearer wrong')).toBe(401);

    const exited = exitCode(child);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
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

  it('rejects a bad --port with a clear message and a non-zero exit', async () => {
    const { child, output } = startServer(['--port', 'abc']);
    const code = await exitCode(child);
    expect(code).not.toBe(0);
    expect(output()).toContain('--port must be an integer');
  });
});
