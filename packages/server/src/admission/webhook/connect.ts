/**
 * Admission of CONNECT requests (`pods/exec`, `pods/attach`, `pods/portforward`), as kube's
 * connect handler admits them before it streams: the webhooks see operation CONNECT, the
 * request's options (PodExecOptions, PodAttachOptions, PodPortForwardOptions, as kube decodes
 * them from the query) as the object, and may deny the request. Only the webhook plugins run here;
 * the server's other admission plugins have nothing to say about a CONNECT.
 */
import { currentAuditAnnotations } from '../../audit/context.js';
import type { ConnectHandler, ConnectRequest } from '../../http/handlers/connect.js';
import type { Registry } from '../../registry/registry.js';
import type { Obj } from '../../util/object.js';
import type { AdmissionOptions } from '../options.js';
import type { WebhookAdmission } from './index.js';

const truthy = (q: URLSearchParams, k: string) => q.get(k) === 'true' || q.get(k) === '1';

/** The options object of a connect request, as kube's versioned `*Options` kinds serialize. */
function connectOptions(subresource: string, q: URLSearchParams): Obj {
  const flags = (names: string[]) =>
    Object.fromEntries(names.filter((n) => truthy(q, n)).map((n) => [n, true] as const));
  const container = q.get('container') ? { container: q.get('container') } : {};
  switch (subresource) {
    case 'exec':
      return {
        kind: 'PodExecOptions',
        apiVersion: 'v1',
        ...flags(['stdin', 'stdout', 'stderr', 'tty']),
        ...container,
        command: q.getAll('command'),
      };
    case 'attach':
      return {
        kind: 'PodAttachOptions',
        apiVersion: 'v1',
        ...flags(['stdin', 'stdout', 'stderr', 'tty']),
        ...container,
      };
    default: {
      const ports = q
        .getAll('ports')
        .flatMap((p) => p.split(','))
        .map(Number);
      return { kind: 'PodPortForwardOptions', apiVersion: 'v1', ...(ports.length > 0 && { ports }) };
    }
  }
}

/** `handlers` with the webhooks admitting each CONNECT before it is served. */
export function admitConnect(
  webhooks: WebhookAdmission | undefined,
  registry: Registry,
  handlers: Record<string, ConnectHandler>,
): Record<string, ConnectHandler> {
  if (!webhooks) return handlers;
  const pods = registry.lookup('', 'v1', 'pods');
  if (!pods) return handlers;
  const out = { ...handlers };
  for (const subresource of ['exec', 'attach', 'portforward']) {
    const serve = handlers[`pods/${subresource}`];
    if (!serve) continue;
    out[`pods/${subresource}`] = async (r: ConnectRequest) => {
      const obj = connectOptions(subresource, r.query);
      const options: AdmissionOptions = {
        subresource,
        name: r.name,
        namespace: r.namespace,
        kind: { group: '', version: 'v1', kind: String(obj.kind) },
        ...(r.user && { user: r.user }),
        auditAnnotations: currentAuditAnnotations(),
      };
      await webhooks.mutate('CONNECT', pods, obj, undefined, options);
      await webhooks.validate('CONNECT', pods, obj, undefined, options);
      await serve(r);
    };
  }
  return out;
}
