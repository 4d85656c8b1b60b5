/**
 * Process-backed pods: the simulated kubelet runs a container as a process of this machine when
 * its image is one this machine can run, so that an operator deployed to the local control plane
 * runs in-cluster — with its ServiceAccount token, in-cluster config, probes, RBAC and leader
 * election — without Docker. Every other image stays simulated, as before.
 *
 * ## Images
 * `kubeloop.local/<name>[:<tag>]` names `<store>/<name>/<tag>/image.json` of the local image
 * store (`$KUBELOOP_IMAGE_STORE`, else `~/.kubeloop/images`; `kubeloop build` fills it), or the
 * server option `nodes.processes.images` maps any image name to a {@link LocalImage} (see
 * ./images.ts). A pod is process-backed when one of its containers' images resolves; its other
 * containers are simulated (running and ready).
 *
 * ## What a container gets
 * - argv: `command` + `args`, else the image's `ENTRYPOINT` + (`args` or `CMD`); `node` is the
 *   control plane's own Node.js.
 * - its own root directory `$KUBELOOP_ROOT` (under the state directory, a temporary one unless
 *   `stateDir` is given): each volume is at `$KUBELOOP_ROOT/<mountPath>` — ConfigMap, Secret,
 *   downward API and projected volumes as files; the projected ServiceAccount token as the
 *   kubelet gets it (TokenRequest, bound to the pod, renewed at 80% of its lifetime) with
 *   `ca.crt` and `namespace`, so kubeloop's in-cluster config finds them under `$KUBELOOP_ROOT`;
 *   emptyDir a directory the pod's containers share; hostPath a link to the host path.
 * - its working directory: `$KUBELOOP_ROOT/<workingDir>` (default the image's `WORKDIR`, `/app`),
 *   where the image's files are linked.
 * - the environment of its pod spec (`env` with `valueFrom` of ConfigMaps, Secrets, `fieldRef`
 *   and `resourceFieldRef`, `envFrom`) over the image's; `KUBERNETES_SERVICE_HOST`/`PORT` naming
 *   this API server; `KUBELOOP_POD_IP`; for Node.js programs a preload (`NODE_OPTIONS`) that
 *   binds an unaddressed `listen()` to the pod IP.
 * - a pod IP of its own in 127.0.0.0/8 (Linux routes all of it to `lo`): 127.244.x.y, so two
 *   pods listen on the same port, and EndpointSlices (hence Services and webhooks) point at it.
 *
 * ## How the kubelet drives it
 * Container statuses (running, terminated with exit code, `lastState`, `restartCount`); restarts
 * per `restartPolicy` with the crash-loop back-off (./backoff.ts; `backoffScale` shortens it for
 * tests); startup, liveness and readiness probes (./probes.ts) driving `started`, `Ready` and
 * restarts; deletion: SIGTERM to the main process, SIGKILL to its process group after the grace
 * period, then the pod is removed. A changed `image` of a container (the API lets a pod change
 * it) kills the container and starts it again from the new image, counted as a restart, as the
 * kubelet does when a container's spec hash changes. Logs, exec and port-forward reach the
 * processes.
 *
 * ## Hygiene
 * Each container is a child of the control plane in its own process group; a stop of the
 * control plane ends them (SIGTERM, then SIGKILL after a second), and a watchdog process
 * (./watchdog.ts) kills every group when the control plane dies without stopping (`kill -9`).
 */
import { randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveImage } from './images.js';
import { CLUSTER_DNS_FILE, LISTEN_SHIM } from './pod-files.js';
import type { ExecOutcome } from './process.js';
import { ProcessPod, type ProcessPodsDeps } from './process-pod.js';

export type { ProcessPodsDeps, ProcessPodsOptions } from './process-pod.js';

import type { ExecRequest } from './runtime.js';
import type { ClusterName } from './service-proxy.js';
import { Watchdog } from './watchdog.js';

/** Pod addresses in 127.244.0.0/16: 253 per /24. */
const IP_SPACE = 256 * 253;

// biome-ignore lint/suspicious/noExplicitAny: pods are read loosely, as the JSON they are
type Obj = Record<string, any>;

/**
 * The process-backed pods of the simulated nodes.
 *
 * @example
 * ```ts
 * const processes = new ProcessPods({ client, runtime, apiServer: url, options: {}, log });
 * if (processes.backs(pod)) processes.sync(pod); // from the kubelet's reconcile
 * ```
 */
export class ProcessPods {
  private readonly pods = new Map<string, ProcessPod>();
  private nextIp = randomInt(IP_SPACE);
  readonly watchdog = new Watchdog();
  private dir: string | undefined;
  private stopping = false;
  private names: Record<string, ClusterName> = {};
  private namesTimer: NodeJS.Timeout | undefined;
  /** When this kubelet started: probe workers of pods started within a period of it spread their first probes. */
  private readonly started = Date.now();

  constructor(private readonly deps: ProcessPodsDeps) {}

