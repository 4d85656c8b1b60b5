/**
 * What a container does besides running: its probes and lifecycle hooks (`validateHandler`,
 * `validateProbe`, `validateLifecycle`), and which containers may have them — regular containers
 * and restartable init containers (sidecars, `restartPolicy: Always`), not other init containers.
 */
import { regexError, type StatusCause } from 'kubeloop/api';
import {
  arr,
  dig,
  forbidden,
  GoValue,
  invalid,
  isObj,
  isSet,
  isValidPortName,
  isValidPortNum,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  str,
} from '../shared/util.js';

/** `validatePortNumOrName`: a probe's or handler's port, a number in range or an IANA service name. */
function validatePortNumOrName(port: unknown, path: string): StatusCause[] {
  if (typeof port === 'number') return isValidPortNum(port).map((m) => invalid(path, port, m));
  if (typeof port === 'string') return isValidPortName(port).map((m) => invalid(path, port, m));
  return [];
}

/** apimachinery `IsHTTPHeaderName`. */
const HTTP_HEADER = /^[-A-Za-z0-9]+$/;
const HTTP_HEADER_ERROR = regexError(
  "a valid HTTP header must consist of alphanumeric characters or '-'",
  '[-A-Za-z0-9]+',
  'X-Header-Name',
);

/** A probe's handlers, and a lifecycle hook's (which sleeps instead of calling gRPC). */
const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;
const HOOK_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'sleep'] as const;

/** `validateHandler`: exactly one handler type (the first wins, the others are refused). */
function validateHandler(
  handler: Obj,
  path: string,
  kinds: readonly ((typeof PROBE_HANDLERS)[number] | (typeof HOOK_HANDLERS)[number])[],
  grace?: number,
): StatusCause[] {
  const out: StatusCause[] = [];
  let handlers = 0;
  for (const kind of kinds) {
    const h = handler[kind];
    if (h === undefined || h === null) continue;
    if (handlers > 0) {
      out.push(forbidden(`${path}.${kind}`, 'may not specify more than 1 handler type'));
      continue;
    }
    handlers++;
    const hp = `${path}.${kind}`;
    if (kind === 'exec' && arr(dig(h, 'command')).length === 0) out.push(required(`${hp}.command`));
    if (kind === 'httpGet') {
      if (!str(dig(h, 'path'))) out.push(required(`${hp}.path`));
      out.push(...validatePortNumOrName(dig(h, 'port'), `${hp}.port`));
      const scheme = str(dig(h, 'scheme'));
      if (scheme && scheme !== 'HTTP' && scheme !== 'HTTPS')
        out.push(notSupported(`${hp}.scheme`, scheme, ['HTTP', 'HTTPS']));
      for (const header of objs(dig(h, 'httpHeaders'))) {
        const name = str(header.name);
        if (!HTTP_HEADER.test(name)) out.push(invalid(`${hp}.httpHeaders`, name, HTTP_HEADER_ERROR));
      }
    }
    if (kind === 'tcpSocket') out.push(...validatePortNumOrName(dig(h, 'port'), `${hp}.port`));
    if (kind === 'grpc') {
      const port = numOr(dig(h, 'port')) ?? 0;
      for (const m of isValidPortNum(port)) out.push(invalid(`${hp}.port`, port, m));
    }
    if (kind === 'sleep') {
      // validateSleepAction, without the AllowPodLifecycleSleepActionZeroValue gate (alpha in 1.32).
      const seconds = numOr(dig(h, 'seconds')) ?? 0;
      if (grace !== undefined && (seconds <= 0 || seconds > grace))
        out.push(
          invalid(
            hp,
            seconds,
            `must be greater than 0 and less than terminationGracePeriodSeconds (${grace}). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.`,
          ),
        );
    }
  }
  if (handlers === 0) out.push(required(path, 'must specify a handler type'));
  return out;
}

