import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from '../http/api-server.js';

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
  const peer = socket.getPeerCertificate();
  const cn = first(peer?.subject?.CN);
  if (!cn) return undefined;
  const orgs = peer.subject.O;
  const groups = orgs === undefined ? [] : Array.isArray(orgs) ? orgs : [orgs];
  return { username: cn, groups: [...groups, 'system:authenticated'] };
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
