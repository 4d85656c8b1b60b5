/**
 * The container runtime of the simulated kubelet: for each container of a pod on a simulated
 * node, its instances (one per start; a restarted container keeps its previous one for
 * `logs --previous`), the output each instance wrote (what `kubectl logs` and `attach` read), and
 * its in-memory filesystem (what `kubectl exec` and `cp` work on).
 *
 * No process runs: the kubelet tells the runtime how the containers' states change
 * ({@link SimulatedRuntime.observe}), and the runtime writes the log lines such a change would
 * leave; execs run the simulated programs of `shell.ts`. Nothing ever runs on the host.
 */
import { randomBytes } from 'node:crypto';
import { parseQuantity as parseQuantityExact } from 'kubeloop/api';
import { SIMULATE_ANNOTATION } from '../simulate.js';
import type { ExecOutcome, ProcessIO } from './shell.js';
import type { Terminal } from './tty.js';
import { ContainerFs, ContainerLayer, type Mount } from './vfs.js';

// The simulated shell and its programs run only for `kubectl exec` (and `cp`): loaded by the
// first exec, not by every server that starts its kubelet.
let shellModule: Promise<typeof import('./shell.js')> | undefined;

// biome-ignore lint/suspicious/noExplicitAny: pods, ConfigMaps and Secrets are read loosely, as the JSON they are
type Obj = Record<string, any>;

/** One line a container wrote, as the runtime's log file keeps it. */
export interface LogLine {
  time: Date;
  stream: 'stdout' | 'stderr';
  /** The line, with its newline. */
  text: string;
}

/** The lines kept per container instance (the oldest go first), as a log rotation would. */
const MAX_LINES = 10_000;

/** One run of a container: its output, and whether it has ended. */
export class ContainerInstance {
  readonly lines: LogLine[] = [];
  readonly id = randomBytes(32).toString('hex');
  readonly startedAt = new Date();
  finished = false;
  readyLogged = false;
  /** An ephemeral container's command ran (with the first attach: kubectl debug's session). */
  commandRan = false;
  /** Where `attach -i` input goes: the standard input of a process-backed container's run (`stdin: true`). */
  input: ((chunk: Buffer) => void) | undefined;
  /** The attached client closed its input: with `stdinOnce`, the process's standard input ends too. */
  closeInput: (() => void) | undefined;
  private readonly listeners = new Set<(line: LogLine | undefined) => void>();

  /** Appends output (split into lines) and hands it to the followers. */
  write(stream: 'stdout' | 'stderr', data: string): void {
    if (this.finished) return;
    const parts = data.split(/(?<=\n)/);
    for (const part of parts) {
      if (part === '') continue;
      const line: LogLine = { time: new Date(), stream, text: part.endsWith('\n') ? part : `${part}\n` };
      this.lines.push(line);
      for (const l of this.listeners) l(line);
    }
    if (this.lines.length > MAX_LINES) this.lines.splice(0, this.lines.length - MAX_LINES);
  }

  /** The instance stopped: followers get `undefined` and are dropped. */
  end(): void {
    if (this.finished) return;
    this.finished = true;
    for (const l of this.listeners) l(undefined);
    this.listeners.clear();
  }