/** `validateProbe`: its handler and non-negative timings; a liveness or startup probe succeeds once. */
function validateProbe(
  probe: unknown,
  path: string,
  kind: 'liveness' | 'readiness' | 'startup',
): StatusCause[] {
  if (!isObj(probe)) return [];
  const out: StatusCause[] = [];
  if (kind === 'readiness' && isSet(probe.terminationGracePeriodSeconds))
    out.push(
      invalid(
        `${path}.terminationGracePeriodSeconds`,
        probe.terminationGracePeriodSeconds,
        'must not be set for readinessProbes',
      ),
    );
  out.push(...validateHandler(probe, path, PROBE_HANDLERS));
  for (const f of [
    'initialDelaySeconds',
    'timeoutSeconds',
    'periodSeconds',
    'successThreshold',
    'failureThreshold',
  ]) {
    const v = numOr(probe[f]);
    if (v !== undefined && v < 0) out.push(invalid(`${path}.${f}`, v, 'must be greater than or equal to 0'));
  }
  const grace = numOr(probe.terminationGracePeriodSeconds);
  if (grace !== undefined && grace <= 0)
    out.push(invalid(`${path}.terminationGracePeriodSeconds`, grace, 'must be greater than 0'));
  const success = numOr(probe.successThreshold);
  if (kind !== 'readiness' && success !== undefined && success !== 1)
    out.push(invalid(`${path}.successThreshold`, success, 'must be 1'));
  return out;
}

/** `validateLifecycle`: each hook one handler; a sleep within the pod's termination grace period. */
function validateLifecycle(lifecycle: unknown, path: string, grace: number | undefined): StatusCause[] {
  if (!isObj(lifecycle)) return [];
  const out: StatusCause[] = [];
  for (const hook of ['postStart', 'preStop'])
    if (isObj(lifecycle[hook]))
      out.push(...validateHandler(lifecycle[hook], `${path}.${hook}`, HOOK_HANDLERS, grace));
  return out;
}

const INIT_WITHOUT_ALWAYS = 'may not be set for init containers without restartPolicy=Always';

/**
 * A container's hooks and probes as its role allows them: validated for regular containers and
 * sidecars; forbidden for other init containers; a regular container has no restartPolicy.
 */
export function validateContainerHooks(
  c: Obj,
  path: string,
  grace: number | undefined,
  role: 'container' | 'init',
): StatusCause[] {
  const out: StatusCause[] = [];
  const set = (v: unknown) => v !== undefined && v !== null;
  if (role === 'init' && str(c.restartPolicy) !== 'Always') {
    for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'])
      if (set(c[f])) out.push(forbidden(`${path}.${f}`, INIT_WITHOUT_ALWAYS));
  } else {
    out.push(...validateLifecycle(c.lifecycle, `${path}.lifecycle`, grace));
    out.push(...validateProbe(c.livenessProbe, `${path}.livenessProbe`, 'liveness'));
    out.push(...validateProbe(c.readinessProbe, `${path}.readinessProbe`, 'readiness'));
    out.push(...validateProbe(c.startupProbe, `${path}.startupProbe`, 'startup'));
  }
  if (role === 'container' && set(c.restartPolicy))
    out.push(forbidden(`${path}.restartPolicy`, 'may not be set for non-init containers'));
  if (role === 'init' && Array.isArray(c.resizePolicy) && c.resizePolicy.length > 0)
    out.push(
      invalid(
        `${path}.resizePolicy`,
        new GoValue(
          `[]core.ContainerResizePolicy{${c.resizePolicy
            .map(
              (r: Obj) =>
                `core.ContainerResizePolicy{ResourceName:${JSON.stringify(str(r?.resourceName))}, RestartPolicy:${JSON.stringify(str(r?.restartPolicy))}}`,
            )
            .join(', ')}}`,
        ),
        'must not be set for init containers',
      ),
    );
  return out;
}

/** `validateInitContainerRestartPolicy`: an init container restarts only as a sidecar (`Always`). */
export function validateInitRestartPolicy(c: Obj, path: string): StatusCause[] {
  if (c.restartPolicy === undefined || c.restartPolicy === null) return [];
  const policy = str(c.restartPolicy);
  return policy === 'Always' ? [] : [notSupported(`${path}.restartPolicy`, policy, ['Always'])];
}
