/**
 * The kubelet's probes of a process-backed container (pkg/kubelet/prober), with kube 1.32's
 * timing (see {@link ProbeWorker}): one worker per probe and container, ticking every
 * `periodSeconds` from the pod's start, skipping runs younger than `initialDelaySeconds`,
 * reporting a change only after `successThreshold` successes or `failureThreshold` failures in
 * a row; a readiness probe also runs whenever the kubelet writes the status of a started
 * container that is not ready. HTTP (2xx and 3xx succeed), TCP (a connection succeeds), exec
 * (exit code 0 succeeds) and gRPC (./grpc-probe.ts: the health service answers SERVING) probes.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';

// gRPC probes are rare and their client needs node:http2 (~1 MB of an idle server's RSS): it is
// loaded by the first one.
let grpcModule: Promise<typeof import('./grpc-probe.js')> | undefined;

// biome-ignore lint/suspicious/noExplicitAny: probes are read loosely, as the JSON they are
type Obj = Record<string, any>;

/** The three probes of a container. */
export type ProbeKind = 'startup' | 'liveness' | 'readiness';

/** What a probe acts on: the pod's address, the container's ports, and exec in its context. */
export interface ProbeTarget {
  podIP: string;
  /** The container spec (for named ports). */
  container: Obj;
  /** Runs a command as an exec probe would; resolves to its exit code. */
  exec(argv: string[], timeoutMs: number): Promise<number>;
}

/** The outcome of one probe, and why it failed. */
export interface ProbeOutcome {
  ok: boolean;
  message?: string;
}

function portOf(port: unknown, container: Obj): number {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(String(port))) return Number(port);
  const named = (container.ports ?? []).find((p: Obj) => p.name === port);
  return named?.containerPort ?? 0;
}