  /** Whether the pod is (or is to be) run as processes. */
  backs(pod: Obj): boolean {
    if (this.pods.has(pod.metadata?.uid ?? '')) return true;
    if (this.deps.options.enabled === false || this.stopping) return false;
    return (pod.spec?.containers ?? []).some(
      (c: Obj) => resolveImage(c.image, this.deps.options) !== undefined,
    );
  }

  /** The kubelet saw the pod (created, changed, being deleted): its processes follow. */
  sync(pod: Obj, hostIP: string): void {
    const uid = pod.metadata?.uid ?? '';
    let p = this.pods.get(uid);
    if (!p) {
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed' || this.stopping) return;
      p = new ProcessPod(pod, {
        ...this.deps,
        ip: this.allocateIp(),
        hostIP,
        dir: this.podDir(pod),
        watchdog: this.watchdog,
        shim: join(this.stateDir(), 'listen-shim.cjs'),
        kubeletStart: this.started,
      });
      this.pods.set(uid, p);
      p.start();
      return;
    }
    p.update(pod);
  }

  /**
   * The Services' cluster DNS names, written where the pods' preload reads them (a file of the
   * state directory; a moment later, so that a burst of Service changes is one write).
   */
  setClusterNames(names: Record<string, ClusterName>): void {
    this.names = names;
    // No state directory yet (no process-backed pod): the file is written when it is made.
    if (this.namesTimer || this.stopping || !this.dir) return;
    this.namesTimer = setTimeout(() => {
      this.namesTimer = undefined;
      this.writeNames();
    }, 50);
    this.namesTimer.unref();
  }

  private writeNames(): void {
    if (!this.dir) return;
    const file = join(this.dir, CLUSTER_DNS_FILE);
    writeFileSync(`${file}.tmp`, JSON.stringify(this.names));
    renameSync(`${file}.tmp`, file);
  }

  /** The pod is gone from the API: its processes end, its files go. */
  forget(uid: string): void {
    const p = this.pods.get(uid);
    if (!p) return;
    this.pods.delete(uid);
    void p.dispose(0);
  }

  /** The running pod of a uid. */
  find(uid: string): ProcessPod | undefined {
    return this.pods.get(uid);
  }

  /** Runs a command in a container of a process-backed pod (undefined when the pod is not one). */
  exec(pod: Obj, container: string, req: ExecRequest): Promise<ExecOutcome> | undefined {
    const c = this.pods.get(pod.metadata?.uid ?? '')?.containers.get(container);
    if (!c) return undefined;
    return c.exec(req.command, {
      io: req.io,
      signal: req.signal,
      ...(req.tty && { tty: true }),
      ...(req.terminal && { terminal: req.terminal }),
    });
  }

  /** Connects to a port of a process-backed pod (undefined when the pod is not one). */
  async connect(uid: string, port: number): Promise<Socket | undefined> {
    const p = this.pods.get(uid);
    if (!p) return undefined;
    const socket = connect(port, p.ip);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return socket;
  }

  /** Per-container usage of a process-backed pod, for metrics.k8s.io. */
  usage(uid: string): { name: string; cpu: number; memory: number }[] | undefined {
    const p = this.pods.get(uid);
    if (!p) return undefined;
    return [...p.containers.values()].map((c) => ({ name: c.name, ...(c.usage() ?? { cpu: 0, memory: 0 }) }));
  }

  /** Ends every process (SIGTERM, SIGKILL after a second) and removes the state directory. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.namesTimer);
    await Promise.all([...this.pods.values()].map((p) => p.dispose(1000)));
    this.pods.clear();
    this.watchdog.close();
    if (this.dir && !this.deps.options.stateDir) rmSync(this.dir, { recursive: true, force: true });
  }

  private stateDir(): string {
    if (!this.dir) {
      const base = this.deps.options.stateDir;
      if (base) mkdirSync(base, { recursive: true });
      this.dir = base ?? mkdtempSync(join(tmpdir(), 'kubeloop-pods-'));
      // A temporary directory goes with the control plane, even one killed with kill -9.
      if (!base) this.watchdog.cleanup = this.dir;
      writeFileSync(join(this.dir, 'listen-shim.cjs'), LISTEN_SHIM);
      this.writeNames();
    }
    return this.dir;
  }

  private podDir(pod: Obj): string {
    const m = pod.metadata ?? {};
    const dir = join(this.stateDir(), `${m.namespace}_${m.name}_${String(m.uid).slice(0, 8)}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /**
   * A loopback address of its own in 127.244.0.0/16 (.2 to .254 of each /24), not reused before
   * 64k more. Each control plane starts at a random one: two planes on one machine (two projects,
   * test files run in parallel) share 127.0.0.0/8, and pods of both listening on the same port at
   * the same address would fail with EADDRINUSE.
   */
  private allocateIp(): string {
    const k = this.nextIp++;
    return `127.244.${Math.floor((k % IP_SPACE) / 253) % 256}.${2 + (k % 253)}`;
  }
}
