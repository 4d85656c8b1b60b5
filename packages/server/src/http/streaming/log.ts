/**
 * `pods/log`: kube-apiserver's checks (`LogLocation`), then the kubelet's
 * (`validateContainerLogStatus`), then the container's output as plain text, streamed while it
 * runs with `follow`.
 */
import { ApiError } from 'kubeloop/api';
import type { ContainerInstance, LogLine, SimulatedRuntime } from '../../controllers/kubelet/runtime.js';
import type { ConnectHandler } from '../handlers/connect.js';
import type { StreamingDeps } from './deps.js';
import { boolParam, containerStatus, getPod, type PodObject, validateContainer } from './pod-target.js';

/** The options of a log request (`PodLogOptions`). */
interface LogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  since?: number;
}

function integer(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n))
    throw ApiError.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  return n;
}

function parseOptions(query: URLSearchParams): LogOptions {
  const tailLines = integer(query, 'tailLines');
  const limitBytes = integer(query, 'limitBytes');
  const sinceSeconds = integer(query, 'sinceSeconds');
  const sinceTime = query.get('sinceTime');
  const causes: Array<{ field: string; message: string }> = [];
  if (tailLines !== undefined && tailLines < 0)
    causes.push({
      field: 'tailLines',
      message: `Invalid value: ${tailLines}: must be greater than or equal to 0`,
    });
  if (limitBytes !== undefined && limitBytes < 1)
    causes.push({ field: 'limitBytes', message: `Invalid value: ${limitBytes}: must be greater than 0` });
  if (sinceSeconds !== undefined && sinceTime)
    causes.push({ field: '', message: 'at most one of `sinceTime` or `sinceSeconds` may be specified' });
  if (sinceSeconds !== undefined && sinceSeconds < 1)
    causes.push({ field: 'sinceSeconds', message: `Invalid value: ${sinceSeconds}: must be greater than 0` });
  if (causes.length > 0) {
    const text = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ');
    throw new ApiError({
      code: 422,
      reason: 'Invalid',
      message: `PodLogOptions "" is invalid: ${causes.length > 1 ? `[${text}]` : text}`,
      details: {
        kind: 'PodLogOptions',
        causes: causes.map((c) => ({ reason: 'FieldValueInvalid', message: c.message, field: c.field })),
      },
    });
  }
  let since: number | undefined;
  if (sinceSeconds !== undefined) since = Date.now() - sinceSeconds * 1000;
  if (sinceTime) {
    since = Date.parse(sinceTime);
    if (Number.isNaN(since))
      throw ApiError.badRequest(
        `parsing time ${JSON.stringify(sinceTime)} as "2006-01-02T15:04:05Z07:00": cannot parse`,
      );
  }
  return {
    follow: boolParam(query, 'follow'),
    previous: boolParam(query, 'previous'),
    timestamps: boolParam(query, 'timestamps'),
    ...(tailLines !== undefined && { tailLines }),
    ...(limitBytes !== undefined && { limitBytes }),
    ...(since !== undefined && { since }),
  };
}

/**
 * The instance whose output a request reads, by the kubelet's rules: the previous one with
 * `previous`, else the running or terminated one, else the last terminated one. Undefined when
 * the status says there is one the simulation never started (no output).
 */
function selectInstance(
  runtime: SimulatedRuntime | undefined,
  pod: PodObject,
  container: string,
  previous: boolean,
): ContainerInstance | undefined {
  const podName = String(pod.metadata?.name ?? '');
  const q = (s: string) => JSON.stringify(s);
  const s = containerStatus(pod, container);
  if (!s)
    throw ApiError.badRequest(
      `container ${q(container)} in pod ${q(podName)} is waiting to start: ContainerCreating`,
    );
  const state = s.state ?? {};
  const last = s.lastState?.terminated;
  const instances = runtime?.find(String(pod.metadata?.uid ?? ''), container)?.instances ?? [];
  const newest = instances[instances.length - 1];
  if (previous) {
    if (!last)
      throw ApiError.badRequest(
        `previous terminated container ${q(container)} in pod ${q(podName)} not found`,
      );
    return state.running || state.terminated ? instances[instances.length - 2] : newest;
  }
  if (state.running || state.terminated || last) return newest;
  if (state.waiting) {
    const reason = String(state.waiting.reason ?? '');
    const why =
      reason === 'ErrImagePull'
        ? "image can't be pulled"
        : reason === 'ImagePullBackOff'
          ? 'trying and failing to pull image'
          : reason;
    throw ApiError.badRequest(`container ${q(container)} in pod ${q(podName)} is waiting to start: ${why}`);
  }
  throw ApiError.badRequest(
    `container ${q(container)} in pod ${q(podName)} is waiting to start - no logs yet`,
  );
}

/** Go's RFC3339Nano: trailing zeros of the fraction dropped. */
function rfc3339Nano(d: Date): string {
  const iso = d.toISOString();
  const frac = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 19)}${frac ? `.${frac}` : ''}Z`;
}

/** The handler of `pods/log`. */
export function logHandler(deps: StreamingDeps): ConnectHandler {
  return async ({ req, res, namespace, name, query, verb }) => {
    req.resume();
    if (verb !== 'get') throw methodNotAllowed();
    const opts = parseOptions(query);
    const pod = getPod(deps.rest, deps.registry, namespace, name);
    const container = validateContainer(pod, query.get('container') ?? '');
    const headers = { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' };
    if (!pod.spec?.nodeName) {
      // A pod no node runs has no log location: an empty stream.
      res.writeHead(200, headers);
      res.end();
      return;
    }
    const instance = selectInstance(deps.runtime(), pod, container, opts.previous);
    res.writeHead(200, { ...headers, 'Transfer-Encoding': 'chunked' });
    if (!instance) {
      res.end();
      return;
    }
    let budget = opts.limitBytes ?? Number.POSITIVE_INFINITY;
    const format = (l: LogLine) => (opts.timestamps ? `${rfc3339Nano(l.time)} ${l.text}` : l.text);
    const emit = (text: string): boolean => {
      const bytes = Buffer.from(text, 'utf8');
      const out = bytes.length > budget ? bytes.subarray(0, budget) : bytes;
      budget -= out.length;
      if (out.length > 0) res.write(out);
      return budget > 0;
    };
    let lines = instance.lines.filter((l) => opts.since === undefined || l.time.getTime() >= opts.since);
    if (opts.tailLines !== undefined) lines = opts.tailLines === 0 ? [] : lines.slice(-opts.tailLines);
    let open = emit(lines.map(format).join(''));
    if (!opts.follow || !open || instance.finished) {
      res.end();
      return;
    }
    const stop = instance.follow((line) => {
      if (!open) return;
      open = line !== undefined && emit(format(line));
      if (!open) {
        stop();
        res.end();
      }
    });
    res.on('close', () => {
      open = false;
      stop();
    });
  };
}

function methodNotAllowed(): ApiError {
  return new ApiError({
    code: 405,
    reason: 'MethodNotAllowed',
    message: 'the server does not allow this method on the requested resource',
    details: {},
  });
}
