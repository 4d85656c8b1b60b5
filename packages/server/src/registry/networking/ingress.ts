/**
 * The registry entry of `Ingress` (networking.k8s.io/v1 `ingresses`): its resource type and
 * validation, printer columns.
 */
import { isWildcardDNS1123Subdomain, type StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { networkingKind } from '../shared/define.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  dig,
  ensureObj,
  GoValue,
  invalid,
  isDNS1035Label,
  isDNS1123Subdomain,
  isObj,
  isValidPortName,
  isValidPortNum,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, NET, nameOf, validateTypedReference } from './shared.js';

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];
// ---------------------------------------------------------------------------------------------
// Ingresses
/** `validateIngressBackend`. */
function validateBackend(backend: unknown, path: string): StatusCause[] {
  const b = isObj(backend) ? backend : {};
  const out: StatusCause[] = [];
  const resource = b.resource;
  const service = b.service;
  if (isObj(resource) && isObj(service))
    return [invalid(path, '', 'cannot set both resource and service backends')];
  if (isObj(resource)) {
    return validateTypedReference(resource, `${path}.resource`);
  }
  if (!isObj(service)) return [invalid(path, '', 'resource or service backend is required')];
  const name = str(service.name);
  if (!name) out.push(required(`${path}.service.name`));
  else for (const msg of isDNS1035Label(name)) out.push(invalid(`${path}.service.name`, name, msg));
  const portName = str(dig(service, 'port', 'name'));
  const portNumber = numOr(dig(service, 'port', 'number')) ?? 0;
  if (portName && portNumber !== 0) out.push(invalid(path, '', 'cannot set both port name & port number'));
  else if (portName)
    for (const msg of isValidPortName(portName))
      out.push(invalid(`${path}.service.port.name`, portName, msg));
  else if (portNumber !== 0)
    for (const msg of isValidPortNum(portNumber))
      out.push(invalid(`${path}.service.port.number`, portNumber, msg));
  else out.push(required(path, 'port name or number is required'));
  return out;
}
/** `validateHTTPIngressPath`. */
function validatePath(p: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const type = p.pathType;
  if (typeof type !== 'string') return [required(`${path}.pathType`, 'pathType must be specified')];
  const value = str(p.path);
  if (type === 'Exact' || type === 'Prefix') {
    if (!value.startsWith('/')) out.push(invalid(`${path}.path`, value, 'must be an absolute path'));
    if (value.length > 0) {
      for (const seq of INVALID_PATH_SEQUENCES)
        if (value.includes(seq)) out.push(invalid(`${path}.path`, value, `must not contain '${seq}'`));
      for (const suffix of INVALID_PATH_SUFFIXES)
        if (value.endsWith(suffix)) out.push(invalid(`${path}.path`, value, `cannot end with '${suffix}'`));
    }
  } else if (type === 'ImplementationSpecific') {
    if (value.length > 0 && !value.startsWith('/'))
      out.push(invalid(`${path}.path`, value, 'must be an absolute path'));
  } else out.push(notSupported(`${path}.pathType`, type, PATH_TYPES));
  out.push(...validateBackend(p.backend, `${path}.backend`));
  return out;
}
/**
 * A rule's host (`ip` set: never an IP address) or a TLS entry's: a DNS subdomain, or with a `*`
 * a wildcard one.
 */
