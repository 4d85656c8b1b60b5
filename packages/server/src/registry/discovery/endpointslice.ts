/** discovery.k8s.io/v1 EndpointSlices. */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { dig, immutable, invalid, notSupported, objs, required, since, str, strs } from '../shared/util.js';
import type { ResourceType } from '../types.js';

const ADDRESS_TYPES = ['IPv4', 'IPv6', 'FQDN'];
const MAX_ENDPOINTS = 1000;
const MAX_PORTS = 100;
const MAX_ADDRESSES = 100;

/** `listWithMoreString` of printers.go: at most three items, then `+ N more...`. */
function listWithMore(items: string[], max = 3): string {
  const shown = items.slice(0, max).join(',');
  if (items.length > max) return `${shown} + ${items.length - max} more...`;
  return shown === '' ? '<unset>' : shown;
}

const endpointslices: KindBehaviour = {
  validate(obj, old) {
    const out: StatusCause[] = [];
    const addressType = obj.addressType;
    if (addressType === undefined || addressType === null || addressType === '')
      out.push(required('addressType'));
    else if (!ADDRESS_TYPES.includes(str(addressType)))
      out.push(notSupported('addressType', addressType, ADDRESS_TYPES));
    const endpoints = objs(obj.endpoints);
    if (endpoints.length > MAX_ENDPOINTS)
      out.push({
        reason: 'FieldValueTooMany',
        message: `endpoints: Too many: ${endpoints.length}: must have at most ${MAX_ENDPOINTS} items`,
        field: 'endpoints',
      });
    endpoints.forEach((ep, i) => {
      const addresses = strs(ep.addresses);
      if (addresses.length === 0)
        out.push(required(`endpoints[${i}].addresses`, 'must contain at least 1 address'));
      else if (addresses.length > MAX_ADDRESSES)
        out.push(
          invalid(`endpoints[${i}].addresses`, addresses, `must contain at most ${MAX_ADDRESSES} addresses`),
        );
    });
    const ports = objs(obj.ports);
    if (ports.length > MAX_PORTS)
      out.push({
        reason: 'FieldValueTooMany',
        message: `ports: Too many: ${ports.length}: must have at most ${MAX_PORTS} items`,
        field: 'ports',
      });
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
