/**
 * One process-backed pod (see ./process-pods.ts): its containers' roots, volumes and tokens
 * prepared, its containers started, its status written as their states change, and its
 * termination when deleted.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Client, isConflict, isNotFound, Pod } from 'kubeloop/client';
import type { ControllerLog } from '../log.js';
import { type ContainerContext, type ContainerHost, ProcessContainer } from './container.js';
import { type ImageSource, type LocalImage, resolveImage } from './images.js';
import {
  commandLine,
  linkImage,
  processEnvironment,
  unlinkImage,
  workingDirectory,
  writeMountedFiles,
  writeToken,
  writeVolumes,
} from './pod-files.js';
import type { SimulatedRuntime } from './runtime.js';
import type { Watchdog } from './watchdog.js';

// biome-ignore lint/suspicious/noExplicitAny: pods are read loosely, as the JSON they are
type Obj = Record<string, any>;

const rfc3339 = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/**
 * Options of process-backed pods (the `processes` of the simulated nodes' options).
 *
 * @example
 * ```ts
 * await startControlPlane({
 *   nodes: { processes: { images: { 'example.com/op:dev': { dir: '/src/op', entrypoint: ['node', 'dist/main.js'] } } } },
 * });
 * ```
 */
export interface ProcessPodsOptions extends ImageSource {
  /** `false`: every image is simulated (default true). */
  enabled?: boolean;
  /** Where the pods' root directories go (default a temporary directory, removed on stop). */
  stateDir?: string;
  /** Factor of the crash-loop back-off durations (default 1: 10 s doubling to 5 min). */
  backoffScale?: number;
  /** How often ConfigMap and Secret volumes are brought up to date (default 60 s, the kubelet's sync frequency). */
  syncIntervalMs?: number;
}

/** What process-backed pods need from the kubelet. */
export interface ProcessPodsDeps {
  /** The kubelet's client (the node's identity): status writes, token requests, deletion. */
  client: Client;
  runtime: SimulatedRuntime;
  /** The API server's URL, as the pods' in-cluster config should reach it. */
  apiServer: string;
  options: ProcessPodsOptions;
  log: ControllerLog;
}

/** What a pod gets from the process-backed pods. */
export interface ProcessPodDeps extends ProcessPodsDeps {
  ip: string;
  hostIP: string;
  dir: string;
  watchdog: Watchdog;
  /** The Node.js preload binding unaddressed listens to the pod IP. */
  shim: string;
  /** When the kubelet started (ms since the epoch), for its probe workers. */
  kubeletStart: number;
}

/** A pod whose containers run as processes. */
export class ProcessPod {
  readonly containers = new Map<string, ProcessContainer>();
  /** The init containers, in order (those whose image is simulated complete at once). */
  private readonly inits = new Map<string, ProcessContainer>();
  /** The first init container not done yet; the main containers start once all are. */
  private initIndex = 0;
  private mainStarted = false;
  private terminating = false;
  private disposed = false;
  private prepared: Promise<void> = Promise.resolve();
  private preparing: { reason: string; message?: string } | undefined = { reason: 'ContainerCreating' };
  private readonly timers = new Set<NodeJS.Timeout>();
  private writing = false;
  private dirty = false;
  private lastWritten = '';
  private readonly startTime = rfc3339(Date.now());

  constructor(
    private pod: Obj,
    private readonly deps: ProcessPodDeps,
  ) {}

  /** The pod's loopback address. */
  get ip(): string {
    return this.deps.ip;
  }

  /** Prepares and starts the containers (in the background; the status follows). */
  start(): void {
    this.prepared = this.prepare();
    this.changed();
  }

  /** The pod as stored now: a deletion starts its termination. */
  update(pod: Obj): void {
    const previous = this.pod;
    this.pod = pod;
    if (pod.metadata?.deletionTimestamp && !this.terminating) void this.terminate();
    else if (!this.terminating && !this.preparing) this.redefine(previous);
  }

