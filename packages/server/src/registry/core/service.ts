/**
 * The registry entry of `Service` (core/v1 `services`): its resource type and
 * defaults, validation, printer columns, field selectors.
 */
import { isIP } from 'node:net';
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  arr,
  def,
  dig,
  duplicate,
  ensureObj,
  forbidden,
  formatLabels,
  GoValue,
  goQuote,
  goStrings,
  int,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isObj,
  isQualifiedName,
  isValidPortName,
  isValidPortNum,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  str,
  strMap,
  strs,
  validateLabels,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { dropTypeDependentFields, externallyAccessible, validateServiceRules } from './service-rules.js';
import { age, nameOf, PROTOCOLS } from './shared.js';

// ---------------------------------------------------------------------------------------------
// Services
const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
/**
 * `clusterIP` and `clusterIPs` as ValidateService checks them once PrepareForCreate has copied
 * the one into the other: the first of the list is the single field, and each is an IP or `None`.
 */
function validateClusterIPs(spec: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const single = str(spec.clusterIP);
  const ips = strs(spec.clusterIPs).length > 0 ? strs(spec.clusterIPs) : single ? [single] : [];
  if (single && ips[0] !== single) {
    out.push(invalid('spec.clusterIPs', new GoValue(goStrings(ips)), 'first value must match `clusterIP`'));
  }
  const families = strs(spec.ipFamilies);
  ips.forEach((ip, i) => {
    if (ip === 'None') return;
    const version = isIP(ip);
    if (version === 0) {
      out.push(
        invalid(`spec.clusterIPs[${i}]`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
      );
      return;
    }
    // An IP of the family its place in ipFamilies names.
    const family = families[i];
    if (family && family !== `IPv${version}`)
      out.push(
        invalid(
          `spec.clusterIPs[${i}]`,
          ip,
          `expected an ${family} value as indicated by \`ipFamilies[${i}]\``,
        ),
      );
  });
  return out;
}

/** The primary cluster IP (`clusterIPs[0]`, else `clusterIP`). */
const primaryClusterIP = (spec: Obj): string => strs(spec.clusterIPs)[0] ?? str(spec.clusterIP);
const isHeadless = (spec: Obj): boolean => primaryClusterIP(spec) === 'None';
function servicePortKey(p: Obj): GoValue {
  return new GoValue(
    `core.ServicePort{Name:"", Protocol:${goQuote(str(p.protocol))}, AppProtocol:(*string)(nil), Port:${int(p.port)}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
  );
}
function validateServicePorts(spec: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const ports = objs(spec.ports);
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const pp = `spec.ports[${i}]`;
    const name = str(p.name);
    if (ports.length > 1 && !name) out.push(required(`${pp}.name`));
    else if (name) {
      for (const m of isDNS1123Label(name)) out.push(invalid(`${pp}.name`, name, m));
      if (names.has(name)) out.push(duplicate(`${pp}.name`, name));
      else names.add(name);
    }
    for (const m of isValidPortNum(int(p.port))) out.push(invalid(`${pp}.port`, int(p.port), m));
    const proto = str(p.protocol);
    if (!proto) out.push(required(`${pp}.protocol`));
    else if (!PROTOCOLS.includes(proto)) out.push(notSupported(`${pp}.protocol`, proto, PROTOCOLS));
    const target = p.targetPort;
    if (typeof target === 'string')
      for (const m of isValidPortName(target)) out.push(invalid(`${pp}.targetPort`, target, m));
    else if (target !== undefined)
      for (const m of isValidPortNum(int(target))) out.push(invalid(`${pp}.targetPort`, int(target), m));
    if (typeof p.appProtocol === 'string')
      for (const m of isQualifiedName(p.appProtocol))
        out.push(invalid(`${pp}.appProtocol`, p.appProtocol, m));
  });
  if (spec.type === 'ClusterIP') {
    ports.forEach((p, i) => {
      if (int(p.nodePort) !== 0)
        out.push(forbidden(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'"));
    });
  }
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    if (int(p.nodePort) === 0) return;
    const key = `${str(p.protocol)}/${int(p.nodePort)}`;
    if (nodePorts.has(key)) out.push(duplicate(`spec.ports[${i}].nodePort`, int(p.nodePort)));
    nodePorts.add(key);
  });
  const seen = new Set<string>();
  ports.forEach((p, i) => {
    const key = `${str(p.protocol)}/${int(p.port)}`;
    if (seen.has(key)) out.push(duplicate(`spec.ports[${i}]`, servicePortKey(p)));
    seen.add(key);
  });
  return out;
}
const services: KindBehaviour = {
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    def(spec, 'sessionAffinity', 'None');
    if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
    if (
      spec.sessionAffinity === 'ClientIP' &&
      numOr(dig(spec, 'sessionAffinityConfig', 'clientIP', 'timeoutSeconds')) === undefined
    ) {
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
    }
    def(spec, 'type', 'ClusterIP');
    for (const p of objs(spec.ports)) {
      def(p, 'protocol', 'TCP');
      if (p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 || p.targetPort === '')
        p.targetPort = p.port;
    }
    const type = str(spec.type);
    if (externallyAccessible(spec)) def(spec, 'externalTrafficPolicy', 'Cluster');
    if (type === 'NodePort' || type === 'LoadBalancer' || type === 'ClusterIP')
      def(spec, 'internalTrafficPolicy', 'Cluster');
    if (type === 'LoadBalancer' && typeof spec.allocateLoadBalancerNodePorts !== 'boolean') {
      spec.allocateLoadBalancerNodePorts = true;
    }
    if (type !== 'ExternalName') {
      // The IP family policy and families are fixed by the REST layer of a single-stack IPv4 cluster.
      const selectorless = Object.keys(strMap(spec.selector)).length === 0;
      def(spec, 'ipFamilyPolicy', isHeadless(spec) && selectorless ? 'RequireDualStack' : 'SingleStack');
      // initIPFamilyFields: unset families follow the cluster IPs asked for (the allocator then
      // refuses a family this cluster lacks), else the cluster's one, IPv4.
      if (arr(spec.ipFamilies).length === 0) {
        const asked = (
          strs(spec.clusterIPs).length > 0 ? strs(spec.clusterIPs) : [str(spec.clusterIP)]
        ).filter((ip) => isIP(ip) !== 0);
        spec.ipFamilies = asked.length > 0 ? asked.map((ip) => `IPv${isIP(ip)}`) : ['IPv4'];
      }
    }
    // LoadBalancerStatus is a struct, so Go always serializes `status.loadBalancer`.
    const status = ensureObj(obj, 'status');
    if (!isObj(status.loadBalancer)) status.loadBalancer = {};
  },
  prepare(obj, old, strategy) {
    if (!old || strategy) return;
    const spec = ensureObj(obj, 'spec');
    dropTypeDependentFields(spec, isObj(old.spec) ? old.spec : {});
    // A load balancer's status goes with its type.
    if (str(spec.type) !== 'LoadBalancer') ensureObj(obj, 'status').loadBalancer = {};
  },
  validate(obj, old) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const type = str(spec.type);
    if (objs(spec.ports).length === 0 && !isHeadless(spec) && type !== 'ExternalName')
      out.push(required('spec.ports'));
    if ((type === 'LoadBalancer' || type === 'NodePort') && isHeadless(spec)) {
      out.push(invalid('spec.clusterIPs[0]', 'None', `may not be set to 'None' for ${type} services`));
    }
    if (type === 'LoadBalancer') {
      objs(spec.ports).forEach((p, i) => {
        if (int(p.port) === 10250) {
          out.push(
            invalid(
              `spec.ports[${i}]`,
              10250,
              'may not expose port 10250 externally since it is used by kubelet',
            ),
          );
        }
      });
    }
    if (type === 'ExternalName') {
      if (strs(spec.clusterIPs).length > 0 || str(spec.clusterIP)) {
        out.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
      }
      if (arr(spec.ipFamilies).length > 0)
        out.push(forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
      if (spec.ipFamilyPolicy !== undefined && spec.ipFamilyPolicy !== null) {
        out.push(forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
      }
      const cname = str(spec.externalName).replace(/\.$/, '');
      if (cname) for (const m of isDNS1123Subdomain(cname)) out.push(invalid('spec.externalName', cname, m));
      else out.push(required('spec.externalName'));
    }
    if (type !== 'ExternalName') out.push(...validateClusterIPs(spec));
    out.push(...validateServicePorts(spec));
    if (isObj(spec.selector)) out.push(...validateLabels(spec.selector, 'spec.selector'));
    const affinity = str(spec.sessionAffinity);
    if (!affinity) out.push(required('spec.sessionAffinity'));
    else if (affinity !== 'ClientIP' && affinity !== 'None') {
      out.push(notSupported('spec.sessionAffinity', affinity, ['ClientIP', 'None']));
    }
    if (!type) out.push(required('spec.type'));
    else if (!SERVICE_TYPES.includes(type)) out.push(notSupported('spec.type', type, SERVICE_TYPES));
    for (const [f, allowed] of [
      ['externalTrafficPolicy', ['Cluster', 'Local']],
      ['internalTrafficPolicy', ['Cluster', 'Local']],
    ] as const) {
      const v = str(spec[f]);
      if (v && !(allowed as readonly string[]).includes(v)) out.push(notSupported(`spec.${f}`, v, allowed));
    }
    out.push(...validateServiceRules(obj));
    const policy = str(spec.ipFamilyPolicy);
    const policies = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
    if (policy && !policies.includes(policy)) out.push(notSupported('spec.ipFamilyPolicy', policy, policies));
    strs(spec.ipFamilies).forEach((f, i) => {
      if (f !== 'IPv4' && f !== 'IPv6') out.push(notSupported(`spec.ipFamilies[${i}]`, f, ['IPv4', 'IPv6']));
    });
    // validateServiceTrafficDistribution (beta and on in 1.32): PreferClose is the one value.
    if (spec.trafficDistribution !== undefined && spec.trafficDistribution !== null) {
      const td = str(spec.trafficDistribution);
      if (td !== 'PreferClose') out.push(notSupported('spec.trafficDistribution', td, ['PreferClose']));
    }
    if (old) {
      const oldSpec = isObj(old.spec) ? old.spec : {};
      if (type !== 'ExternalName' && str(oldSpec.type) !== 'ExternalName') {
        const was = primaryClusterIP(oldSpec);
        const now = primaryClusterIP(spec);
        if (was && now && was !== now) {
          const ips = strs(spec.clusterIPs).length > 0 ? strs(spec.clusterIPs) : [now];
          out.push(invalid('spec.clusterIPs[0]', new GoValue(goStrings(ips)), 'may not change once set'));
        }
      }
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Type', 'string', docs.serviceSpec.type),
    col('Cluster-IP', 'string', docs.serviceSpec.clusterIP),
    col('External-IP', 'string', docs.serviceSpec.externalIPs),
    col('Port(s)', 'string', docs.serviceSpec.ports),
    ageColumn(),
    col('Selector', 'string', docs.serviceSpec.selector, 1),
  ],
  row(obj, now) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const ip = primaryClusterIP(spec) || '<none>';
    const ports = objs(spec.ports)
      .map((p) =>
        int(p.nodePort) > 0
          ? `${int(p.port)}:${int(p.nodePort)}/${str(p.protocol)}`
          : `${int(p.port)}/${str(p.protocol)}`,
      )
      .join(',');
    return [
      nameOf(obj),
      str(spec.type),
      ip,
      externalIP(obj),
      ports || '<none>',
      age(obj, now),
      formatLabels(spec.selector),
    ];
  },
  fieldSelectors: {
    'spec.clusterIP': (o) => str(dig(o, 'spec', 'clusterIP')),
    'spec.type': (o) => str(dig(o, 'spec', 'type')),
  },
};
/** printers.go `getServiceExternalIP` (the server prints for `-o wide`, so load balancer addresses are not clipped). */
function externalIP(obj: Obj): string {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const externalIPs = strs(spec.externalIPs);
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = [
        ...new Set(
          objs(dig(obj, 'status', 'loadBalancer', 'ingress'))
            .map((i) => str(i.ip) || str(i.hostname))
            .filter(Boolean),
        ),
      ].sort();
      if (externalIPs.length > 0) return [...lb, ...externalIPs].join(',');
      return lb.length > 0 ? lb.join(',') : '<pending>';
    }
    case 'ExternalName':
      return str(spec.externalName);
  }
  return '<unknown>';
}

/** `Service` (core/v1 `services`): how the registry serves, validates and prints it. */
export const serviceKind: ResourceType = coreKind({
  statusStrategy: specStatusStrategy,
  behaviour: services,
  resource: 'services',
  kind: 'Service',
  shortNames: ['svc'],
  categories: ['all'],
  nameValidation: 'label1035',
  subresources: { status: true },
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
});
