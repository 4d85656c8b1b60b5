import { isIPv4, isIPv6 } from 'node:net';
import { ApiError, type StatusCause } from 'kubeloop/api';
import { collectionPrefix, type Store } from '../storage/store.js';
import { isObject, type Obj } from '../util/object.js';
import { GoValue, goStrings, invalid } from './shared/util.js';
import type { ResourceType } from './types.js';

/** The service cluster IP range: 10.96.0.0/12 (10.96.0.1 is the `kubernetes` Service). */
const FIRST = (10 << 24) | (96 << 16);
const SIZE = 1 << 20;
const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;

const CIDR = '10.96.0.0/12';

const ipToString = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
const ipToNumber = (ip: string) => ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);

/**
 * Allocates what the apiserver allocates for Services: a cluster IP (unless headless or
 * ExternalName) and node ports for NodePort/LoadBalancer services. Values stay on update.
 */
export function serviceAllocator(store: Store) {
  const used = (field: (svc: Obj) => unknown[]): Set<unknown> => {
    const set = new Set<unknown>();
    for (const s of store.list(collectionPrefix('', 'services')).items)
      for (const v of field(s.object as Obj)) set.add(v);
    return set;
  };
  return (t: ResourceType, obj: Obj, old: Obj | undefined, dryRun = false): void => {
    if (t.group !== '' || t.resource !== 'services') return;
    if (!isObject(obj.spec)) obj.spec = {};
    const spec = obj.spec as Obj;
    const oldSpec = old && isObject(old.spec) ? old.spec : undefined;
    const type = (spec.type as string | undefined) ?? 'ClusterIP';
    if (type === 'ExternalName') return;
    if ((spec.clusterIP === undefined || spec.clusterIP === '') && oldSpec?.clusterIP) {
      spec.clusterIP = oldSpec.clusterIP;
      spec.clusterIPs = oldSpec.clusterIPs;
    }
    // A cluster IP or node port the client chose is allocated as asked, or refused as the
    // allocators refuse it (out of range, taken, a family the cluster does not have).
    const refused: StatusCause[] = [];
    const chosen = typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
    if (chosen && chosen !== 'None' && !oldSpec?.clusterIP) {
      const ips = Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0 ? spec.clusterIPs : [chosen];
      const shown = new GoValue(goStrings(ips));
      const fail = (why: string) =>
        refused.push(invalid('spec.clusterIPs', shown, `failed to allocate IP ${chosen}: ${why}`));
      if (isIPv6(chosen)) {
        refused.push(invalid('spec.clusterIPs[0]', shown, 'IPv6 is not configured on this cluster'));
      } else if (isIPv4(chosen)) {
        const offset = ipToNumber(chosen) - (FIRST >>> 0);
        if (offset < 0 || offset >= SIZE) {
          fail(`the provided IP (${chosen}) is not in the valid range. The range of valid IPs is ${CIDR}`);
        } else if (used((o) => [isObject(o.spec) ? o.spec.clusterIP : undefined]).has(chosen)) {
          fail('provided IP is already allocated');
        }
      }
    }
    if (type === 'NodePort' || type === 'LoadBalancer') {
      const oldPorts = new Set(
        (Array.isArray(oldSpec?.ports) ? (oldSpec.ports as Obj[]) : []).map((p) => p.nodePort),
      );
      let taken: Set<unknown> | undefined;
      (Array.isArray(spec.ports) ? spec.ports : []).forEach((port, i) => {
        const nodePort = isObject(port) ? port.nodePort : undefined;
        if (typeof nodePort !== 'number' || nodePort === 0 || oldPorts.has(nodePort)) return;
        const field = `spec.ports[${i}].nodePort`;
        // A dry run's port allocation only looks for a port taken (PortAllocationOperation's dry
        // run), so a port out of the range passes it, as in kube.
        if (!dryRun && (nodePort < NODE_PORT_MIN || nodePort > NODE_PORT_MAX)) {
          refused.push(
            invalid(
              field,
              nodePort,
              `provided port is not in the valid range. The range of valid ports is ${NODE_PORT_MIN}-${NODE_PORT_MAX}`,
            ),
          );
          return;
        }
        taken ??= used((o) =>
          isObject(o.spec) && Array.isArray(o.spec.ports)
            ? o.spec.ports.map((p) => (isObject(p) ? p.nodePort : undefined))
            : [],
        );
        if (taken.has(nodePort)) refused.push(invalid(field, nodePort, 'provided port is already allocated'));
        taken.add(nodePort);
      });
    }
    if (refused.length > 0) {
      const name = isObject(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : '';
      throw ApiError.invalid({ group: '', kind: 'Service' }, name, refused);
    }
    if ((spec.clusterIP === undefined || spec.clusterIP === '') && dryRun) {
      // kube's dry-run allocation does not look for a free address: it answers the range's own.
      spec.clusterIP = ipToString(FIRST);
    } else if (spec.clusterIP === undefined || spec.clusterIP === '') {
      const taken = used((s) => [isObject(s.spec) ? s.spec.clusterIP : undefined]);
      let ip: string | undefined;
      for (let i = 10; i < SIZE - 1; i++) {
        const candidate = ipToString(FIRST + i);
        if (!taken.has(candidate)) {
          ip = candidate;
          break;
        }
      }
      if (!ip) throw ApiError.internal('failed to allocate a serviceIP: range is full');
      spec.clusterIP = ip;
    }
    if (!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0) spec.clusterIPs = [spec.clusterIP];
    if ((type === 'NodePort' || type === 'LoadBalancer') && Array.isArray(spec.ports)) {
      const taken = used((s) =>
        isObject(s.spec) && Array.isArray(s.spec.ports)
          ? s.spec.ports.map((p) => (isObject(p) ? p.nodePort : undefined))
          : [],
      );
      const oldPorts = Array.isArray(oldSpec?.ports) ? (oldSpec.ports as Obj[]) : [];
      let next = NODE_PORT_MIN;
      // A dry run's ports (PortAllocationOperation's dry run): one above the highest this request
      // took, starting above 32768, whatever is free.
      const dryTaken: number[] = [];
      for (const port of spec.ports) {
        if (!isObject(port)) continue;
        if (port.nodePort) {
          if (typeof port.nodePort === 'number') dryTaken.push(port.nodePort);
          continue;
        }
        const previous = oldPorts.find((p) => p.port === port.port && p.protocol === port.protocol)?.nodePort;
        if (previous) {
          port.nodePort = previous;
          continue;
        }
        if (dryRun) {
          port.nodePort = (dryTaken.length > 0 ? Math.max(...dryTaken) : 32768) + 1;
          dryTaken.push(port.nodePort as number);
          continue;
        }
        while (next <= NODE_PORT_MAX && taken.has(next)) next++;
        if (next > NODE_PORT_MAX) throw ApiError.internal('failed to allocate a nodePort: range is full');
        port.nodePort = next;
        taken.add(next);
      }
    }
  };
}