  private async prepare(): Promise<void> {
    const { runtime, client } = this.deps;
    try {
      const all: [Obj, boolean][] = [
        ...(this.pod.spec?.initContainers ?? []).map((c: Obj): [Obj, boolean] => [c, true]),
        ...(this.pod.spec?.containers ?? []).map((c: Obj): [Obj, boolean] => [c, false]),
      ];
      for (const [spec, init] of all) {
        const image = resolveImage(spec.image, this.deps.options);
        if (!image) continue;
        const root = join(this.deps.dir, spec.name);
        linkImage(image, root);
        for (const t of writeVolumes(runtime, this.pod, spec, root, this.deps.dir)) {
          const refreshAt = await writeToken(client, this.pod, t.file, t.source);
          this.refreshToken(t.file, t.source, refreshAt);
        }
        const context = this.context(spec, image, root);
        const c = new ProcessContainer(spec, image, context, this.host(spec.name, init ? spec : undefined));
        (init ? this.inits : this.containers).set(spec.name, c);
      }
    } catch (err) {
      // As a kubelet whose volume setup failed (FailedMount): the containers wait, and it tries again.
      this.preparing = {
        reason: 'ContainerCreating',
        message: err instanceof Error ? err.message : String(err),
      };
      this.containers.clear();
      this.inits.clear();
      this.changed();
      if (!this.terminating) this.later(1000, () => this.start());
      return;
    }
    this.preparing = undefined;
    this.syncVolumes();
    this.advance();
  }

  /** What a container's process gets: its environment, command line and working directory. */
  private context(spec: Obj, image: LocalImage, root: string): ContainerContext {
    const env = processEnvironment({
      runtime: this.deps.runtime,
      pod: this.pod,
      spec,
      image,
      root,
      podIP: this.ip,
      apiServer: new URL(this.deps.apiServer),
      listenShim: this.deps.shim,
    });
    return { env, argv: commandLine(spec, image, env), cwd: workingDirectory(spec, image, root) };
  }

  /**
   * The pod's spec changed a container's image (the one field of a container the API lets change
   * on a pod): as the kubelet, whose hash of the container's spec no longer matches, the
   * container is killed (with the pod's grace period) and started again from the new image, its
   * restart count one more, with no back-off. An image this machine cannot run is simulated.
   */
  private redefine(previous: Obj): void {
    const before = new Map<string, Obj>((previous.spec?.containers ?? []).map((c: Obj) => [c.name, c]));
    // Only the containers: an init container that has completed is not run again.
    for (const spec of this.pod.spec?.containers ?? []) {
      const c = this.containers.get(spec.name);
      if (!c || before.get(spec.name)?.image === spec.image || c.spec.image === spec.image) continue;
      const image = resolveImage(spec.image, this.deps.options);
      const root = join(this.deps.dir, spec.name);
      try {
        if (image) {
          unlinkImage(c.image, root);
          linkImage(image, root);
        }
      } catch (err) {
        this.deps.log('warn', 'linking the new image of a process-backed container failed', {
          err: String(err),
        });
      }
      const grace = this.pod.spec?.terminationGracePeriodSeconds ?? 30;
      void c.redefine(spec, image, image ? this.context(spec, image, root) : undefined, grace * 1000);
    }
  }

  /** Every sync period, the ConfigMap and Secret volumes follow their objects, as the kubelet's pod sync. */
  private syncVolumes(): void {
    this.later(this.deps.options.syncIntervalMs ?? 60_000, () => {
      for (const c of [...this.inits.values(), ...this.containers.values()]) {
        try {
          writeMountedFiles(this.deps.runtime, this.pod, c.spec, join(this.deps.dir, c.name), true);
        } catch (err) {
          this.deps.log('warn', 'updating the volumes of a process-backed pod failed', { err: String(err) });
        }
      }
      // The kubelet's periodic pod sync also writes the status (which triggers readiness probes).
      this.changed();
      this.syncVolumes();
    });
  }