function validateHost(host: string, path: string, ip: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  if (ip && (/^[0-9.]+$/.test(host) || host.includes(':')))
    out.push(invalid(path, host, 'must be a DNS name, not an IP address'));
  const check = host.includes('*') ? isWildcardDNS1123Subdomain : isDNS1123Subdomain;
  for (const msg of check(host)) out.push(invalid(path, host, msg));
  return out;
}
/** `ValidateIngressSpec`. */
function validateIngress(obj: Obj, old?: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const out: StatusCause[] = [];
  const rules = objs(spec.rules);
  if (rules.length === 0 && !isObj(spec.defaultBackend)) {
    out.push(
      invalid(
        'spec',
        new GoValue(
          Array.isArray(spec.rules) ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)',
        ),
        'either `defaultBackend` or `rules` must be specified',
      ),
    );
  }
  if (isObj(spec.defaultBackend)) out.push(...validateBackend(spec.defaultBackend, 'spec.defaultBackend'));
  rules.forEach((rule, i) => {
    const path = `spec.rules[${i}]`;
    const host = str(rule.host);
    if (host) out.push(...validateHost(host, `${path}.host`, true));
    if (isObj(rule.http)) {
      const paths = objs(rule.http.paths);
      if (paths.length === 0) out.push(required(`${path}.http.paths`));
      paths.forEach((p, j) => {
        out.push(...validatePath(p, `${path}.http.paths[${j}]`));
      });
    }
  });
  // A TLS secret name must be a Secret's, unless the old object already had one that is not.
  const badSecret = (o: Obj | undefined) =>
    objs(dig(o, 'spec', 'tls')).some(
      (t) => str(t.secretName) && isDNS1123Subdomain(str(t.secretName)).length > 0,
    );
  const allowBadSecret = badSecret(old);
  objs(spec.tls).forEach((tls, i) => {
    strs(tls.hosts).forEach((h, j) => {
      out.push(...validateHost(h, `spec.tls[${i}].hosts[${j}]`, false));
    });
    const secret = str(tls.secretName);
    if (!allowBadSecret)
      for (const msg of secret ? isDNS1123Subdomain(secret) : [])
        out.push(invalid(`spec.tls[${i}].secretName`, secret, msg));
  });
  const className = spec.ingressClassName;
  if (typeof className === 'string')
    for (const msg of isDNS1123Subdomain(className))
      out.push(invalid('spec.ingressClassName', className, msg));
  // ValidateIngressCreate: the legacy class annotation must agree with the field.
  const annotation = dig(obj, 'metadata', 'annotations', 'kubernetes.io/ingress.class');
  if (!old && typeof annotation === 'string' && typeof className === 'string' && annotation !== className)
    out.push(
      invalid(
        'annotations.kubernetes.io/ingress.class',
        annotation,
        'must match `ingressClassName` when both are specified',
      ),
    );
  return out;
}
/** printers.go `formatHosts`: up to three hosts, `*` when none. */
function formatHosts(rules: Obj[]): string {
  const list = rules.map((r) => str(r.host)).filter((h) => h !== '');
  if (list.length === 0) return '*';
  if (rules.length > 3) return `${list.slice(0, 3).join(',')} + ${rules.length - 3} more...`;
  return list.join(',');
}
/** The load balancer's IPs and hostnames. */
function loadBalancerAddresses(status: unknown): string {
  return objs(dig(status, 'loadBalancer', 'ingress'))
    .map((i) => str(i.ip) || str(i.hostname))
    .filter((a) => a !== '')
    .join(',');
}
const ingresses: KindBehaviour = {
  /** `status.loadBalancer` is a struct: Go always writes it. */
  defaults(obj) {
    ensureObj(ensureObj(obj, 'status'), 'loadBalancer');
  },
  validate: validateIngress,
  columns: [
    nameColumn(),
    col('Class', 'string', fieldDoc(`${NET}.IngressSpec`, 'ingressClassName')),
    col('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule'),
    col('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
    col('Ports', 'string', 'Ports of TLS configurations that open'),
    ageColumn(),
  ],
  row: (obj, now) => {
    const spec = isObj(obj.spec) ? obj.spec : {};
    return [
      nameOf(obj),
      typeof spec.ingressClassName === 'string' ? spec.ingressClassName : '<none>',
      formatHosts(objs(spec.rules)),
      loadBalancerAddresses(obj.status),
      objs(spec.tls).length > 0 ? '80, 443' : '80',
      ageOf(obj, now),
    ];
  },
};

/** `Ingress` (networking.k8s.io/v1 `ingresses`): how the registry serves, validates and prints it. */
export const ingressKind: ResourceType = networkingKind({
  statusStrategy: specStatusStrategy,
  behaviour: ingresses,
  resource: 'ingresses',
  kind: 'Ingress',
  shortNames: ['ing'],
  generation: true,
  subresources: { status: true },
});
