/**
 * `pods/exec` and `pods/attach`: kube-apiserver's checks, then the kubelet's side with the
 * remote-command protocols over a WebSocket (./remotecommand-websocket.ts) or SPDY/3.1
 * (./remotecommand-spdy.ts), one session logic for both (./remotecommand.ts): an exec runs a simulated program in the
 * container; an attach streams the container's output from now on.
 */
import { ApiError } from 'kubeloop/api';
import type { ContainerInstance, SimulatedRuntime } from '../../controllers/kubelet/runtime.js';
import type { ConnectHandler, ConnectRequest } from '../handlers/connect.js';
import type { StreamingDeps } from './deps.js';
import { boolParam, containerStatus, getPod, type PodObject, validateContainer } from './pod-target.js';
import {
  Channel,
  REMOTE_COMMAND_PROTOCOLS,
  type RemoteCommandSession,
  type StreamOptions,
} from './remotecommand.js';
import { acceptSpdyRemoteCommand, isSpdyRequest, negotiateSpdyProtocol } from './remotecommand-spdy.js';
import { webSocketSession } from './remotecommand-websocket.js';
import {
  acceptWebSocket,
  checkHandshake,
  isWebSocketRequest,
  rejectUpgrade,
  WebSocketHandshakeError,
} from './websocket.js';

/** The handler of `pods/exec` (`kind: 'exec'`) or `pods/attach`. */
export function remoteCommandHandler(deps: StreamingDeps, kind: 'exec' | 'attach'): ConnectHandler {
  return async (r) => {
    const pod = getPod(deps.rest, deps.registry, r.namespace, r.name);
    const container = validateContainer(pod, r.query.get('container') ?? '');
    const node = pod.spec?.nodeName as string | undefined;
    if (!node) throw ApiError.badRequest(`pod ${r.name} does not have a host assigned`);
    if (!r.upgrade) {
      r.req.resume();
      throw ApiError.badRequest('Upgrade request required');
    }
    const options: StreamOptions = {
      stdin: boolParam(r.query, 'stdin'),
      stdout: boolParam(r.query, 'stdout'),
      stderr: boolParam(r.query, 'stderr'),
      tty: boolParam(r.query, 'tty'),
    };
    const runtime = deps.runtime();
    if (!runtime || !deps.hasKubelet(node))
      throw ApiError.internal(`error dialing backend: no kubelet serves node "${node}"`);
    if (!options.stdin && !options.stdout && !options.stderr) {
      // The kubelet's own check, answered as plain text like its other errors.
      rejectUpgrade(r.upgrade.socket, 400, 'you must specify at least 1 of stdin, stdout, stderr');
      return;
    }
    const running = containerStatus(pod, container)?.state?.running !== undefined;
    const instance = runtime.find(String(pod.metadata?.uid ?? ''), container)?.current;
    const attachable = kind === 'exec' ? running : running && instance !== undefined && !instance.finished;
    if (!isWebSocketRequest(r.req)) {
      // SPDY/3.1 (client-go's SPDY executor, kubectl's fallback): kubelet looks the container up
      // before its streaming server negotiates the protocol.
      if (!attachable) {
        rejectUpgrade(r.upgrade.socket, 500, `container not found (${JSON.stringify(container)})`);
        return;
      }
      const protocol = negotiateSpdyProtocol(r.req, r.upgrade.socket);
      if (protocol === undefined) return;
      if (!isSpdyRequest(r.req)) {
        // kubelet also prints the request's headers here; they would carry the caller's token back.
        rejectUpgrade(r.upgrade.socket, 400, 'unable to upgrade: missing upgrade headers in request\n');
        return;
      }
      // kubelet's NewOptions: a terminal has no separate stderr stream.
      const spdyOptions = { ...options, stderr: options.stderr && !options.tty };
      const session = await acceptSpdyRemoteCommand(r.upgrade, protocol, spdyOptions);
      if (session) await serveSession(kind, runtime, pod, container, r, session, deps);
      return;
    }
    let protocol: string | undefined;
    try {
      protocol = checkHandshake(r.req, { protocols: REMOTE_COMMAND_PROTOCOLS }).protocol;
    } catch (err) {
      if (!(err instanceof WebSocketHandshakeError)) throw err;
      // golang.org/x/net/websocket answers a subprotocol it does not speak with a bare 403.
      rejectUpgrade(
        r.upgrade.socket,
        err.status === 400 && /protocol/.test(err.message) ? 403 : err.status,
        '',
        err.headers,
      );
      return;
    }
    if (!attachable) {
      const message = `container not found (${JSON.stringify(container)})`;
      if (protocol !== 'v5.channel.k8s.io') {
        rejectUpgrade(r.upgrade.socket, 500, message);
        return;
      }
      // kube-apiserver's v5 translator accepted the WebSocket before its SPDY call to the kubelet failed.
      const ws = acceptWebSocket(r.req, r.upgrade.socket, r.upgrade.head, {
        protocols: REMOTE_COMMAND_PROTOCOLS,
      });
      if (ws)
        webSocketSession(ws, options).finish(ApiError.internal(`unable to upgrade connection: ${message}`));
      return;
    }
    const ws = acceptWebSocket(r.req, r.upgrade.socket, r.upgrade.head, {
      protocols: REMOTE_COMMAND_PROTOCOLS,
    });
    if (!ws) return;
    await serveSession(kind, runtime, pod, container, r, webSocketSession(ws, options), deps);
  };
}

