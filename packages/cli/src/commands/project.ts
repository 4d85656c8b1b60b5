/**
 * What `kubeloop dev` and `kubeloop run` do with an operator project (the layout `kubeloop
 * init` scaffolds): build it, install its CRDs, run its `dist/main.js`, apply its samples, and
 * make its JSON logs readable.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Client, CustomResourceDefinition, type KubeObject } from 'kubeloop/client';
import { parseCustomResourceDefinitions } from 'kubeloop/manifests';
import { parseAllDocuments } from 'yaml';

/** The field manager of everything the CLI applies. */
export const FIELD_MANAGER = 'kubeloop';

/** Compiles the project with its own TypeScript (`tsc -b <dir>`); rejects with the compiler's output. */
export function buildProject(dir: string): Promise<void> {
  let tsc: string;
  try {
    tsc = createRequire(join(dir, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return Promise.reject(
      new Error(`TypeScript is not installed for ${dir} (npm install --save-dev typescript)`),
    );
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, '-b', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`the build failed (tsc -b ${dir}):\n${output.trimEnd()}`)),
    );
  });
}

/**
 * Builds the project as its image is built (`kubeloop build`, the Dockerfile): its `build` script
 * (`npm run build`) when it has one, which may do more than compile (the sample operator bundles
 * what its image starts), else `tsc -b`. Rejects with the build's output.
 */
export async function buildProjectImage(dir: string): Promise<void> {
  const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  if (!pkg.scripts?.build) return buildProject(dir);
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const add = (d: Buffer) => {
      output += d.toString();
    };
    child.stdout.on('data', add);
    child.stderr.on('data', add);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`the build failed (npm run build in ${dir}):\n${output.trimEnd()}`)),
    );
  });
}

/** Every YAML file directly under `folder`, sorted, except kustomize's own. */
async function yamlFiles(folder: string): Promise<string[]> {
  if (!existsSync(folder)) return [];
  const names = (await readdir(folder)).filter(
    (n) => /\.ya?ml$/.test(n) && !/^kustomization\.ya?ml$/.test(n),
  );
  return names.sort().map((n) => join(folder, n));
}

/** The CRDs of the project: every one in `config/crd` (kubebuilder's `bases/` included). */
export async function readProjectCrds(dir: string): Promise<CustomResourceDefinition[]> {
  const files = [
    ...(await yamlFiles(join(dir, 'config/crd'))),
    ...(await yamlFiles(join(dir, 'config/crd/bases'))),
  ];
  const crds: CustomResourceDefinition[] = [];
  for (const f of files) {
    for (const crd of parseCustomResourceDefinitions(await readFile(f, 'utf8'))) {
      crds.push({
        ...crd,
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
      } as CustomResourceDefinition);
    }
  }
  return crds;
}

/** Applies the CRDs (server-side) and waits until the API serves each of them. */
export async function installCrds(
  client: Client,
  crds: readonly CustomResourceDefinition[],
  timeoutMs = 60_000,
): Promise<void> {
  for (const crd of crds) {
    const object: CustomResourceDefinition = {
      ...crd,
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
    };
    await client.apply(object, { fieldManager: FIELD_MANAGER, force: true });
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    for (;;) {
      const live = await client.get(CustomResourceDefinition, name);
      if (live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CustomResourceDefinition ${name} was not established`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The objects of the YAML files in `config/samples`. */
export async function readSamples(dir: string): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const f of await yamlFiles(join(dir, 'config/samples'))) {
    for (const doc of parseAllDocuments(await readFile(f, 'utf8'))) {
      const value: unknown = doc.toJS();
      if (value && typeof value === 'object' && 'kind' in value) objects.push(value as KubeObject);
    }
  }
  return objects;
}

/** Applies objects server-side, each in the client's namespace unless it names one. */
export async function applyObjects(client: Client, objects: readonly KubeObject[]): Promise<KubeObject[]> {
  const applied: KubeObject[] = [];
  for (const obj of objects)
    applied.push(await client.apply(obj, { fieldManager: FIELD_MANAGER, force: true }));
  return applied;
}

/** A running operator process. */
export interface OperatorProcess {
  readonly child: ChildProcess;
  /** Settles with the exit code (or the signal's name) when the process has exited. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL past `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Runs `<dir>/dist/main.js` against `kubeconfig`, each line of its output to `onLine`. */
export function startOperator(
  dir: string,
  options: {
    kubeconfig?: string;
    args?: readonly string[];
    /** Variables added to (or overriding) this process's environment. */
    env?: Readonly<Record<string, string>>;
    onLine: (line: string, stream: 'stdout' | 'stderr') => void;
  },
): OperatorProcess {
  const env = {
    // glibc's arenas as the operator's image sets them (kubeloop/manifests' Dockerfile).
    MALLOC_ARENA_MAX: '2',
    ...process.env,
    ...options.env,
    ...(options.kubeconfig && { KUBECONFIG: options.kubeconfig }),
  };
  const child = spawn(process.execPath, [join(dir, 'dist/main.js'), ...(options.args ?? [])], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = (stream: 'stdout' | 'stderr') => {
    let rest = '';
    return (d: Buffer) => {
      rest += d.toString();
      const parts = rest.split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) if (p.trim() !== '') options.onLine(p, stream);
    };
  };
  child.stdout?.on('data', lines('stdout'));
  child.stderr?.on('data', lines('stderr'));
  const exited = new Promise<number | string>((resolve) => {
    // 'close', not 'exit': 'exit' can come before the pipes gave their last bytes, and the
    // operator's shutdown lines would be lost when its caller stops right after.
    child.on('close', (code, signal) => resolve(code ?? signal ?? 0));
    child.on('error', () => resolve(1));
  });
  return {
    child,
    exited,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
/** pino's bookkeeping, not worth a reader's attention. */
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'reconcileID', 'v']);

/**
 * One pino JSON line as `12:00:01 INFO  Foo default/example-foo: created Deployment deployment=…`;
 * anything that is not JSON is returned as it is.
 */
export function formatLogLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return line;
    entry = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 19) : '';
  const level = (LEVELS[Number(entry.level)] ?? String(entry.level ?? '')).padEnd(5);
  const ns = typeof entry.namespace === 'string' && entry.namespace !== '' ? `${entry.namespace}/` : '';
  const subject =
    typeof entry.name === 'string'
      ? `${typeof entry.kind === 'string' ? `${entry.kind} ` : ''}${ns}${entry.name}: `
      : '';
  const skip = new Set([...HIDDEN, ...(subject ? ['name', 'namespace', 'kind', 'controller'] : [])]);
  const fields = Object.entries(entry)
    .filter(([k]) => !skip.has(k))
    .map(([k, v]) => {
      if (k === 'err' && v && typeof v === 'object' && 'message' in v) return `err=${String(v.message)}`;
      return `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`;
    });
  return `${time} ${level} ${subject}${String(entry.msg ?? '')}${fields.length ? `  ${fields.join(' ')}` : ''}`;
}
