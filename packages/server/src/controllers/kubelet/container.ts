/**
 * One container of a process-backed pod: its process (a child of the control plane in a process
 * group of its own, watched by the parent-death watchdog), its runs and their logs, its restarts
 * under the pod's `restartPolicy` with the crash-loop back-off, its probes, and its status as the
 * kubelet writes it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CrashLoopBackOff, goDuration } from './backoff.js';
import type { LocalImage } from './images.js';
import { MEMORY_SAMPLE_MS, memoryLimit, treeRss } from './memory-limit.js';
import { type ProbeSubject, type ProbeTarget, ProbeWorker } from './probes.js';
import type { ExecOutcome, ProcessIO } from './process.js';
import { ContainerInstance, type SimulatedContainer } from './runtime.js';
import { runAsNonRootError } from './security-context.js';
import { followTerminalSize, inTerminal, type Terminal } from './tty.js';
import type { Watchdog } from './watchdog.js';

// biome-ignore lint/suspicious/noExplicitAny: pods are read loosely, as the JSON they are
type Obj = Record<string, any>;

const rfc3339 = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;
const SIGNALS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGTERM: 15,
};

/** What a container's process gets. */
export interface ContainerContext {
  env: Record<string, string>;
  argv: string[];
  cwd: string;
}

/** What a container gets from its pod. */
export interface ContainerHost {
  /** The pod as last seen. */
  pod(): Obj;
  podIP: string;
  watchdog: Watchdog;
  /** The runtime's record of the container (its runs, for logs). */
  record: SimulatedContainer;
  backoffScale: number;
  /** The container's state changed: the pod writes its status. */
  changed(): void;
  /** Whether the pod is being deleted (nothing restarts then). */
  terminating(): boolean;
  /** The container's restart policy (the pod's; an init container's: on failure, or always for a sidecar). */
  restartPolicy(): string;
  /** When the kubelet started (ms since the epoch): its probe workers spread their first probes within a period of it. */
  kubeletStart: number;
}

/** Writes a stream's output to a run's log, a line at a time. */
function lineWriter(
  inst: ContainerInstance,
  stream: 'stdout' | 'stderr',
): { push(b: Buffer): void; flush(): void } {
  let partial = '';
  return {
    push(b) {
      const text = partial + b.toString('utf8');
      const end = text.lastIndexOf('\n');
      partial = text.slice(end + 1);
      if (end >= 0) inst.write(stream, text.slice(0, end + 1));
    },
    flush() {
      if (partial) inst.write(stream, partial);
      partial = '';
    },
  };
}

/**
 * A container run as processes.
 *
 * @example
 * ```ts
 * const c = new ProcessContainer(spec, image, { env, argv, cwd }, host);
 * c.start();
 * await c.kill(30_000); // SIGTERM, then SIGKILL after the grace period
 * ```
 */
export class ProcessContainer {
  restartCount = 0;
  ready = false;
  started = false;
  state: Obj = { waiting: { reason: 'ContainerCreating' } };
  lastState: Obj = {};
  proc: ChildProcess | undefined;
  private run: ContainerInstance | undefined;
  private readonly backoff: CrashLoopBackOff;
  private restartTimer: NodeJS.Timeout | undefined;
  /** The probe workers, created at the first run and kept across runs, as the kubelet's. */
  private probes: ProbeWorker[] | undefined;
  private readiness: ProbeWorker | undefined;
  private exited: Promise<void> = Promise.resolve();
  private cpu: { at: number; ticks: number } | undefined;
  /** When the current run started; undefined while none runs. */
  private startedAt: number | undefined;

  /** Why the container cannot be created (kube's CreateContainerConfigError), if so. */
  configError: string | undefined;
  /** Being killed to start again from another image: its exit does not go through the restart policy. */
  private redefining = false;

  constructor(
    public spec: Obj,
    public image: LocalImage,
    public context: ContainerContext,
    private readonly host: ContainerHost,
  ) {
    this.backoff = new CrashLoopBackOff(host.backoffScale);
    this.configError = runAsNonRootError(host.pod(), spec, image);
  }

  get name(): string {
    return this.spec.name;
  }

