/**
 * The registry entry of `Endpoints` (core/v1 `endpoints`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { validateIP, validateNonSpecialIP } from '../shared/ip-validation.js';
import {
  def,
  int,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidPortNum,
  notSupported,
  type Obj,
  objs,
  required,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { age, nameOf, PROTOCOLS } from './shared.js';

// ---------------------------------------------------------------------------------------------
// Endpoints
const joinHostPort = (ip: string, port: number): string =>
  ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
/** printers.go `formatEndpoints`: up to three `ip:port`, then `+ N more...`. */
function formatEndpoints(obj: Obj): string {
  const subsets = objs(obj.subsets);
  if (subsets.length === 0) return '<none>';
  const list: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const ss of subsets) {
    const addresses = objs(ss.addresses);
    const ports = objs(ss.ports);
    if (ports.length === 0) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(str(a.ip));
      }
      continue;
    }
    for (const p of ports) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(joinHostPort(str(a.ip), int(p.port)));
      }
    }
  }
  const ret = list.join(',');
  return more ? `${ret} + ${count - max} more...` : ret;
}
const endpoints: KindBehaviour = {
  defaults(obj) {
    for (const ss of objs(obj.subsets)) for (const p of objs(ss.ports)) def(p, 'protocol', 'TCP');
  },
  validate(obj) {
    const out: StatusCause[] = [];
    objs(obj.subsets).forEach((ss, i) => {
      const sp = `subsets[${i}]`;
      if (objs(ss.addresses).length === 0 && objs(ss.notReadyAddresses).length === 0) {
        out.push(required(sp, 'must specify `addresses` or `notReadyAddresses`'));
      }
      for (const list of ['addresses', 'notReadyAddresses'] as const) {
        objs(ss[list]).forEach((a, j) => {
          const ap = `${sp}.${list}[${j}]`;
          // validateEndpointAddress: IsValidIP, hostname, node name, then ValidateNonSpecialIP.
          const ip = str(a.ip);
          out.push(...validateIP(ip, `${ap}.ip`));
          const host = str(a.hostname);
          if (host) for (const m of isDNS1123Label(host)) out.push(invalid(`${ap}.hostname`, host, m));
          const node = str(a.nodeName);
          if (node) for (const m of isDNS1123Subdomain(node)) out.push(invalid(`${ap}.nodeName`, node, m));
          out.push(...validateNonSpecialIP(ip, `${ap}.ip`, true));
        });
      }
      const ports = objs(ss.ports);
      ports.forEach((p, j) => {
        const pp = `${sp}.ports[${j}]`;
        const name = str(p.name);
        if (ports.length > 1 && !name) out.push(required(`${pp}.name`));
        else if (name) for (const m of isDNS1123Label(name)) out.push(invalid(`${pp}.name`, name, m));
        for (const m of isValidPortNum(int(p.port))) out.push(invalid(`${pp}.port`, int(p.port), m));
        const proto = str(p.protocol);
        if (!proto) out.push(required(`${pp}.protocol`));
        else if (!PROTOCOLS.includes(proto)) out.push(notSupported(`${pp}.protocol`, proto, PROTOCOLS));
        if (typeof p.appProtocol === 'string')
          for (const m of isQualifiedName(p.appProtocol))
            out.push(invalid(`${pp}.appProtocol`, p.appProtocol, m));
      });
    });
    return out;
  },
  columns: [nameColumn(), col('Endpoints', 'string', docs.endpoints.subsets), ageColumn()],
  row: (obj, now) => [nameOf(obj), formatEndpoints(obj), age(obj, now)],
};

/** `Endpoints` (core/v1 `endpoints`): how the registry serves, validates and prints it. */
export const endpointsKind: ResourceType = coreKind({
  behaviour: endpoints,
  resource: 'endpoints',
  kind: 'Endpoints',
  singular: 'endpoints',
  listKind: 'EndpointsList',
  shortNames: ['ep'],
});