  /** Calls `fn` with each new line, then once with undefined when the instance ends. */
  follow(fn: (line: LogLine | undefined) => void): () => void {
    if (this.finished) {
      fn(undefined);
      return () => undefined;
    }
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

/** A container of a pod: its instances, newest last, and its filesystem. */
export class SimulatedContainer {
  readonly instances: ContainerInstance[] = [];
  readonly layer: ContainerLayer;
  constructor(hostname: string, podIp: string | undefined) {
    this.layer = new ContainerLayer({
      '/etc/hostname': `${hostname}\n`,
      '/etc/hosts': `127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n${podIp ? `${podIp}\t${hostname}\n` : ''}`,
      '/etc/resolv.conf':
        'search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n',
      '/etc/passwd': 'root:x:0:0:root:/root:/bin/sh\n',
    });
  }
  get current(): ContainerInstance | undefined {
    return this.instances[this.instances.length - 1];
  }
}

/** A container status as the kubelet writes it (the fields the runtime reads). */
export interface ObservedContainerStatus {
  name: string;
  ready?: boolean;
  restartCount?: number;
  state?: { running?: Obj; waiting?: Obj; terminated?: { exitCode?: number } };
}

/** How the runtime reads the objects a container uses (ConfigMaps, Secrets, the `kubernetes` Service). */
export interface ObjectReader {
  get(resource: 'configmaps' | 'secrets' | 'services', namespace: string, name: string): Obj | undefined;
}

/** What an exec is given: its command, and where its streams go. */
export interface ExecRequest {
  command: string[];
  io: ProcessIO;
  signal: AbortSignal;
  /** A terminal was asked for (`tty=true`). */
  tty?: boolean;
  /** The terminal's size and resizes (the resize channel), for commands given a real terminal. */
  terminal?: Terminal;
}

/** A pod's regular and ephemeral containers (kubectl debug's run beside the others). */
const containerSpecs = (pod: Obj): Obj[] => [
  ...(pod.spec?.containers ?? []),
  ...(pod.spec?.ephemeralContainers ?? []),
];

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The simulated containers of every pod on the simulated nodes.
 *
 * @example
 * ```ts
 * const runtime = new SimulatedRuntime(objects);
 * runtime.observe(pod, pod.status.containerStatuses); // the kubelet, as states change
 * await runtime.exec(pod, 'app', { command: ['echo', 'hi'], io, signal });
 * ```
 */
export class SimulatedRuntime {
  /** By pod UID, then container name. */
  private readonly pods = new Map<string, Map<string, SimulatedContainer>>();
  /** The process-backed pods, whose execs run on this machine (./process-pods.ts). */
  backing:
    | { exec(pod: Obj, container: string, req: ExecRequest): Promise<ExecOutcome> | undefined }
    | undefined;

  constructor(private readonly objects: ObjectReader) {}

  /** The container of a pod, made on first use. */
  container(pod: Obj, name: string): SimulatedContainer {
    const uid = pod.metadata?.uid ?? '';
    let containers = this.pods.get(uid);
    if (!containers) {
      containers = new Map();
      this.pods.set(uid, containers);
    }
    let c = containers.get(name);
    if (!c) {
      c = new SimulatedContainer(hostnameOf(pod), pod.status?.podIP);
      containers.set(name, c);
    }
    return c;
  }

  /** The container if it ever started. */
  find(uid: string, name: string): SimulatedContainer | undefined {
    return this.pods.get(uid)?.get(name);
  }

  /**
   * The kubelet reports the statuses it writes for a pod: containers start, become ready, exit or
   * crash, and their instances and log lines follow. Idempotent: a status seen twice changes nothing.
   */
  observe(pod: Obj, statuses: readonly ObservedContainerStatus[]): void {
    const mode = pod.metadata?.annotations?.[SIMULATE_ANNOTATION] as string | undefined;
    const specs = new Map<string, Obj>(containerSpecs(pod).map((c: Obj) => [c.name, c]));
    for (const s of statuses) {
      const spec = specs.get(s.name) ?? {};
      const state = s.state ?? {};
      const crashing = mode === 'crashloop';
      if (!state.running && !state.terminated && !crashing) continue;
      const c = this.container(pod, s.name);
      const want = (s.restartCount ?? 0) + 1;
      while (c.instances.length < want) {
        const prev = c.current;
        if (prev && !prev.finished) this.crash(prev, s.name, c.instances.length);
        const inst = new ContainerInstance();
        c.instances.push(inst);
        const command = [...(spec.command ?? []), ...(spec.args ?? [])];
        inst.write(
          'stdout',
          `kubeloop: started container "${s.name}" (image "${spec.image ?? ''}"${command.length > 0 ? `, command ${JSON.stringify(command)}` : ''})\n`,
        );
        if (mode === 'never-ready')
          inst.write(
            'stderr',
            `kubeloop: container "${s.name}" is running and will never be ready (${SIMULATE_ANNOTATION}: never-ready)\n`,
          );
        if (crashing) this.crash(inst, s.name, c.instances.length);
      }
      const inst = c.current!;
      if (state.running && s.ready && !inst.readyLogged) {
        inst.readyLogged = true;
        inst.write('stdout', `kubeloop: container "${s.name}" is ready\n`);
      }
      if (state.terminated && !inst.finished) {
        const code = state.terminated.exitCode ?? 0;
        inst.write(
          code === 0 ? 'stdout' : 'stderr',
          code === 0
            ? `kubeloop: container "${s.name}" completed with exit code 0${mode ? ` (${SIMULATE_ANNOTATION}: ${mode})` : ''}\n`
            : `kubeloop: container "${s.name}" failed with exit code ${code}${mode ? ` (${SIMULATE_ANNOTATION}: ${mode})` : ''}\n`,
        );
        inst.end();
      }
    }
  }

  private crash(inst: ContainerInstance, name: string, run: number): void {
    inst.write(
      'stderr',
      `kubeloop: container "${name}" crashed with exit code 1 (${SIMULATE_ANNOTATION}: crashloop, run ${run})\n`,
    );
    inst.end();
  }

  /** The pod is going away: its containers stop (their followers see the end). */
  stop(uid: string): void {
    for (const c of this.pods.get(uid)?.values() ?? []) c.current?.end();
  }

  /** The pod is gone. */
  forget(uid: string): void {
    this.stop(uid);
    this.pods.delete(uid);
  }

  /**
   * Runs a command in a running container, over its filesystem with its ConfigMap and Secret
   * volumes mounted as they are now, and its environment.
   */
  async exec(pod: Obj, containerName: string, req: ExecRequest): Promise<ExecOutcome> {
    const real = this.backing?.exec(pod, containerName, req);
    if (real) return real;
    const spec = containerSpecs(pod).find((c: Obj) => c.name === containerName) ?? { name: containerName };
    const c = this.container(pod, containerName);
    const fs = new ContainerFs(c.layer, this.mounts(pod, spec));
    for (const m of spec.volumeMounts ?? []) {
      // Writable volumes (emptyDir, hostPath: never the host's) are directories of the layer.
      if (!fs.stat(m.mountPath)) fs.mkdir(m.mountPath, { parents: true });
    }
    const ctx = {
      fs,
      env: this.environment(pod, spec),
      hostname: hostnameOf(pod),
      cwd: spec.workingDir ?? '/',
      containerOutput: (stream: 'stdout' | 'stderr', data: Buffer) =>
        c.current?.write(stream, data.toString('utf8')),
      signal: req.signal,
      tty: req.tty === true,
    };
    if (!fs.stat(ctx.cwd)) fs.mkdir(ctx.cwd, { parents: true });
    shellModule ??= import('./shell.js');
    const { execProgram } = await shellModule;
    return execProgram(req.command, ctx, req.io);
  }

  /** The environment of a container: its `env` and `envFrom` resolved, as the kubelet builds it. */
  environment(pod: Obj, spec: Obj): Map<string, string> {
    const ns = pod.metadata?.namespace ?? 'default';
    const env = new Map<string, string>([
      ['PATH', DEFAULT_PATH],
      ['HOSTNAME', hostnameOf(pod)],
    ]);
    for (const from of spec.envFrom ?? []) {
      const prefix = from.prefix ?? '';
      if (from.configMapRef) {
        const cm = this.objects.get('configmaps', ns, from.configMapRef.name);
        for (const [k, v] of Object.entries(cm?.data ?? {})) env.set(prefix + k, String(v));
      }
      if (from.secretRef) {
        const s = this.objects.get('secrets', ns, from.secretRef.name);
        for (const [k, v] of Object.entries(s?.data ?? {}))
          env.set(prefix + k, Buffer.from(String(v), 'base64').toString('utf8'));
      }
    }
    for (const e of spec.env ?? []) {
      let value: string | undefined;
      if (e.valueFrom) value = this.valueFrom(pod, e.valueFrom);
      else value = expandRefs(e.value ?? '', env);
      if (value !== undefined) env.set(e.name, value);
    }
    {
      // The master service's variables are there whatever enableServiceLinks says.
      const kube = this.objects.get('services', 'default', 'kubernetes');
      const ip = kube?.spec?.clusterIP ?? '10.96.0.1';
      const port = String(kube?.spec?.ports?.[0]?.port ?? 443);
      const add = (k: string, v: string) => {
        if (!env.has(k)) env.set(k, v);
      };
      add('KUBERNETES_SERVICE_HOST', ip);
      add('KUBERNETES_SERVICE_PORT', port);
      add('KUBERNETES_SERVICE_PORT_HTTPS', port);
      add('KUBERNETES_PORT', `tcp://${ip}:${port}`);
      add(`KUBERNETES_PORT_${port}_TCP`, `tcp://${ip}:${port}`);
      add(`KUBERNETES_PORT_${port}_TCP_PROTO`, 'tcp');
      add(`KUBERNETES_PORT_${port}_TCP_PORT`, port);
      add(`KUBERNETES_PORT_${port}_TCP_ADDR`, ip);
    }
    if (!env.has('HOME')) env.set('HOME', '/root');
    return env;
  }

  private valueFrom(pod: Obj, from: Obj): string | undefined {
    const ns = pod.metadata?.namespace ?? 'default';
    if (from.configMapKeyRef) {
      const v = this.objects.get('configmaps', ns, from.configMapKeyRef.name)?.data?.[
        from.configMapKeyRef.key
      ];
      return v === undefined ? undefined : String(v);
    }
    if (from.secretKeyRef) {
      const v = this.objects.get('secrets', ns, from.secretKeyRef.name)?.data?.[from.secretKeyRef.key];
      return v === undefined ? undefined : Buffer.from(String(v), 'base64').toString('utf8');
    }
    if (from.fieldRef) return fieldValue(pod, from.fieldRef.fieldPath ?? '');
    if (from.resourceFieldRef) return resourceValue(pod, from.resourceFieldRef);
    return undefined;
  }

  /** The read-only volumes of a container (ConfigMap, Secret, projected, downward API), from the objects as they are now. */
  mounts(pod: Obj, spec: Obj): Mount[] {
    const ns = pod.metadata?.namespace ?? 'default';
    const volumes = new Map<string, Obj>((pod.spec?.volumes ?? []).map((v: Obj) => [v.name, v]));
    const out: Mount[] = [];
    for (const m of spec.volumeMounts ?? []) {
      const v = volumes.get(m.name);
      if (!v) continue;
      let files: Map<string, Buffer> | undefined;
      let mode: number | undefined;
      if (v.configMap) {
        files = this.keyFiles(this.objects.get('configmaps', ns, v.configMap.name), v.configMap.items, false);
        mode = v.configMap.defaultMode;
      } else if (v.secret) {
        files = this.keyFiles(this.objects.get('secrets', ns, v.secret.secretName), v.secret.items, true);
        mode = v.secret.defaultMode;
      } else if (v.projected) {
        files = new Map();
        mode = v.projected.defaultMode;
        for (const src of v.projected.sources ?? []) {
          let part: Map<string, Buffer> | undefined;
          if (src.configMap)
            part = this.keyFiles(
              this.objects.get('configmaps', ns, src.configMap.name),
              src.configMap.items,
              false,
            );
          if (src.secret)
            part = this.keyFiles(this.objects.get('secrets', ns, src.secret.name), src.secret.items, true);
          if (src.downwardAPI) part = downwardFiles(pod, src.downwardAPI.items);
          for (const [k, d] of part ?? []) files.set(k, d);
        }
      } else if (v.downwardAPI) {
        files = downwardFiles(pod, v.downwardAPI.items);
        mode = v.downwardAPI.defaultMode;
      }
      if (!files) continue;
      if (m.subPath) {
        const data = files.get(m.subPath);
        if (data === undefined) continue;
        // A subPath mount of one key is a single file at the mount path.
        out.push({ path: m.mountPath, files: new Map([['', data]]), mode: mode ?? 0o644 });
        continue;
      }
      out.push({ path: m.mountPath, files, ...(mode !== undefined && { mode }) });
    }
    return out;
  }

  private keyFiles(obj: Obj | undefined, items: Obj[] | undefined, base64: boolean): Map<string, Buffer> {
    const all = new Map<string, Buffer>();
    for (const [k, v] of Object.entries(obj?.data ?? {}))
      all.set(k, base64 ? Buffer.from(String(v), 'base64') : Buffer.from(String(v), 'utf8'));
    for (const [k, v] of Object.entries(obj?.binaryData ?? {})) all.set(k, Buffer.from(String(v), 'base64'));
    if (!items) return all;
    const picked = new Map<string, Buffer>();
    for (const it of items) {
      const d = all.get(it.key);
      if (d !== undefined) picked.set(it.path, d);
    }
    return picked;
  }
}

function hostnameOf(pod: Obj): string {
  return pod.spec?.hostname ?? pod.metadata?.name ?? '';
}

/** `$(VAR)` references to earlier variables, as the kubelet expands them (`$$` escapes). */
export function expandRefs(value: string, env: Map<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (m, name: string | undefined) => {
    if (m === '$$') return '$';
    return env.get(name!) ?? m;
  });
}

/** A downward API field (`metadata.labels['app']`, `status.podIP`, ...). */
function fieldValue(pod: Obj, path: string): string | undefined {
  const m = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
  if (m) return pod.metadata?.[m[1]!]?.[m[2]!] ?? '';
  switch (path) {
    case 'metadata.name':
      return pod.metadata?.name;
    case 'metadata.namespace':
      return pod.metadata?.namespace;
    case 'metadata.uid':
      return pod.metadata?.uid;
    case 'metadata.labels':
    case 'metadata.annotations': {
      const map: Obj = pod.metadata?.[path.slice(9)] ?? {};
      return Object.entries(map)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join('\n');
    }
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return pod.status?.hostIP ?? '';
    case 'status.hostIPs':
      return (pod.status?.hostIPs ?? []).map((i: Obj) => i.ip).join(',');
    case 'status.podIP':
      return pod.status?.podIP ?? '';
    case 'status.podIPs':
      return (pod.status?.podIPs ?? []).map((i: Obj) => i.ip).join(',');
    default:
      return undefined;
  }
}

/** A resourceFieldRef: the container's limit (or the simulated node's capacity when unset). */
function resourceValue(pod: Obj, ref: Obj): string | undefined {
  const c =
    (pod.spec?.containers ?? []).find((x: Obj) => x.name === ref.containerName) ?? pod.spec?.containers?.[0];
  const [kind, res] = String(ref.resource ?? '').split('.') as [string, string];
  const raw: string | undefined = c?.resources?.[kind]?.[res] ?? (kind === 'requests' ? '0' : undefined);
  const fallback: Record<string, string> = { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi' };
  const q = parseQuantity(raw ?? fallback[res] ?? '0');
  const divisor = parseQuantity(ref.divisor ?? '1');
  return String(Math.ceil(q / (divisor || 1)));
}

/** A quantity as a plain number (0 when malformed), enough for a downward API value. */
function parseQuantity(s: string): number {
  const q = parseQuantityExact(String(s));
  return q ? Number(q.num) / Number(q.den) : 0;
}

function downwardFiles(pod: Obj, items: Obj[] | undefined): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const it of items ?? []) {
    const v = it.fieldRef
      ? fieldValue(pod, it.fieldRef.fieldPath)
      : it.resourceFieldRef
        ? resourceValue(pod, it.resourceFieldRef)
        : undefined;
    if (v !== undefined) files.set(it.path, Buffer.from(v));
  }
  return files;
}