  /** Starts a run of the container. */
  start(): void {
    if (this.configError) {
      this.state = { waiting: { reason: 'CreateContainerConfigError', message: this.configError } };
      this.host.changed();
      return;
    }
    const [cmd, ...args] = this.context.argv;
    const run = new ContainerInstance();
    const runs = this.host.record.instances;
    runs.push(run);
    // The runtime keeps the current run and the previous one (`logs --previous`), as a kubelet does.
    if (runs.length > 2) runs.splice(0, runs.length - 2);
    this.run = run;
    const startedAt = Date.now();
    this.ready = false;
    this.started = !this.spec.startupProbe;
    this.ready = !this.spec.readinessProbe;
    if (!cmd) {
      this.state = { waiting: { reason: 'CreateContainerError', message: 'no command specified' } };
      run.end();
      this.host.changed();
      return;
    }
    // Its own process group (a container's processes end together), kept from the control
    // plane's terminal signals; the watchdog kills the group if the control plane dies.
    const proc = spawn(cmd === 'node' ? process.execPath : cmd, args, {
      cwd: this.context.cwd,
      env: this.context.env,
      detached: true,
      stdio: [this.spec.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    if (proc.stdin) {
      proc.stdin.on('error', () => undefined);
      run.input = (chunk) => proc.stdin?.write(chunk);
      if (this.spec.stdinOnce) run.closeInput = () => proc.stdin?.end();
    }
    const out = lineWriter(run, 'stdout');
    const err = lineWriter(run, 'stderr');
    proc.stdout?.on('data', (b: Buffer) => out.push(b));
    proc.stderr?.on('data', (b: Buffer) => err.push(b));
    let done!: () => void;
    this.exited = new Promise((resolve) => {
      done = resolve;
    });
    let oomKilled = false;
    let memoryWatch: NodeJS.Timeout | undefined;
    const finish = (exitCode: number, reason: string, message?: string) => {
      clearInterval(memoryWatch);
      out.flush();
      err.flush();
      run.end();
      if (proc.pid !== undefined) {
        // What the main process left behind goes with it, as with a container's cgroup.
        try {
          process.kill(-proc.pid, 'SIGKILL');
        } catch {
          // The group is already gone.
        }
        this.host.watchdog.release(proc.pid);
      }
      this.proc = undefined;
      this.ready = false;
      this.startedAt = undefined;
      const terminated = {
        exitCode,
        reason,
        ...(message && { message }),
        startedAt: rfc3339(startedAt),
        finishedAt: rfc3339(Date.now()),
        containerID: `kubeloop://${run.id}`,
      };
      this.state = { terminated };
      done();
      this.afterExit(Date.now(), exitCode);
      this.host.changed();
    };
    proc.once('error', (e: NodeJS.ErrnoException) => {
      if (proc.pid !== undefined) return;
      const message =
        e.code === 'ENOENT'
          ? `failed to create containerd task: exec: "${cmd}": executable file not found in $PATH`
          : `failed to create containerd task: ${e.message}`;
      finish(128, 'StartError', message);
    });
    if (proc.pid === undefined) return;
    this.host.watchdog.watch(proc.pid);
    proc.once('close', (code, signal) => {
      const exitCode = code ?? 128 + (SIGNALS[signal ?? ''] ?? 9);
      if (oomKilled) finish(137, 'OOMKilled');
      else finish(exitCode, exitCode === 0 ? 'Completed' : 'Error');
    });
    const limit = memoryLimit(this.spec);
    if (limit !== undefined) {
      const pid = proc.pid;
      // Over its memory limit, the container's processes are killed (./memory-limit.ts).
      memoryWatch = setInterval(() => {
        if (treeRss(pid) <= limit) return;
        oomKilled = true;
        clearInterval(memoryWatch);
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // Exited meanwhile.
        }
      }, MEMORY_SAMPLE_MS);
      memoryWatch.unref();
    }
    this.state = { running: { startedAt: rfc3339(startedAt) } };
    this.startedAt = startedAt;
    this.startProbes();
    this.host.changed();
  }

  /** The run ended: restart it per the pod's restartPolicy, after the back-off. */
  private afterExit(finishedAt: number, exitCode: number): void {
    if (this.redefining) return;
    const policy = this.host.restartPolicy();
    if (this.host.terminating() || policy === 'Never' || (policy === 'OnFailure' && exitCode === 0)) return;
    const wait = this.backoff.delay(finishedAt, Date.now());
    if (wait === 0) {
      this.restart();
      return;
    }
    const pod = this.host.pod();
    this.lastState = { terminated: this.state.terminated };
    this.state = {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off ${goDuration(this.backoff.nominalMs)} restarting failed container=${this.name} pod=${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})`,
      },
    };
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.host.terminating()) this.afterExit(finishedAt, exitCode);
    }, wait);
  }

  private restart(): void {
    if (this.state.terminated) this.lastState = { terminated: this.state.terminated };
    this.restartCount += 1;
    this.start();
  }

  private startProbes(): void {
    if (this.probes) return;
    this.probes = [];
    const target: ProbeTarget = {
      podIP: this.host.podIP,
      container: this.spec,
      exec: async (argv, timeoutMs) => {
        const outcome = await this.exec(argv, { signal: AbortSignal.timeout(timeoutMs) });
        return 'exitCode' in outcome ? outcome.exitCode : -1;
      },
    };
    const subject: ProbeSubject = {
      current: () =>
        this.run && {
          id: this.run.id,
          running: this.startedAt !== undefined,
          startedAt: this.startedAt ?? 0,
          started: this.started,
        },
      // Exited under a policy that does not restart it (the kubelet's worker ends with the pod's phase).
      neverRestarted: () => this.host.restartPolicy() === 'Never' || this.done,
    };
    const add = (kind: 'startup' | 'liveness' | 'readiness', onChange: (ok: boolean) => void) => {
      const w = new ProbeWorker(
        kind,
        this.spec[`${kind}Probe`],
        target,
        subject,
        (runId, ok) => {
          // A result of a run that has ended meanwhile says nothing of this one.
          if (runId === this.run?.id && this.startedAt !== undefined) onChange(ok);
        },
        this.host.kubeletStart,
      );
      this.probes?.push(w);
      w.start();
      return w;
    };
    if (this.spec.startupProbe)
      add('startup', (ok) => {
        if (!ok) return this.failed('startup');
        this.started = true;
        this.host.changed();
      });
    if (this.spec.livenessProbe) add('liveness', (ok) => ok || this.failed('liveness'));
    if (this.spec.readinessProbe)
      this.readiness = add('readiness', (ok) => {
        this.ready = ok;
        this.host.changed();
      });
  }

  /**
   * The pod's status is being written: a started container not (yet) ready has its readiness
   * probed now, as the kubelet's prober manager triggers it in UpdatePodStatus — which is how
   * a container whose startup probe just passed becomes Ready without waiting for a period.
   */
  statusSynced(): void {
    if (this.startedAt !== undefined && this.started && !this.ready) this.readiness?.trigger();
  }

  private stopProbes(): void {
    for (const p of this.probes ?? []) p.stop();
  }

  /** A liveness or startup probe failed: the kubelet kills the container, which then restarts per policy. */
  private failed(kind: 'liveness' | 'startup'): void {
    this.run?.write('stderr', `kubeloop: container "${this.name}" failed ${kind} probe, will be restarted\n`);
    const probe = kind === 'liveness' ? this.spec.livenessProbe : this.spec.startupProbe;
    const grace =
      probe?.terminationGracePeriodSeconds ?? this.host.pod().spec?.terminationGracePeriodSeconds ?? 30;
    void this.killRun(grace * 1000);
  }

  /** Ends the container for good: no more probes nor restarts; SIGTERM to its main process, SIGKILL to its group after `graceMs`. Resolves once it exited. */
  async kill(graceMs: number): Promise<void> {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.stopProbes();
    await this.killRun(graceMs);
  }

  /** Ends the current run: SIGTERM to its main process, SIGKILL to its group after `graceMs`. */
  private async killRun(graceMs: number): Promise<void> {
    const proc = this.proc;
    if (!proc?.pid) return;
    const pid = proc.pid;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Exited meanwhile.
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Exited meanwhile.
      }
    }, graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /**
   * Runs another image (the pod's spec changed it): the current run is killed with `graceMs`,
   * and the container starts again at once from the new image — a new container for the kubelet,
   * hence no back-off — counted as a restart. Without a runnable image (undefined), it waits with
   * `ErrImagePull`.
   */
  async redefine(
    spec: Obj,
    image: LocalImage | undefined,
    context: ContainerContext | undefined,
    graceMs: number,
  ): Promise<void> {
    this.redefining = true;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.run?.write(
      'stderr',
      `kubeloop: container "${this.name}" definition changed (image ${spec.image}), will be restarted\n`,
    );
    await this.killRun(graceMs);
    this.redefining = false;
    this.spec = spec;
    if (!image || !context) {
      if (this.state.terminated) this.lastState = { terminated: this.state.terminated };
      this.state = {
        waiting: {
          reason: 'ErrImagePull',
          message: `image ${JSON.stringify(spec.image)} is not one this machine runs: a kubeloop.local/ image of the local image store (kubeloop build), or one mapped by the node's processes.images`,
        },
      };
      this.host.changed();
      return;
    }
    this.image = image;
    this.context = context;
    this.configError = runAsNonRootError(this.host.pod(), spec, image);
    if (this.host.terminating()) return;
    this.restart();
  }

  /** Stops restarting (the pod is going away). */
  cancelRestart(): void {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  /**
   * Runs a command in the container's working directory with its environment, in a process group
   * of its own that the watchdog also kills; without `io`, its output is dropped.
   */
  exec(
    argv: string[],
    o: { io?: ProcessIO; signal: AbortSignal; tty?: boolean; terminal?: Terminal },
  ): Promise<ExecOutcome> {
    if (!argv[0]) return Promise.resolve({ startError: 'exec: "": executable file not found in $PATH' });
    const program = [argv[0] === 'node' ? process.execPath : argv[0], ...argv.slice(1)];
    // With a terminal (`exec -t`): under `script` (./tty.ts), TERM set as container runtimes do.
    const terminal = o.tty ? inTerminal(program) : undefined;
    const [cmd = '', ...args] = terminal ?? program;
    return new Promise((resolve) => {
      const child = spawn(cmd, args, {
        cwd: this.context.cwd,
        env: terminal ? { TERM: 'xterm', ...this.context.env } : this.context.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const kill = () => {
        if (child.pid !== undefined)
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            // Gone.
          }
      };
      child.once('error', (e: NodeJS.ErrnoException) => {
        if (child.pid !== undefined) return;
        resolve({
          startError: e.code === 'ENOENT' ? `exec: "${cmd}": executable file not found in $PATH` : e.message,
        });
      });
      if (child.pid === undefined) return;
      const pid = child.pid;
      this.host.watchdog.watch(pid);
      if (terminal && o.terminal) followTerminalSize(pid, o.terminal, o.signal);
      o.signal.addEventListener('abort', kill, { once: true });
      child.stdout?.on('data', (b: Buffer) => o.io?.stdout(b));
      child.stderr?.on('data', (b: Buffer) => o.io?.stderr(b));
      child.stdin?.on('error', () => undefined);
      void (async () => {
        try {
          for await (const chunk of o.io?.stdin.chunks() ?? []) child.stdin?.write(chunk);
        } catch {
          // The client went away.
        }
        child.stdin?.end();
      })();
      child.once('close', (code, signal) => {
        o.signal.removeEventListener('abort', kill);
        kill();
        this.host.watchdog.release(pid);
        resolve({ exitCode: code ?? 128 + (SIGNALS[signal ?? ''] ?? 9) });
      });
    });
  }

  /** The container's usage now: CPU in cores (since the last reading) and resident memory in bytes. */
  usage(): { cpu: number; memory: number } | undefined {
    const pid = this.proc?.pid;
    if (pid === undefined) return undefined;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime (fields 14 and 15 of stat(5)) in clock ticks of 1/100 s.
      const ticks = Number(fields[11]) + Number(fields[12]);
      const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
      const now = Date.now();
      const prev = this.cpu ?? {
        at: Date.parse(this.state.running?.startedAt ?? '') || now - 1000,
        ticks: 0,
      };
      this.cpu = { at: now, ticks };
      const cpu = Math.max(0, (ticks - prev.ticks) / 100 / Math.max(0.001, (now - prev.at) / 1000));
      return { cpu, memory: pages * 4096 };
    } catch {
      return undefined;
    }
  }

  /** The container's status, as the kubelet writes it. */
  status(): Obj {
    const id = this.run?.id;
    const running = Boolean(this.state.running);
    return {
      name: this.name,
      image: this.spec.image ?? '',
      imageID: `${String(this.spec.image ?? '').split('@')[0]}@sha256:${createHash('sha256').update(this.image.dir).digest('hex')}`,
      ...(id && { containerID: `kubeloop://${id}` }),
      ready: running && this.started && this.ready,
      started: running && this.started,
      restartCount: this.restartCount,
      state: this.state,
      lastState: this.lastState,
    };
  }

  /** Whether the container was ever started. */
  get everStarted(): boolean {
    return this.run !== undefined;
  }

  /** Whether the container will not run again (exited under a policy that does not restart it). */
  get done(): boolean {
    return Boolean(this.state.terminated) && !this.restartTimer && !this.proc;
  }
}
