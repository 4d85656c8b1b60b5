/** networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies: defaults, validation, printers. */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from './types.js';
import {
  dig,
  ensureObj,
  formatLabelSelector,
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
  since,
  str,
  strs,
  validateLabelSelector,
} from './util.js';

const NET = 'io.k8s.api.networking.v1';
const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];

const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
const ageOf = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);

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
    if (!str(resource.kind)) out.push(required(`${path}.resource.kind`));
    if (!str(resource.name)) out.push(required(`${path}.resource.name`));
    return out;
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

/** A rule's or TLS entry's host: a DNS subdomain, optionally with a leading `*.`, never an IP. */
function validateHost(host: string, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (/^[0-9.]+$/.test(host) || host.includes(':'))
    out.push(invalid(path, host, 'must be a DNS name, not an IP address'));
  if (host.startsWith('*.')) {
    for (const msg of isDNS1123Subdomain(host.slice(2))) out.push(invalid(path, host, msg));
  } else {
    for (const msg of isDNS1123Subdomain(host)) out.push(invalid(path, host, msg));
  }
  return out;
}

/** `ValidateIngressSpec`. */
function validateIngress(obj: Obj): StatusCause[] {
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
    if (host) out.push(...validateHost(host, `${path}.host`));
    if (isObj(rule.http)) {
      const paths = objs(rule.http.paths);
      if (paths.length === 0) out.push(required(`${path}.http.paths`));
      paths.forEach((p, j) => {
        out.push(...validatePath(p, `${path}.http.paths[${j}]`));
      });
    }
  });
  objs(spec.tls).forEach((tls, i) => {
    strs(tls.hosts).forEach((h, j) => {
      out.push(...validateHost(h, `spec.tls[${i}].hosts[${j}]`));
    });
  });
  const className = spec.ingressClassName;
  if (typeof className === 'string')
    for (const msg of isDNS1123Subdomain(className))
      out.push(invalid('spec.ingressClassName', className, msg));
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

// ---------------------------------------------------------------------------------------------
// IngressClasses

/** `validateIngressClassSpec`: a domain-prefixed controller name of at most 250 characters. */
function validateIngressClass(obj: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const out: StatusCause[] = [];
  const controller = str(spec.controller);
  if (!controller) out.push(required('spec.controller'));
  else {
    if (controller.length > 250)
      out.push({
        reason: 'FieldValueTooLong',
        field: 'spec.controller',
        message: 'Too long: may not be more than 250 bytes',
      });
    const slash = controller.indexOf('/');
    const domain = slash < 0 ? controller : controller.slice(0, slash);
    if (slash < 0 || slash === controller.length - 1)
      out.push(
        invalid('spec.controller', controller, 'must be a domain-prefixed path (such as "acme.io/foo")'),
      );
    for (const msg of isDNS1123Subdomain(domain)) out.push(invalid('spec.controller', domain, msg));
  }
  const params = spec.parameters;
  if (isObj(params)) {
    if (!str(params.kind)) out.push(required('spec.parameters.kind'));
    if (!str(params.name)) out.push(required('spec.parameters.name'));
    const scope = params.scope;
    if (scope !== undefined && scope !== 'Cluster' && scope !== 'Namespace')
      out.push(notSupported('spec.parameters.scope', scope, ['Cluster', 'Namespace']));
    if (scope === 'Namespace' && !str(params.namespace))
      out.push(required('spec.parameters.namespace', '`parameters.scope` is set to "Namespace"'));
  }
  return out;
}

const ingressclasses: KindBehaviour = {
  validate: validateIngressClass,
  columns: [
    nameColumn(),
    col('Controller', 'string', fieldDoc(`${NET}.IngressClassSpec`, 'controller')),
    col('Parameters', 'string', fieldDoc(`${NET}.IngressClassSpec`, 'parameters')),
    ageColumn(),
  ],
  row: (obj, now) => {
    const params = dig(obj, 'spec', 'parameters');
    let parameters = '<none>';
    if (isObj(params)) {
      const kind = str(params.apiGroup) ? `${str(params.kind)}.${str(params.apiGroup)}` : str(params.kind);
      parameters = `${kind}/${str(params.name)}`;
    }
    return [nameOf(obj), str(dig(obj, 'spec', 'controller')), parameters, ageOf(obj, now)];
  },
};