/** Runs the exec, or streams the attach, on a session whichever transport carries it. */
async function serveSession(
  kind: 'exec' | 'attach',
  runtime: SimulatedRuntime,
  pod: PodObject,
  container: string,
  r: ConnectRequest,
  session: RemoteCommandSession,
  deps: StreamingDeps,
): Promise<void> {
  if (kind === 'exec') await runExec(runtime, pod, container, r, session, deps);
  else attach(runtime, pod, container, session);
}

async function runExec(
  runtime: SimulatedRuntime,
  pod: PodObject,
  container: string,
  r: ConnectRequest,
  session: RemoteCommandSession,
  deps: StreamingDeps,
): Promise<void> {
  const command = r.query.getAll('command');
  try {
    const outcome = await runtime.exec(pod, container, {
      command,
      signal: session.signal,
      tty: session.options.tty,
      terminal: { size: () => session.terminalSize, onResize: (l) => session.onResize(l) },
      io: {
        stdin: session.stdin,
        stdout: (d) => session.write(Channel.stdout, Buffer.from(d)),
        stderr: (d) => session.write(Channel.stderr, Buffer.from(d)),
      },
    });
    session.finish(outcome, command);
  } catch (err) {
    deps.log?.('error', 'simulated exec failed', { err: err instanceof Error ? err.stack : String(err) });
    session.finish(ApiError.internal(`error executing command in container: ${String(err)}`), command);
  }
}

function attach(
  runtime: SimulatedRuntime,
  pod: PodObject,
  container: string,
  session: RemoteCommandSession,
): void {
  const instance = runtime.find(String(pod.metadata?.uid ?? ''), container)?.current;
  if (!instance) {
    session.finish({ exitCode: 0 });
    return;
  }
  const ephemeral = (pod.spec?.ephemeralContainers ?? []).find(
    (c: { name?: string }) => c.name === container,
  );
  if (ephemeral && !instance.commandRan) {
    runEphemeral(runtime, pod, container, ephemeral, instance, session);
    return;
  }
  const stop = instance.follow((line) => {
    if (line) session.write(line.stream === 'stdout' ? Channel.stdout : Channel.stderr, line.text);
    else session.finish({ exitCode: 0 });
  });
  session.signal.addEventListener('abort', stop, { once: true });
  // What the client types goes to the container's stdin: a process-backed container's, or
  // nowhere (a simulated process never reads it).
  void (async () => {
    for await (const chunk of session.stdin.chunks()) instance.input?.(chunk);
    instance.closeInput?.();
  })();
}

/**
 * kubectl debug's session: a simulated ephemeral container runs its command (its image's shell
 * when it has none) as the first attach starts, over the session's streams, its output also in
 * the container's log; the container ends with it.
 */
function runEphemeral(
  runtime: SimulatedRuntime,
  pod: PodObject,
  container: string,
  spec: { command?: string[]; args?: string[] },
  instance: ContainerInstance,
  session: RemoteCommandSession,
): void {
  instance.commandRan = true;
  const given = [...(spec.command ?? []), ...(spec.args ?? [])];
  const command = given.length > 0 ? given : ['sh'];
  void runtime
    .exec(pod, container, {
      command,
      signal: session.signal,
      tty: session.options.tty,
      terminal: { size: () => session.terminalSize, onResize: (l) => session.onResize(l) },
      io: {
        stdin: session.stdin,
        stdout: (d) => {
          session.write(Channel.stdout, Buffer.from(d));
          instance.write('stdout', Buffer.from(d).toString('utf8'));
        },
        stderr: (d) => {
          session.write(Channel.stderr, Buffer.from(d));
          instance.write('stderr', Buffer.from(d).toString('utf8'));
        },
      },
    })
    .then(
      // An attach ends with the container's streams; the kubelet reports no exit code for it.
      () => session.finish({ exitCode: 0 }, command),
      (err: unknown) =>
        session.finish(ApiError.internal(`error executing command in container: ${String(err)}`), command),
    )
    .finally(() => instance.end());
}
