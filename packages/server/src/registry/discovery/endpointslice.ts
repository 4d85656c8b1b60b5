/** discovery.k8s.io/v1 EndpointSlices. */
import { fieldErrors, type StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { validateIPOfFamily, validateNonSpecialIP } from '../shared/ip-validation.js';
import {
  dig,
  duplicate,
  immutable,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  notSupported,
  type Obj,
  objs,
  required,
  since,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const MAX_ENDPOINTS = 1000;
const MAX_PORTS = 20000;
const MAX_ADDRESSES = 100;

/** `listWithMoreString` of printers.go: at most three items, then `+ N more...`. */
function listWithMore(items: string[], max = 3): string {
  const shown = items.slice(0, max).join(',');
  if (items.length > max) return `${shown} + ${items.length - max} more...`;
  return shown === '' ? '<unset>' : shown;
}

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** `validateEndpoints`: addresses of the slice's type, node names, hostnames, zones. */
function validateEndpoints(endpoints: Obj[], addressType: string): StatusCause[] {
  if (endpoints.length > MAX_ENDPOINTS)
    return [fieldErrors.tooMany('endpoints', endpoints.length, MAX_ENDPOINTS)];
  const out: StatusCause[] = [];
  endpoints.forEach((ep, i) => {
    const p = `endpoints[${i}]`;
    const addresses = strs(ep.addresses);
    if (addresses.length === 0) out.push(required(`${p}.addresses`, 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES)
      out.push(fieldErrors.tooMany(`${p}.addresses`, addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, j) => {
      const ap = `${p}.addresses[${j}]`;
      if (addressType === 'IPv4' || addressType === 'IPv6') {
        out.push(...validateIPOfFamily(a, ap, addressType === 'IPv6'), ...validateNonSpecialIP(a, ap, true));
      } else if (addressType === 'FQDN') {
        for (const m of isDNS1123Subdomain(a)) out.push(invalid(ap, a, m));
      }
    });
    if (typeof ep.nodeName === 'string')
      for (const m of isDNS1123Subdomain(ep.nodeName)) out.push(invalid(`${p}.nodeName`, ep.nodeName, m));
    if (typeof ep.hostname === 'string')
      for (const m of isDNS1123Label(ep.hostname)) out.push(invalid(`${p}.hostname`, ep.hostname, m));
  });
  return out;
}

/** `validatePorts`: unique DNS-label names, a known protocol, a qualified appProtocol. */
function validatePorts(ports: Obj[]): StatusCause[] {
  if (ports.length > MAX_PORTS) return [fieldErrors.tooMany('ports', ports.length, MAX_PORTS)];
  const out: StatusCause[] = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const p = `ports[${i}]`;
    const name = str(port.name);
    if (name) for (const m of isDNS1123Label(name)) out.push(invalid(`${p}.name`, name, m));
    if (names.has(name)) out.push(duplicate(`${p}.name`, name));
    else names.add(name);
    const protocol = str(port.protocol);
    if (!protocol) out.push(required(`${p}.protocol`));
    else if (!PROTOCOLS.includes(protocol)) out.push(notSupported(`${p}.protocol`, protocol, PROTOCOLS));
    if (typeof port.appProtocol === 'string')
      for (const m of isQualifiedName(port.appProtocol))
        out.push(invalid(`${p}.appProtocol`, port.appProtocol, m));
  });
  return out;
}

const endpointslices: KindBehaviour = {
  defaults(obj) {
    // EndpointConditions is a struct: Go always writes it.
    for (const ep of objs(obj.endpoints))
      if (ep.conditions === undefined || ep.conditions === null) ep.conditions = {};
    for (const p of objs(obj.ports)) {
      if (p.protocol === undefined || p.protocol === null) p.protocol = 'TCP';
      if (p.name === undefined || p.name === null) p.name = '';
    }
  },
  validate(obj, old) {
    const out: StatusCause[] = [];
    const addressType = obj.addressType;
    if (addressType === undefined || addressType === null || addressType === '')
      out.push(required('addressType'));
    else if (!ADDRESS_TYPES.includes(str(addressType)))
      out.push(notSupported('addressType', addressType, ADDRESS_TYPES));
    out.push(...validateEndpoints(objs(obj.endpoints), str(addressType)), ...validatePorts(objs(obj.ports)));
    if (old) out.push(...immutable('addressType', obj.addressType, old.addressType));
    return out;
  },
  columns: [
    nameColumn(),
    col(
      'AddressType',
      'string',
      'addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.',
    ),
    col(
      'Ports',
      'string',
      'ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates "all ports". Each slice may include a maximum of 100 ports.',
    ),
    col(
      'Endpoints',
      'string',
      'endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.',
    ),
    ageColumn(),
  ],
  row(obj, now) {
    const ports = objs(obj.ports).map((p) =>
      typeof p.port === 'number' ? String(p.port) : typeof p.name === 'string' ? p.name : '*',
    );
    const endpoints = objs(obj.endpoints);
    const addresses = endpoints.flatMap((ep) => strs(ep.addresses));
    return [
      str(dig(obj, 'metadata', 'name')),
      str(obj.addressType),
      listWithMore(ports),
      endpoints.length === 0 ? '<unset>' : listWithMore(addresses),
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
    ];
  },
};

/** `EndpointSlice` (discovery.k8s.io/v1 `endpointslices`): how the registry serves, validates and prints it. */
export const endpointSliceKind: ResourceType = defineKind({
  behaviour: endpointslices,
  group: 'discovery.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.discovery.v1',
  resource: 'endpointslices',
  kind: 'EndpointSlice',
  generation: true,
});
