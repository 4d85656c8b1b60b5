/**
 * Where port-forwarded connections go: the pluggable target, the simulated default (a refusal in
 * containerd's words), and the copy loop that every protocol of ./portforward.ts shares.
 */
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Obj } from '../../util/object.js';

/** One connection to forward: to `port` of `pod`. */
export interface PortForwardConnection {
  /** The pod as stored. */
  pod: Obj;
  namespace: string;
  name: string;
  uid: string;
  port: number;
  /** Aborted when the client goes away before the target answered. */
  signal: AbortSignal;
}

/**
 * Connects a forwarded connection to the pod's port: resolves to a duplex byte stream (e.g. a
 * `net.Socket` to a local process); to undefined when nothing backs this pod (it is then refused
 * as by {@link simulatedPortForwardTarget}); or rejects with the runtime's error, whose message the
 * client receives after `error forwarding port <port> to pod <sandbox id>, uid : `, as from a
 * kubelet.
 *
 * @example
 * ```ts
 * // Port 8080 of the pod `api` is a local process; every other port is refused.
 * const target: PortForwardTarget = async ({ name, port }) => {
 *   if (name !== 'api' || port !== 8080) return undefined;
 *   const socket = net.connect(8080, '127.0.0.1');
 *   await once(socket, 'connect');
 *   return socket;
 * };
 * await startControlPlane({ portForward: target });
 * ```
 */
export type PortForwardTarget = (connection: PortForwardConnection) => Promise<Duplex | undefined>;

/** The CRI pod sandbox id of a simulated pod: 64 hex digits, stable for its uid. */
export function sandboxIdOf(pod: Obj): string {
  return createHash('sha256')
    .update(`sandbox/${uidOf(pod)}`)
    .digest('hex');
}

/** The network namespace a CNI plugin would have made for the pod's sandbox. */
export function networkNamespaceOf(pod: Obj): string {
  const h = createHash('sha256')
    .update(`netns/${uidOf(pod)}`)
    .digest('hex');
  return `/var/run/netns/cni-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * The default target: nothing listens in a simulated pod, so every connection is refused with
 * containerd's words (its `portForward` dials localhost over IPv4, then IPv6, inside the sandbox's
 * network namespace).
 */
export const simulatedPortForwardTarget: PortForwardTarget = async (c) => refuse(c);

async function refuse({ pod, port }: PortForwardConnection): Promise<never> {
  throw new Error(
    `failed to execute portforward in network namespace ${JSON.stringify(networkNamespaceOf(pod))}: ` +
      `failed to connect to localhost:${port} inside namespace ${JSON.stringify(sandboxIdOf(pod))}, ` +
      `IPv4: dial tcp4 127.0.0.1:${port}: connect: connection refused ` +
      `IPv6 dial tcp6 [::1]:${port}: connect: connection refused `,
  );
}

/** How long containerd lets the pod side answer after the client's end of input. */
const CLOSE_GRACE_MS = 1000;

/** The kubelet's report of a failed forward, as it writes it on the error stream. */
export function forwardErrorMessage(pod: Obj, port: number, err: unknown): string {
  const why = err instanceof Error ? err.message : String(err);
  // The CRI streaming server knows the sandbox, not the pod's uid: hence `uid ` and nothing.
  return `error forwarding port ${port} to pod ${sandboxIdOf(pod)}, uid : ${why}`;
}

/**
 * Forwards one connection: bytes of `data` (the client's stream) to the target and back, the
 * client's end of input ending the target's (which then has a second to finish, as in
 * containerd), the target's end ending `data`. A refused target is reported through
 * `reportError`. Resolves when the forward is over.
 */
export async function forwardConnection(o: {
  target: PortForwardTarget;
  pod: Obj;
  port: number;
  data: Duplex;
  reportError: (message: string) => void;
}): Promise<void> {
  const { pod, port, data } = o;
  const abort = new AbortController();
  const onDataClose = () => abort.abort();
  data.once('close', onDataClose);
  let conn: Duplex;
  try {
    const meta = (pod.metadata ?? {}) as Obj;
    const connection: PortForwardConnection = {
      pod,
      namespace: String(meta.namespace ?? ''),
      name: String(meta.name ?? ''),
      uid: uidOf(pod),
      port,
      signal: abort.signal,
    };
    conn = (await o.target(connection)) ?? (await refuse(connection));
  } catch (err) {
    data.off('close', onDataClose);
    if (!data.destroyed) o.reportError(forwardErrorMessage(pod, port, err));
    return;
  }
  data.off('close', onDataClose);
  if (data.destroyed) {
    conn.destroy();
    return;
  }
  await new Promise<void>((resolve) => {
    let failed = false;
    conn.on('error', (err) => {
      // A connection that breaks after it was made: containerd reports the copy's failure.
      if (failed) return;
      failed = true;
      if (!data.destroyed && !data.writableEnded)
        o.reportError(
          forwardErrorMessage(
            pod,
            port,
            new Error(
              `failed to execute portforward for ${JSON.stringify(sandboxIdOf(pod))} port ${port}: ${err.message}`,
            ),
          ),
        );
    });
    data.on('error', () => conn.destroy());
    conn.pipe(data);
    data.pipe(conn);
    let grace: NodeJS.Timeout | undefined;
    data.once('end', () => {
      // The client sent all it will (pipe ends the target's input). containerd gives the other
      // direction a second more, then closes both: so does this.
      grace = setTimeout(() => conn.destroy(), CLOSE_GRACE_MS);
      grace.unref();
    });
    conn.once('close', () => {
      clearTimeout(grace);
      if (!data.writableEnded && !data.destroyed) data.end();
      resolve();
    });
    data.once('close', () => conn.destroy());
  });
}

function uidOf(pod: Obj): string {
  return String(((pod.metadata ?? {}) as Obj).uid ?? '');
}
