/** discovery.k8s.io/v1 EndpointSlices. */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from './types.js';
import { dig, immutable, invalid, isObj, notSupported, objs, required, since, str, strs } from './util.js';

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

/** discovery.k8s.io/v1 behaviours, keyed by plural resource. */
export const discoveryBehaviours: Record<string, KindBehaviour> = { endpointslices };

/** apps/v1 ControllerRevisions: the history of DaemonSets and StatefulSets. */
const controllerrevisions: KindBehaviour = {
  validate(obj, old) {
    const out: StatusCause[] = [];
    if (obj.data === undefined || obj.data === null) out.push(required('data'));
    if (typeof obj.revision === 'number' && obj.revision < 0)
      out.push(invalid('revision', obj.revision, 'must be greater than or equal to 0'));
    if (old) out.push(...immutable('data', obj.data, old.data));
    return out;
  },
  columns: [
    nameColumn(),
    col('Controller', 'string', 'Controller of the object'),
    col('Revision', 'string', 'Revision indicates the revision of the state represented by Data.'),
    ageColumn(),
  ],
  row(obj, now) {
    const ref = objs(dig(obj, 'metadata', 'ownerReferences')).find((r) => r.controller === true);
    let controller = '<none>';
    if (isObj(ref)) {
      const apiVersion = str(ref.apiVersion);
      const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
      controller = `${str(ref.kind).toLowerCase()}${group ? `.${group}` : ''}/${str(ref.name)}`;
    }
    return [
      str(dig(obj, 'metadata', 'name')),
      controller,
      typeof obj.revision === 'number' ? obj.revision : 0,
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
    ];
  },
};

/** The apps/v1 behaviours defined here, keyed by plural resource. */
export const controllerRevisionBehaviours: Record<string, KindBehaviour> = { controllerrevisions };