  /**
   * Starts what may start: the init containers one at a time, each once the previous one
   * completed (a sidecar, `restartPolicy: Always`, once started), then the containers.
   */
  private advance(): void {
    if (this.terminating || this.preparing || this.mainStarted) return;
    const inits = [...this.inits.values()];
    while (this.initIndex < inits.length) {
      const c = inits[this.initIndex]!;
      if (!c.everStarted) {
        c.start();
        if (c.spec.restartPolicy !== 'Always') return;
      }
      if (c.spec.restartPolicy !== 'Always' && !(c.done && c.state.terminated?.exitCode === 0)) return;
      this.initIndex += 1;
    }
    this.mainStarted = true;
    for (const c of this.containers.values()) c.start();
  }

  private host(name: string, init?: Obj): ContainerHost {
    return {
      pod: () => this.pod,
      podIP: this.ip,
      watchdog: this.deps.watchdog,
      record: this.deps.runtime.container(this.pod, name),
      backoffScale: this.deps.options.backoffScale ?? 1,
      kubeletStart: this.deps.kubeletStart,
      changed: () => {
        this.advance();
        this.changed();
      },
      terminating: () => this.terminating,
      restartPolicy: () => {
        const pod = this.pod.spec?.restartPolicy ?? 'Always';
        if (!init) return pod;
        if (init.restartPolicy === 'Always') return 'Always';
        return pod === 'Never' ? 'Never' : 'OnFailure';
      },
    };
  }

  private refreshToken(file: string, source: Obj, at: number): void {
    this.later(Math.max(1000, at - Date.now()), () => {
      writeToken(this.deps.client, this.pod, file, source).then(
        (next) => this.refreshToken(file, source, next),
        // The old token is still valid for a fifth of its life: try again shortly.
        () => this.refreshToken(file, source, Date.now() + 10_000),
      );
    });
  }