/** Runs a probe once. */
export async function probeOnce(probe: Obj, target: ProbeTarget): Promise<ProbeOutcome> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.exec) {
    const code = await target.exec(probe.exec.command ?? [], timeoutMs).catch(() => -1);
    return code === 0 ? { ok: true } : { ok: false, message: `command exited with ${code}` };
  }
  if (probe.httpGet) return httpProbe(probe.httpGet, target, timeoutMs);
  if (probe.tcpSocket) {
    const host = probe.tcpSocket.host || target.podIP;
    const port = portOf(probe.tcpSocket.port, target.container);
    return new Promise((resolve) => {
      const socket = connect({ host, port, timeout: timeoutMs });
      const done = (o: ProbeOutcome) => {
        socket.destroy();
        resolve(o);
      };
      socket.once('connect', () => done({ ok: true }));
      socket.once('timeout', () => done({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` }));
      socket.once('error', (err) => done({ ok: false, message: `dial tcp ${host}:${port}: ${err.message}` }));
    });
  }
  if (probe.grpc) {
    grpcModule ??= import('./grpc-probe.js');
    const { grpcProbe } = await grpcModule;
    return grpcProbe(target.podIP, Number(probe.grpc.port), probe.grpc.service ?? '', timeoutMs);
  }
  return { ok: false, message: 'the probe has no handler' };
}

function httpProbe(get: Obj, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
  const https = String(get.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
  const host = get.host || target.podIP;
  const port = portOf(get.port, target.container);
  const headers: Record<string, string> = { 'User-Agent': 'kube-probe/1.32', Accept: '*/*' };
  for (const h of get.httpHeaders ?? []) headers[h.name] = h.value;
  const url = `${https ? 'https' : 'http'}://${host}:${port}${get.path ?? '/'}`;
  return new Promise((resolve) => {
    const req = (https ? httpsRequest : httpRequest)(
      {
        host,
        port,
        path: get.path ?? '/',
        method: 'GET',
        headers,
        timeout: timeoutMs,
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(
          code >= 200 && code < 400
            ? { ok: true }
            : { ok: false, message: `HTTP probe failed with statuscode: ${code}` },
        );
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve({ ok: false, message: `Get "${url}": context deadline exceeded` });
    });
    req.on('error', (err) => resolve({ ok: false, message: `Get "${url}": ${err.message}` }));
    req.end();
  });
}

/** The container a worker probes, as the kubelet's status manager last saw it. */
export interface ProbeSubject {
  /** The current run: its id, whether it runs, when it started, and whether it has started (its startup probe passed). */
  current(): { id: string; running: boolean; startedAt: number; started: boolean } | undefined;
  /** Whether the container will not be run again once terminated (the pod's restartPolicy is Never). */
  neverRestarted(): boolean;
}

/**
 * One probe of one container, as the kubelet's worker (pkg/kubelet/prober/worker.go): created
 * with the pod, it lives across the container's runs and probes on a ticker of `periodSeconds`
 * started with it — after a random part of a period when the kubelet started less than a period
 * ago, as kube spreads the probes of a restarted kubelet — and when triggered (the kubelet
 * triggers a readiness probe whenever it writes the status of a started, unready container). A
 * probe is skipped while the run is younger than `initialDelaySeconds` (whole seconds), and,
 * but for the startup probe, until the run has started. Results go per run: readiness starts
 * failed, liveness succeeded, startup unknown; a result changes after `successThreshold`
 * successes or `failureThreshold` failures in a row; a failed liveness or startup probe holds
 * the worker until the next run.
 *
 * @example
 * ```ts
 * const w = new ProbeWorker('liveness', spec.livenessProbe, target, subject, (run, ok) => ok || restart(run), kubeletStart);
 * w.start(); // ... w.stop() when the pod goes
 * ```
 */
export class ProbeWorker {
  private ticker: NodeJS.Timeout | undefined;
  private jitter: NodeJS.Timeout | undefined;
  private stopped = false;
  private busy = false;
  /** A tick or trigger that came while probing (Go's channels hold one of each). */
  private pending = false;
  private runId: string | undefined;
  private lastResult: boolean | undefined;
  private resultRun = 0;
  private onHold = false;
  /** The result set for the current run (undefined: unknown). */
  result: boolean | undefined;

  constructor(
    readonly kind: ProbeKind,
    private readonly probe: Obj,
    private readonly target: ProbeTarget,
    private readonly subject: ProbeSubject,
    /** A run's result changed. */
    private readonly onChange: (runId: string, ok: boolean, message?: string) => void,
    /** When the kubelet started (ms since the epoch). */
    private readonly kubeletStart: number,
  ) {}

  private get periodMs(): number {
    return (this.probe.periodSeconds ?? 10) * 1000;
  }

  /** Starts the worker: its first probe now (or after the jitter of a freshly started kubelet), then every period. */
  start(): void {
    const period = this.periodMs;
    const begin = () => {
      this.jitter = undefined;
      if (this.stopped) return;
      this.ticker = setInterval(() => this.trigger(), period);
      this.ticker.unref();
      this.trigger();
    };
    if (Date.now() - this.kubeletStart < period) {
      this.jitter = setTimeout(begin, Math.random() * period);
      this.jitter.unref();
    } else begin();
  }

  /** Probes now (or right after the probe in flight), as the worker's manual trigger. */
  trigger(): void {
    if (this.stopped) return;
    if (this.busy) {
      this.pending = true;
      return;
    }
    // Before the first tick (the jitter), a trigger waits for it, as it would in the channel.
    if (this.jitter) return;
    this.busy = true;
    void this.doProbe()
      .then((keepGoing) => {
        if (!keepGoing) this.stop();
      })
      .finally(() => {
        this.busy = false;
        if (this.pending) {
          this.pending = false;
          this.trigger();
        }
      });
  }

  /** Stops probing (the pod goes, or its container will not run again). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.ticker);
    clearTimeout(this.jitter);
  }

  private set(runId: string, ok: boolean | undefined, message?: string): void {
    if (ok === this.result) return;
    this.result = ok;
    if (ok !== undefined) this.onChange(runId, ok, message);
  }

  /** One probe; whether the worker goes on. */
  private async doProbe(): Promise<boolean> {
    const run = this.subject.current();
    if (!run) return true;
    if (run.id !== this.runId) {
      // A new run: its result starts over from the initial value.
      this.runId = run.id;
      this.result = undefined;
      this.set(run.id, this.kind === 'readiness' ? false : this.kind === 'liveness' ? true : undefined);
      this.onHold = false;
      this.lastResult = undefined;
      this.resultRun = 0;
    }
    if (this.onHold) return true;
    if (!run.running) {
      this.set(run.id, false);
      return !this.subject.neverRestarted();
    }
    if (Math.floor((Date.now() - run.startedAt) / 1000) < (this.probe.initialDelaySeconds ?? 0)) return true;
    if (run.started ? this.kind === 'startup' : this.kind !== 'startup') return true;
    const outcome = await probeOnce(this.probe, this.target);
    if (this.stopped || this.subject.current()?.id !== run.id) return true;
    if (outcome.ok === this.lastResult) this.resultRun += 1;
    else {
      this.lastResult = outcome.ok;
      this.resultRun = 1;
    }
    const threshold = outcome.ok ? (this.probe.successThreshold ?? 1) : (this.probe.failureThreshold ?? 3);
    if (this.resultRun < threshold) return true;
    this.set(run.id, outcome.ok, outcome.message);
    if (this.kind !== 'readiness' && !outcome.ok) {
      // The container is killed; nothing more is probed until its next run.
      this.onHold = true;
      this.resultRun = 0;
    }
    return true;
  }
}
