/**
 * The kubelet's probes of a process-backed container (pkg/kubelet/prober): one worker per probe
 * and container run, probing every `periodSeconds` after `initialDelaySeconds`, reporting a
 * change only after `successThreshold` successes or `failureThreshold` failures in a row. HTTP
 * (2xx and 3xx succeed), TCP (a connection succeeds) and exec (exit code 0 succeeds) probes.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';

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
  return { ok: false, message: 'grpc probes are not run for process-backed pods' };
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

/**
 * One probe of one container run, as the kubelet's worker: it reports the probe's result when
 * the thresholds make it change. The readiness result starts as failed; the others as
 * unknown, reported on their first result.
 *
 * @example
 * ```ts
 * const w = new ProbeWorker('liveness', spec.livenessProbe, target, (ok, why) => ok || restart(why));
 * w.start(); // ... w.stop() when the container exits
 * ```
 */
export class ProbeWorker {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private last: boolean | undefined;
  private run = 0;
  private reported: boolean | undefined;

  constructor(
    readonly kind: ProbeKind,
    private readonly probe: Obj,
    private readonly target: ProbeTarget,
    private readonly onChange: (ok: boolean, message?: string) => void,
  ) {}

  /** Starts probing after the initial delay. */
  start(): void {
    this.schedule((this.probe.initialDelaySeconds ?? 0) * 1000);
  }

  /** Stops probing (the container exited, or a liveness failure is killing it). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const outcome = await probeOnce(this.probe, this.target);
    if (this.stopped) return;
    if (outcome.ok === this.last) this.run += 1;
    else {
      this.last = outcome.ok;
      this.run = 1;
    }
    const threshold = outcome.ok ? (this.probe.successThreshold ?? 1) : (this.probe.failureThreshold ?? 3);
    if (this.run >= threshold && this.reported !== outcome.ok) {
      this.reported = outcome.ok;
      this.onChange(outcome.ok, outcome.message);
    }
    // A startup probe stops once it succeeded; a failed liveness or startup probe's container is killed.
    if (this.kind === 'startup' && this.reported === true) return;
    if (this.kind !== 'readiness' && this.reported === false) return;
    this.schedule((this.probe.periodSeconds ?? 10) * 1000);
  }
}