// ---------------------------------------------------------------------------------------------
// NetworkPolicies

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const POLICY_TYPES = ['Egress', 'Ingress'];

/** `SetDefaults_NetworkPolicy` and `SetDefaults_NetworkPolicyPort`. */
function defaultNetworkPolicy(obj: Obj): void {
  const spec = ensureObj(obj, 'spec');
  ensureObj(spec, 'podSelector');
  for (const dir of ['ingress', 'egress'])
    for (const rule of objs(spec[dir]))
      for (const port of objs(rule.ports)) if (!str(port.protocol)) port.protocol = 'TCP';
  if (strs(spec.policyTypes).length === 0) {
    spec.policyTypes = objs(spec.egress).length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

function validateNetworkPolicy(obj: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const out = validateLabelSelector(spec.podSelector ?? {}, 'spec.podSelector');
  for (const [dir, peers] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    objs(spec[dir]).forEach((rule, i) => {
      objs(rule.ports).forEach((port, j) => {
        const path = `spec.${dir}[${i}].ports[${j}]`;
        const protocol = str(port.protocol);
        if (protocol && !PROTOCOLS.includes(protocol))
          out.push(notSupported(`${path}.protocol`, protocol, PROTOCOLS));
        const p = port.port;
        if (typeof p === 'number')
          for (const msg of isValidPortNum(p)) out.push(invalid(`${path}.port`, p, msg));
        else if (typeof p === 'string')
          for (const msg of isValidPortName(p)) out.push(invalid(`${path}.port`, p, msg));
        const end = numOr(port.endPort);
        if (end !== undefined) {
          if (p === undefined || p === null)
            out.push(required(`${path}.port`, 'must specify when endPort is specified'));
          else if (typeof p === 'string')
            out.push({
              reason: 'FieldValueForbidden',
              field: `${path}.endPort`,
              message: 'Forbidden: may not be specified when `port` is non-numeric',
            });
          else if (typeof p === 'number' && end < p)
            out.push(invalid(`${path}.endPort`, end, 'must be greater than or equal to `port`'));
        }
      });
      objs(rule[peers]).forEach((peer, j) => {
        const path = `spec.${dir}[${i}].${peers}[${j}]`;
        const set = ['podSelector', 'namespaceSelector', 'ipBlock'].filter((k) => isObj(peer[k]));
        if (set.length === 0) out.push(required(path, 'must specify a peer'));
        if (isObj(peer.ipBlock) && set.length > 1)
          out.push({
            reason: 'FieldValueForbidden',
            field: path,
            message: 'Forbidden: may not specify both ipBlock and another peer',
          });
        if (isObj(peer.ipBlock) && !str(peer.ipBlock.cidr)) out.push(required(`${path}.ipBlock.cidr`));
      });
    });
  }
  const types = strs(spec.policyTypes);
  for (const t of types)
    if (!POLICY_TYPES.includes(t)) out.push(notSupported('spec.policyTypes', t, POLICY_TYPES));
  if (types.length > 2)
    out.push(
      invalid(
        'spec.policyTypes',
        new GoValue(`[]networking.PolicyType{${types.map((t) => JSON.stringify(t)).join(', ')}}`),
        'may not specify more than two policyTypes',
      ),
    );
  return out;
}

const networkpolicies: KindBehaviour = {
  defaults: defaultNetworkPolicy,
  validate: validateNetworkPolicy,
  columns: [
    nameColumn(),
    col('Pod-Selector', 'string', fieldDoc(`${NET}.NetworkPolicySpec`, 'podSelector')),
    ageColumn(),
  ],
  row: (obj, now) => [
    nameOf(obj),
    formatLabelSelector(dig(obj, 'spec', 'podSelector') ?? {}),
    ageOf(obj, now),
  ],
};

/** networking.k8s.io/v1 behaviours, keyed by plural resource. */
export const networkingBehaviours: Record<string, KindBehaviour> = {
  ingresses,
  ingressclasses,
  networkpolicies,
};
