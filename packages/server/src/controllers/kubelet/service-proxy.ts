/**
 * A kube-proxy for process-backed pods: each ClusterIP Service `10.a.b.c` gets the loopback
 * address `127.a.b.c` (Linux routes all of 127.0.0.0/8 to `lo`), listening on the Service's TCP
 * ports; a connection there goes to one of the Service's ready endpoints that is a process-backed
 * pod (a loopback pod IP), round robin, on the endpoint's port. With no such endpoint the
 * connection is closed, as kube-proxy rejects a Service without endpoints.
 *
 * So another process on this machine reaches a Service of process-backed pods at the mapped
 * address (e.g. 10.96.12.34:80 at 127.96.12.34:80), and the pods by its DNS name (the preload of
 * ./pod-files.ts resolves `<service>.<namespace>.svc.cluster.local` to that address, there being
 * no cluster DNS server). Ports below 1024 need the privilege to bind
 * them; where it is missing that port is skipped (silently: the `kubernetes` Service's 443 is one)
 * and only the endpoints serve it.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Client } from 'kubeloop/client';
import { Endpoints, Service } from 'kubeloop/client';
import { type ControllerDefinition, controller } from 'kubeloop/runtime';
import type { ControllerLog } from '../log.js';

/**
 * What a Service's cluster DNS name resolves to for process-backed pods: the loopback twin of its
 * ClusterIP (where this proxy listens), or, for an ExternalName Service, the external name.
 * Headless Services (no ClusterIP) have none.
 */
export type ClusterName = { address: string } | { cname: string };

/** The loopback address of a ClusterIP (IPv4 in 10.0.0.0/8), or undefined. */
export function loopbackOf(clusterIP: string | undefined): string | undefined {
  const m = /^10\.(\d+)\.(\d+)\.(\d+)$/.exec(clusterIP ?? '');
  return m ? `127.${m[1]}.${m[2]}.${m[3]}` : undefined;
}

const isLoopback = (ip: string | undefined) => /^127\./.test(ip ?? '');

/**
 * The proxy's controller of Services (give it to the manager) and its stop.
 *
 * @example
 * ```ts
 * const proxy = serviceProxy(client, log);
 * manager.add(proxy.controller);
 * // ... await proxy.stop();
 * ```
 */
export function serviceProxy(
  client: Client,
  log: ControllerLog,
  /** Told the cluster DNS names of the Services whenever they change (see {@link ClusterName}). */
  onNames?: (names: Record<string, ClusterName>) => void,
): { controller: ControllerDefinition<Service>; stop(): Promise<void> } {
  /** Listeners by Service key, then `address:port`. */
  const listeners = new Map<string, Map<string, Server>>();
  /** `<name>.<namespace>.svc.cluster.local` of each Service by its key. */
  const names = new Map<string, [string, ClusterName]>();
  const setName = (key: string, entry: [string, ClusterName] | undefined) => {
    const before = JSON.stringify(names.get(key));
    if (entry) names.set(key, entry);
    else names.delete(key);
    if (JSON.stringify(entry) !== before) onNames?.(Object.fromEntries(names.values()));
  };
  let next = 0;

  const forward = async (socket: Socket, ns: string, name: string, portName: string | undefined) => {
    socket.on('error', () => undefined);
    try {
      const ep = await client.api(Endpoints, ns).get(name);
      const targets: { ip: string; port: number }[] = [];
      for (const subset of ep.subsets ?? []) {
        const port = (subset.ports ?? []).find((p) => (p.name ?? '') === (portName ?? ''))?.port;
        if (port === undefined) continue;
        for (const a of subset.addresses ?? []) if (isLoopback(a.ip)) targets.push({ ip: a.ip, port });
      }
      const target = targets[next++ % Math.max(1, targets.length)];
      if (!target) {
        socket.destroy();
        return;
      }
      const upstream = connect(target.port, target.ip);
      upstream.on('error', () => socket.destroy());
      socket.on('close', () => upstream.destroy());
      upstream.on('close', () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
    } catch {
      socket.destroy();
    }
  };

  const close = (key: string, keep: Set<string> = new Set()) => {
    const byAddress = listeners.get(key);
    if (!byAddress) return;
    for (const [addr, server] of byAddress)
      if (!keep.has(addr)) {
        server.close();
        byAddress.delete(addr);
      }
    if (byAddress.size === 0) listeners.delete(key);
  };

  const definition = controller(Service)
    .named('kubeloop-service-proxy')
    .onGone((req) => {
      close(`${req.namespace}/${req.name}`);
      setName(`${req.namespace}/${req.name}`, undefined);
    })
    .reconcile(async (svc) => {
      const ns = svc.metadata?.namespace ?? 'default';
      const name = svc.metadata?.name ?? '';
      const key = `${ns}/${name}`;
      const address = svc.spec?.type === 'ExternalName' ? undefined : loopbackOf(svc.spec?.clusterIP);
      const fqdn = `${name}.${ns}.svc.cluster.local`;
      if (svc.spec?.type === 'ExternalName' && svc.spec.externalName)
        setName(key, [fqdn, { cname: svc.spec.externalName }]);
      else setName(key, address ? [fqdn, { address }] : undefined);
      const wanted = new Map<string, string | undefined>();
      if (address)
        for (const p of svc.spec?.ports ?? [])
          if ((p.protocol ?? 'TCP') === 'TCP') wanted.set(`${address}:${p.port}`, p.name);
      close(key, new Set(wanted.keys()));
      let byAddress = listeners.get(key);
      for (const [addr, portName] of wanted) {
        if (byAddress?.has(addr)) continue;
        const server = createServer((s) => void forward(s, ns, name, portName));
        const [host, port] = [
          addr.slice(0, addr.lastIndexOf(':')),
          Number(addr.slice(addr.lastIndexOf(':') + 1)),
        ];
        const bound = await new Promise<boolean>((resolve) => {
          server.once('error', (err: NodeJS.ErrnoException) => {
            // A port below 1024 without the privilege is expected (the `kubernetes` Service's 443): not worth a warning.
            if (err.code !== 'EACCES')
              log('warn', 'the service proxy cannot listen for a Service', {
                service: key,
                address: addr,
                err: String(err),
              });
            resolve(false);
          });
          server.listen(port, host, () => resolve(true));
        });
        if (!bound) continue;
        server.unref();
        byAddress ??= new Map();
        listeners.set(key, byAddress);
        byAddress.set(addr, server);
      }
      return undefined;
    });
  return {
    controller: definition,
    async stop() {
      for (const key of [...listeners.keys()]) close(key);
    },
  };
}
