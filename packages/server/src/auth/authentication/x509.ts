import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from './user.js';

/**
 * kube-apiserver's x509 authenticator: a client certificate that chains to the cluster CA
 * names the user (subject CN) and its groups (subject O). Returns undefined when the client
 * sent no certificate or one the CA did not sign, so that the next authenticator (bearer
 * token) gets its chance, as kube-apiserver's union authenticator does.
 */
export function authenticateClientCertificate(req: IncomingMessage): UserInfo | undefined {
  const socket = req.socket as TLSSocket;
  // Verification happened in the handshake (requestCert without rejectUnauthorized): only read the verdict.
  if (typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined;
  // A connection keeps its certificate: read it once, not on every request of the connection.
  const known = byConnection.get(socket);
  if (known !== undefined) return known ?? undefined;
  const user = userOf(socket);
  byConnection.set(socket, user ?? null);
  return user;
}

/** The user of each connection with a verified client certificate (null: the certificate names none). */
const byConnection = new WeakMap<TLSSocket, Readonly<UserInfo> | null>();

function userOf(socket: TLSSocket): UserInfo | undefined {
  const peer = socket.getPeerCertificate();
  const cn = first(peer?.subject?.CN);
  if (!cn) return undefined;
  const orgs = peer.subject.O;
  const groups = orgs === undefined ? [] : Array.isArray(orgs) ? orgs : [orgs];
  return Object.freeze({
    username: cn,
    groups: Object.freeze([...groups, 'system:authenticated']) as string[],
  });
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * Whether the client sent a certificate that did not verify against the cluster CA: kube's x509
 * authenticator answers it with an error (a 401 unless another credential authenticates).
 */
export function presentedUnverifiedCertificate(req: IncomingMessage): boolean {
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function' || socket.authorized) return false;
  const peer = socket.getPeerCertificate();
  return peer !== null && typeof peer === 'object' && Object.keys(peer).length > 0;
}