  private later(ms: number, fn: () => void): void {
    if (this.disposed) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  /** Deleted: SIGTERM, SIGKILL after the grace period, then the pod is removed from the API. */
  private async terminate(): Promise<void> {
    this.terminating = true;
    await this.prepared;
    const grace =
      this.pod.metadata?.deletionGracePeriodSeconds ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30;
    await Promise.all([...this.containers.values(), ...this.inits.values()].map((c) => c.kill(grace * 1000)));
    if (this.disposed) return;
    const { name, namespace, uid } = this.pod.metadata ?? {};
    try {
      await this.deps.client
        .api(Pod, namespace)
        .delete(name, { gracePeriodSeconds: 0, preconditions: { uid } });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err))
        this.deps.log('warn', 'deleting a terminated pod failed', {
          pod: `${namespace}/${name}`,
          err: String(err),
        });
    }
  }

  /** Ends the processes (SIGTERM, SIGKILL after `graceMs`) and removes the pod's files. */
  async dispose(graceMs: number): Promise<void> {
    this.terminating = true;
    this.disposed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.prepared;
    await Promise.all([...this.containers.values(), ...this.inits.values()].map((c) => c.kill(graceMs)));
    rmSync(this.deps.dir, { recursive: true, force: true });
  }

  /** Something changed: the status is written (one write at a time, the last state wins). */
  changed(): void {
    if (this.disposed) return;
    for (const c of [...this.inits.values(), ...this.containers.values()]) c.statusSynced();
    this.dirty = true;
    if (this.writing) return;
    this.writing = true;
    void (async () => {
      while (this.dirty && !this.disposed) {
        this.dirty = false;
        const status = this.status();
        const text = JSON.stringify(status);
        if (text === this.lastWritten) continue;
        try {
          const { name, namespace } = this.pod.metadata ?? {};
          await this.deps.client.api(Pod, namespace).patchStatus(name, { status } as Pod);
          this.lastWritten = text;
        } catch (err) {
          if (isNotFound(err)) break;
          this.deps.log('warn', 'writing a process-backed pod status failed', { err: String(err) });
          this.later(1000, () => this.changed());
          break;
        }
      }
      this.writing = false;
    })();
  }

  /** The pod's status, from its containers' states. */
  status(): Obj {
    const t = rfc3339(Date.now());
    const specs: Obj[] = this.pod.spec?.containers ?? [];
    const initSpecs: Obj[] = this.pod.spec?.initContainers ?? [];
    const waiting = (spec: Obj, state: Obj) => ({
      name: spec.name,
      image: spec.image ?? '',
      imageID: '',
      ready: false,
      started: false,
      restartCount: 0,
      state: { waiting: state },
      lastState: {},
    });
    const statusOf = (spec: Obj, init: boolean): Obj => {
      const c = (init ? this.inits : this.containers).get(spec.name);
      if (c?.everStarted || c?.configError) return c.status();
      const local = resolveImage(spec.image, this.deps.options) !== undefined;
      if (local || (init && !this.mainStarted))
        return waiting(spec, this.preparing && !init ? this.preparing : { reason: 'PodInitializing' });
      if (!init && !this.mainStarted) return waiting(spec, { reason: 'PodInitializing' });
      // A container whose image this machine cannot run is simulated: running and ready (an init container: completed).
      const state = init
        ? {
            terminated: {
              exitCode: 0,
              reason: 'Completed',
              startedAt: this.startTime,
              finishedAt: this.startTime,
            },
          }
        : { running: { startedAt: this.startTime } };
      return {
        name: spec.name,
        image: spec.image ?? '',
        imageID: `kubeloop://${spec.image ?? ''}`,
        containerID: `kubeloop://${this.pod.metadata?.uid}/${spec.name}`,
        ready: !init,
        started: !init,
        restartCount: 0,
        state,
        lastState: {},
      };
    };
    const statuses = specs.map((spec) => statusOf(spec, false));
    const initStatuses = initSpecs.map((spec) => statusOf(spec, true));
    const processes = [...this.containers.values()];
    const initFailed = [...this.inits.values()].some((c) => c.done && c.state.terminated?.exitCode !== 0);
    const allDone =
      processes.length > 0 && processes.length === specs.length && processes.every((c) => c.done);
    const ran = statuses.some((s) => s.state.running || s.state.terminated || s.restartCount > 0);
    const phase = initFailed
      ? 'Failed'
      : allDone
        ? processes.every((c) => c.state.terminated?.exitCode === 0)
          ? 'Succeeded'
          : 'Failed'
        : ran && this.mainStarted
          ? 'Running'
          : 'Pending';
    const ready = phase === 'Running' && statuses.every((s) => s.ready);
    const previous = new Map<string, Obj>((this.pod.status?.conditions ?? []).map((c: Obj) => [c.type, c]));
    const condition = (type: string, ok: boolean, reason?: string, message?: string): Obj => {
      const status = ok ? 'True' : 'False';
      const old = previous.get(type);
      return {
        type,
        status,
        lastProbeTime: null,
        lastTransitionTime: old?.status === status ? old.lastTransitionTime : t,
        ...(reason && { reason }),
        ...(message && { message }),
      };
    };
    const unready = statuses.filter((s) => !s.ready).map((s) => s.name);
    const why = allDone
      ? { reason: phase === 'Succeeded' ? 'PodCompleted' : 'PodFailed' }
      : { reason: 'ContainersNotReady', message: `containers with unready status: [${unready.join(' ')}]` };
    return {
      phase,
      conditions: [
        condition('PodReadyToStartContainers', !this.preparing && !allDone),
        this.mainStarted
          ? condition('Initialized', true)
          : condition(
              'Initialized',
              false,
              'ContainersNotInitialized',
              `containers with incomplete status: [${initStatuses
                .filter((x) => x.state.terminated?.exitCode !== 0)
                .map((x) => x.name)
                .join(' ')}]`,
            ),
        ready ? condition('Ready', true) : condition('Ready', false, why.reason, why.message),
        ready
          ? condition('ContainersReady', true)
          : condition('ContainersReady', false, why.reason, why.message),
        condition('PodScheduled', true),
      ],
      hostIP: this.deps.hostIP,
      hostIPs: [{ ip: this.deps.hostIP }],
      podIP: this.ip,
      podIPs: [{ ip: this.ip }],
      startTime: this.pod.status?.startTime ?? this.startTime,
      ...(initStatuses.length > 0 && { initContainerStatuses: initStatuses }),
      containerStatuses: statuses,
    };
  }
}
