/**
 * core/v1 kinds: namespaces, configmaps, secrets, services, endpoints, pods, nodes,
 * serviceaccounts, events and persistentvolumeclaims.
 */
import type { StatusCause } from 'kubeloop/api';
import { namespaceStorage } from '../core/namespace-storage.js';
import { podStorage } from '../core/pod-storage.js';
import { docs } from './descriptions.js';
import { defaultPod, validatePodSpec, validatePodUpdate } from './podspec.js';
import { ageColumn, col, type KindBehaviour, nameColumn } from './types.js';
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
  humanDuration,
  int,
  invalid,
  isConfigMapKey,
  isDNS1123Label,
  isDNS1123Subdomain,
  isObj,
  isQualifiedName,
  isValidPortName,
  isValidPortNum,
  jsonEqual,
  notSupported,
  numOr,
  type Obj,
  objAt,
  objs,
  parseQuantity,
  parseTime,
  required,
  semanticEqual,
  since,
  str,
  strMap,
  strs,
  tooLong,
  validateLabelSelector,
  validateLabels,
} from './util.js';

const MAX_SECRET_SIZE = 1024 * 1024;
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const IMMUTABLE_WHEN_SET = 'field is immutable when `immutable` is set';

// ---------------------------------------------------------------------------------------------
// Namespaces

const STANDARD_FINALIZERS = ['kubernetes', 'orphan', 'foregroundDeletion'];

const namespaces: KindBehaviour = {
  defaults(obj) {
    const m = ensureObj(obj, 'metadata');
    const name = str(m.name);
    if (name) ensureObj(m, 'labels')['kubernetes.io/metadata.name'] = name;
    const status = ensureObj(obj, 'status');
    // The create strategy adds the `kubernetes` finalizer; a stored namespace always has a phase,
    // so its absence marks a create (the finalizer may be removed later through /finalize).
    if (!str(status.phase)) {
      const spec = ensureObj(obj, 'spec');
      const finalizers = strs(spec.finalizers);
      if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
      status.phase = 'Active';
    }
  },
  validate(obj) {
    const out: StatusCause[] = [];
    strs(dig(obj, 'spec', 'finalizers')).forEach((f, i) => {
      const field = `spec.finalizers[${i}]`;
      for (const m of isQualifiedName(f)) out.push(invalid(field, f, m));
      if (!f.includes('/') && !STANDARD_FINALIZERS.includes(f)) {
        out.push(invalid(field, f, 'name is neither a standard finalizer name nor is it fully qualified'));
      }
    });
    return out;
  },
  columns: [nameColumn(), col('Status', 'string', 'The status of the namespace'), ageColumn()],
  row: (obj, now) => [str(dig(obj, 'metadata', 'name')), str(dig(obj, 'status', 'phase')), age(obj, now)],
  fieldSelectors: {
    'status.phase': (o) => str(dig(o, 'status', 'phase')),
    name: (o) => str(dig(o, 'metadata', 'name')),
  },
  storage: namespaceStorage,
};

function age(obj: Obj, now: Date): string {
  return since(dig(obj, 'metadata', 'creationTimestamp'), now);
}
const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));

// ---------------------------------------------------------------------------------------------
// ConfigMaps and Secrets

function validateKeys(data: unknown, field: string): StatusCause[] {
  const out: StatusCause[] = [];
  for (const key of Object.keys(isObj(data) ? data : {})) {
    for (const m of isConfigMapKey(key)) out.push(invalid(`${field}[${key}]`, key, m));
  }
  return out;
}

function immutableUpdate(obj: Obj, old: Obj | undefined, fields: string[]): StatusCause[] {
  if (old?.immutable !== true) return [];
  const out: StatusCause[] = [];
  if (obj.immutable !== true) out.push(forbidden('immutable', IMMUTABLE_WHEN_SET));
  for (const f of fields)
    if (!jsonEqual(obj[f] ?? {}, old[f] ?? {})) out.push(forbidden(f, IMMUTABLE_WHEN_SET));
  return out;
}

const configmaps: KindBehaviour = {
  validate(obj, old) {
    const out = immutableUpdate(obj, old, ['data', 'binaryData']);
    out.push(...validateKeys(obj.data, 'data'));
    const binary = isObj(obj.binaryData) ? obj.binaryData : {};
    for (const key of Object.keys(isObj(obj.data) ? obj.data : {})) {
      if (Object.hasOwn(binary, key))
        out.push(invalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    }
    out.push(...validateKeys(obj.binaryData, 'binaryData'));
    let size = 0;
    for (const v of Object.values(strMap(obj.data))) size += Buffer.byteLength(v, 'utf8');
    for (const v of Object.values(strMap(obj.binaryData))) size += Buffer.from(v, 'base64').length;
    if (size > MAX_SECRET_SIZE) out.push(tooLong('', MAX_SECRET_SIZE));
    return out;
  },
  columns: [nameColumn(), col('Data', 'string', docs.configMap.data), ageColumn()],
  row: (obj, now) => [
    nameOf(obj),
    Object.keys(isObj(obj.data) ? obj.data : {}).length +
      Object.keys(isObj(obj.binaryData) ? obj.binaryData : {}).length,
    age(obj, now),
  ],
};

const secrets: KindBehaviour = {
  defaults(obj) {
    def(obj, 'type', 'Opaque');
    // The v1 → internal conversion folds `stringData` into `data`; stringData wins and is never stored.
    if (isObj(obj.stringData)) {
      const data = ensureObj(obj, 'data');
      for (const [k, v] of Object.entries(strMap(obj.stringData)))
        data[k] = Buffer.from(v, 'utf8').toString('base64');
      delete obj.stringData;
    }
  },
  validate(obj, old) {
    const out: StatusCause[] = [];
    if (old) {
      if (str(obj.type) !== str(old.type)) out.push(invalid('type', str(obj.type), 'field is immutable'));
      out.push(...immutableUpdate(obj, old, ['data']));
    }
    out.push(...validateKeys(obj.data, 'data'));
    const data = strMap(obj.data);
    let size = 0;
    for (const v of Object.values(data)) size += Buffer.from(v, 'base64').length;
    if (size > MAX_SECRET_SIZE) out.push(tooLong('data', MAX_SECRET_SIZE));
    const has = (k: string): boolean => Object.hasOwn(data, k);
    switch (str(obj.type)) {
      case 'kubernetes.io/service-account-token':
        if (!str(dig(obj, 'metadata', 'annotations', 'kubernetes.io/service-account.name'))) {
          out.push(required('metadata.annotations[kubernetes.io/service-account.name]'));
        }
        break;
      case 'kubernetes.io/dockercfg':
      case 'kubernetes.io/dockerconfigjson': {
        const key = obj.type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
        if (!has(key)) out.push(required(`data[${key}]`));
        else {
          try {
            const parsed: unknown = JSON.parse(Buffer.from(data[key]!, 'base64').toString('utf8'));
            if (!isObj(parsed))
              throw new Error('json: cannot unmarshal into Go value of type map[string]interface {}');
          } catch (err) {
            out.push(invalid(`data[${key}]`, '<secret contents redacted>', (err as Error).message));
          }
        }
        break;
      }
      case 'kubernetes.io/basic-auth':
        if (!has('username') && !has('password'))
          out.push(required('data[username]'), required('data[password]'));
        break;
      case 'kubernetes.io/ssh-auth':
        if (!data['ssh-privatekey']) out.push(required('data[ssh-privatekey]'));
        break;
      case 'kubernetes.io/tls':
        if (!has('tls.crt')) out.push(required('data[tls.crt]'));
        if (!has('tls.key')) out.push(required('data[tls.key]'));
        break;
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Type', 'string', docs.secret.type),
    col('Data', 'string', docs.secret.data),
    ageColumn(),
  ],
  row: (obj, now) => [nameOf(obj), str(obj.type), Object.keys(strMap(obj.data)).length, age(obj, now)],
  fieldSelectors: { type: (o) => str(o.type) },
};

// ---------------------------------------------------------------------------------------------
// Services

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

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
    const externallyAccessible =
      type === 'LoadBalancer' ||
      type === 'NodePort' ||
      (type === 'ClusterIP' && strs(spec.externalIPs).length > 0);
    if (externallyAccessible) def(spec, 'externalTrafficPolicy', 'Cluster');
    if (type === 'NodePort' || type === 'LoadBalancer' || type === 'ClusterIP')
      def(spec, 'internalTrafficPolicy', 'Cluster');
    if (type === 'LoadBalancer' && typeof spec.allocateLoadBalancerNodePorts !== 'boolean') {
      spec.allocateLoadBalancerNodePorts = true;
    }
    if (type !== 'ExternalName') {
      // The IP family policy and families are fixed by the REST layer of a single-stack IPv4 cluster.
      const selectorless = Object.keys(strMap(spec.selector)).length === 0;
      def(spec, 'ipFamilyPolicy', isHeadless(spec) && selectorless ? 'RequireDualStack' : 'SingleStack');
      if (arr(spec.ipFamilies).length === 0) spec.ipFamilies = ['IPv4'];
    }
    // LoadBalancerStatus is a struct, so Go always serializes `status.loadBalancer`.
    const status = ensureObj(obj, 'status');
    if (!isObj(status.loadBalancer)) status.loadBalancer = {};
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
    const policy = str(spec.ipFamilyPolicy);
    const policies = ['SingleStack', 'PreferDualStack', 'RequireDualStack'];
    if (policy && !policies.includes(policy)) out.push(notSupported('spec.ipFamilyPolicy', policy, policies));
    strs(spec.ipFamilies).forEach((f, i) => {
      if (f !== 'IPv4' && f !== 'IPv6') out.push(notSupported(`spec.ipFamilies[${i}]`, f, ['IPv4', 'IPv6']));
    });
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

const isIP = (s: string): boolean =>
  /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(s) ||
  (s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s) && s.split('::').length <= 2);

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
          const ip = str(a.ip);
          if (!isIP(ip))
            out.push(
              invalid(`${ap}.ip`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
            );
          const host = str(a.hostname);
          if (host) for (const m of isDNS1123Label(host)) out.push(invalid(`${ap}.hostname`, host, m));
          const node = str(a.nodeName);
          if (node) for (const m of isDNS1123Subdomain(node)) out.push(invalid(`${ap}.nodeName`, node, m));
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
      });
    });
    return out;
  },
  columns: [nameColumn(), col('Endpoints', 'string', docs.endpoints.subsets), ageColumn()],
  row: (obj, now) => [nameOf(obj), formatEndpoints(obj), age(obj, now)],
};

// ---------------------------------------------------------------------------------------------
// Pods

const isRestartableInit = (c: Obj | undefined): boolean => c?.restartPolicy === 'Always';
const hasCondition = (status: Obj, type: string): boolean =>
  objs(status.conditions).some((c) => c.type === type && c.status === 'True');

/** The aggregate READY, STATUS and RESTARTS of printers.go `printPod`. */
export function podSummary(pod: Obj, now: Date): { ready: string; reason: string; restarts: string } {
  const spec = isObj(pod.spec) ? pod.spec : {};
  const status = isObj(pod.status) ? pod.status : {};
  let restarts = 0;
  let restartableInitRestarts = 0;
  let total = objs(spec.containers).length;
  let ready = 0;
  let lastRestart = 0;
  let lastRestartableInitRestart = 0;
  const phase = str(status.phase);
  let reason = str(status.reason) || phase;
  for (const c of objs(status.conditions)) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }
  const inits = new Map<string, Obj>();
  for (const c of objs(spec.initContainers)) {
    inits.set(str(c.name), c);
    if (isRestartableInit(c)) total++;
  }
  const finishedAt = (c: Obj): number => parseTime(dig(c, 'lastState', 'terminated', 'finishedAt')) ?? 0;
  let initializing = false;
  const initStatuses = objs(status.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i]!;
    restarts += int(c.restartCount);
    lastRestart = Math.max(lastRestart, finishedAt(c));
    const restartable = isRestartableInit(inits.get(str(c.name)));
    if (restartable) {
      restartableInitRestarts += int(c.restartCount);
      lastRestartableInitRestart = Math.max(lastRestartableInitRestart, finishedAt(c));
    }
    const terminated = objAt(c.state, 'terminated');
    const waiting = objAt(c.state, 'waiting');
    if (terminated && int(terminated.exitCode) === 0) continue;
    if (restartable && c.started === true) {
      if (c.ready === true) ready++;
      continue;
    }
    if (terminated) {
      if (!str(terminated.reason)) {
        reason =
          int(terminated.signal) !== 0
            ? `Init:Signal:${int(terminated.signal)}`
            : `Init:ExitCode:${int(terminated.exitCode)}`;
      } else reason = `Init:${str(terminated.reason)}`;
    } else if (waiting && str(waiting.reason) && waiting.reason !== 'PodInitializing') {
      reason = `Init:${str(waiting.reason)}`;
    } else {
      reason = `Init:${i}/${objs(spec.initContainers).length}`;
    }
    initializing = true;
    break;
  }
  if (!initializing || hasCondition(status, 'Initialized')) {
    restarts = restartableInitRestarts;
    lastRestart = lastRestartableInitRestart;
    let hasRunning = false;
    const statuses = objs(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!;
      restarts += int(c.restartCount);
      lastRestart = Math.max(lastRestart, finishedAt(c));
      const terminated = objAt(c.state, 'terminated');
      const waiting = objAt(c.state, 'waiting');
      if (waiting && str(waiting.reason)) reason = str(waiting.reason);
      else if (terminated && str(terminated.reason)) reason = str(terminated.reason);
      else if (terminated) {
        reason =
          int(terminated.signal) !== 0
            ? `Signal:${int(terminated.signal)}`
            : `ExitCode:${int(terminated.exitCode)}`;
      } else if (c.ready === true && objAt(c.state, 'running')) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = hasCondition(status, 'Ready') ? 'Running' : 'NotReady';
  }
  const deleting = str(dig(pod, 'metadata', 'deletionTimestamp')) !== '';
  if (deleting && status.reason === 'NodeLost') reason = 'Unknown';
  else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';
  let restartsStr = String(restarts);
  if (restarts !== 0 && lastRestart !== 0)
    restartsStr = `${restarts} (${humanDuration(now.getTime() - lastRestart)} ago)`;
  return { ready: `${ready}/${total}`, reason, restarts: restartsStr };
}

/** The pod's first IP (the v1 → internal conversion lets `podIP` win over `podIPs`). */
const podIP = (pod: Obj): string =>
  str(dig(pod, 'status', 'podIP')) || str(objs(dig(pod, 'status', 'podIPs'))[0]?.ip);

const pods: KindBehaviour = {
  defaults: defaultPod,
  validate(obj, old) {
    if (old) return validatePodUpdate(obj, old);
    const out = validatePodSpec(obj.spec, 'spec');
    // Templates tolerate padded images (some tools fill them in later); pods do not.
    for (const list of ['initContainers', 'containers']) {
      objs(dig(obj, 'spec', list)).forEach((c, i) => {
        const image = str(c.image);
        if (image.trim() !== image) {
          out.push(
            invalid(`spec.${list}[${i}].image`, image, 'must not have leading or trailing whitespace'),
          );
        }
      });
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'string', 'The aggregate status of the containers in this pod.'),
    col(
      'Restarts',
      'string',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    ageColumn(),
    col('IP', 'string', docs.podStatus.podIP, 1),
    col('Node', 'string', docs.podSpec.nodeName, 1),
    col('Nominated Node', 'string', docs.podStatus.nominatedNodeName, 1),
    col('Readiness Gates', 'string', docs.podSpec.readinessGates, 1),
  ],
  row(obj, now) {
    const { ready, reason, restarts } = podSummary(obj, now);
    const gates = objs(dig(obj, 'spec', 'readinessGates'));
    let readinessGates = '<none>';
    if (gates.length > 0) {
      const conditions = objs(dig(obj, 'status', 'conditions'));
      const trueCount = gates.filter(
        (g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True',
      ).length;
      readinessGates = `${trueCount}/${gates.length}`;
    }
    return [
      nameOf(obj),
      ready,
      reason,
      restarts,
      age(obj, now),
      podIP(obj) || '<none>',
      str(dig(obj, 'spec', 'nodeName')) || '<none>',
      str(dig(obj, 'status', 'nominatedNodeName')) || '<none>',
      readinessGates,
    ];
  },
  fieldSelectors: {
    'spec.nodeName': (o) => str(dig(o, 'spec', 'nodeName')),
    'spec.restartPolicy': (o) => str(dig(o, 'spec', 'restartPolicy')),
    'spec.schedulerName': (o) => str(dig(o, 'spec', 'schedulerName')),
    'spec.serviceAccountName': (o) => str(dig(o, 'spec', 'serviceAccountName')),
    'spec.hostNetwork': (o) => String(dig(o, 'spec', 'hostNetwork') === true),
    'status.phase': (o) => str(dig(o, 'status', 'phase')),
    'status.podIP': podIP,
    'status.nominatedNodeName': (o) => str(dig(o, 'status', 'nominatedNodeName')),
  },
  storage: podStorage,
};

// ---------------------------------------------------------------------------------------------
// Nodes

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

function nodeAddress(obj: Obj, type: string): string {
  return str(objs(dig(obj, 'status', 'addresses')).find((a) => a.type === type)?.address) || '<none>';
}

const nodes: KindBehaviour = {
  defaults(obj) {
    const status = objAt(obj, 'status');
    if (status && isObj(status.capacity) && status.allocatable === undefined)
      status.allocatable = { ...status.capacity };
  },
  validate(obj) {
    const out: StatusCause[] = [];
    objs(dig(obj, 'spec', 'taints')).forEach((t, i) => {
      const tp = `spec.taints[${i}]`;
      for (const m of isQualifiedName(str(t.key))) out.push(invalid(`${tp}.key`, str(t.key), m));
      const effect = str(t.effect);
      if (!effect) out.push(required(`${tp}.effect`));
      else if (!TAINT_EFFECTS.includes(effect)) out.push(notSupported(`${tp}.effect`, effect, TAINT_EFFECTS));
    });
    return out;
  },
  columns: [
    nameColumn(),
    col('Status', 'string', 'The status of the node'),
    col('Roles', 'string', 'The roles of the node'),
    ageColumn(),
    col('Version', 'string', docs.nodeSystemInfo.kubeletVersion),
    col('Internal-IP', 'string', docs.nodeStatus.addresses, 1),
    col('External-IP', 'string', docs.nodeStatus.addresses, 1),
    col('OS-Image', 'string', docs.nodeSystemInfo.osImage, 1),
    col('Kernel-Version', 'string', docs.nodeSystemInfo.kernelVersion, 1),
    col('Container-Runtime', 'string', docs.nodeSystemInfo.containerRuntimeVersion, 1),
  ],
  row(obj, now) {
    const ready = objs(dig(obj, 'status', 'conditions')).filter((c) => c.type === 'Ready');
    const status: string[] = [];
    const cond = ready[ready.length - 1];
    if (cond) status.push(cond.status === 'True' ? 'Ready' : 'NotReady');
    else status.push('Unknown');
    if (dig(obj, 'spec', 'unschedulable') === true) status.push('SchedulingDisabled');
    const roles = new Set<string>();
    for (const [k, v] of Object.entries(strMap(dig(obj, 'metadata', 'labels')))) {
      if (k.startsWith('node-role.kubernetes.io/')) {
        const role = k.slice('node-role.kubernetes.io/'.length);
        if (role) roles.add(role);
      } else if (k === 'kubernetes.io/role' && v) roles.add(v);
    }
    const info = objAt(dig(obj, 'status'), 'nodeInfo') ?? {};
    return [
      nameOf(obj),
      status.join(','),
      roles.size > 0 ? [...roles].sort().join(',') : '<none>',
      age(obj, now),
      str(info.kubeletVersion),
      nodeAddress(obj, 'InternalIP'),
      nodeAddress(obj, 'ExternalIP'),
      str(info.osImage) || '<unknown>',
      str(info.kernelVersion) || '<unknown>',
      str(info.containerRuntimeVersion) || '<unknown>',
    ];
  },
  fieldSelectors: { 'spec.unschedulable': (o) => String(dig(o, 'spec', 'unschedulable') === true) },
  // A node registers with its status, which create keeps (the node strategy's PrepareForCreate).
  storage: { statusOnCreate() {} },
};

// ---------------------------------------------------------------------------------------------
// ServiceAccounts

const serviceaccounts: KindBehaviour = {
  columns: [nameColumn(), col('Secrets', 'string', docs.serviceAccount.secrets), ageColumn()],
  row: (obj, now) => [nameOf(obj), objs(obj.secrets).length, age(obj, now)],
};

// ---------------------------------------------------------------------------------------------
// Events (core/v1; events.k8s.io/v1 events are printed by converting them to this shape)

/** The core/v1 view of an event, whichever API group it was written through. */
export interface CoreEventView {
  name: string;
  namespace: string;
  involvedObject: Obj;
  reason: string;
  message: string;
  source: Obj;
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  count: number;
  type: string;
  eventTime: unknown;
  series: Obj | undefined;
  reportingController: string;
  reportingInstance: string;
  action: string;
}

export function coreEventView(obj: Obj): CoreEventView {
  return {
    name: nameOf(obj),
    namespace: str(dig(obj, 'metadata', 'namespace')),
    involvedObject: objAt(obj, 'involvedObject') ?? {},
    reason: str(obj.reason),
    message: str(obj.message),
    source: objAt(obj, 'source') ?? {},
    firstTimestamp: obj.firstTimestamp,
    lastTimestamp: obj.lastTimestamp,
    count: int(obj.count),
    type: str(obj.type),
    eventTime: obj.eventTime,
    series: objAt(obj, 'series'),
    reportingController: str(obj.reportingComponent),
    reportingInstance: str(obj.reportingInstance),
    action: str(obj.action),
  };
}

/** The cells of printers.go `printEvent` (wide form). */
export function eventRow(e: CoreEventView, now: Date): unknown[] {
  let first = since(e.firstTimestamp, now);
  if (parseTime(e.firstTimestamp) === undefined) first = since(e.eventTime, now);
  let last = since(e.lastTimestamp, now);
  if (parseTime(e.lastTimestamp) === undefined) last = first;
  let count = e.count;
  if (e.series) {
    last = since(e.series.lastObservedTime, now);
    count = int(e.series.count);
  } else if (count === 0) count = 1;
  const kind = str(e.involvedObject.kind).toLowerCase();
  const target = str(e.involvedObject.name) ? `${kind}/${str(e.involvedObject.name)}` : kind;
  const component = str(e.source.component) || e.reportingController;
  const instance = str(e.source.host) || e.reportingInstance;
  const source = instance ? `${component}, ${instance}` : component;
  return [
    last,
    e.type,
    e.reason,
    target,
    str(e.involvedObject.fieldPath),
    source,
    e.message.trim(),
    first,
    count,
    e.name,
  ];
}

export const eventColumns = () => [
  col('Last Seen', 'string', docs.event.lastTimestamp),
  col('Type', 'string', docs.event.type),
  col('Reason', 'string', docs.event.reason),
  col('Object', 'string', docs.event.involvedObject),
  col('Subobject', 'string', docs.objectReference.fieldPath, 1),
  col('Source', 'string', docs.event.source, 1),
  col('Message', 'string', docs.event.message),
  col('First Seen', 'string', docs.event.firstTimestamp, 1),
  col('Count', 'string', docs.event.count, 1),
  col('Name', 'string', docs.meta.name, 1, 'name'),
];

/** `legacyValidateEvent` on the core view; `reportingField` names reportingController as the request's API spells it. */
export function legacyValidateEvent(e: CoreEventView, reportingField: string): StatusCause[] {
  const out: StatusCause[] = [];
  const ns = str(e.involvedObject.namespace);
  if (parseTime(e.eventTime) === undefined) {
    if (!ns) {
      if (e.namespace !== '' && e.namespace !== 'default') {
        out.push(invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
      }
    } else if (e.namespace !== ns)
      out.push(invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
  } else {
    if (!ns && e.namespace !== 'default' && e.namespace !== 'kube-system') {
      out.push(invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
    }
    if (!e.reportingController) out.push(required(reportingField));
    for (const m of isQualifiedName(e.reportingController))
      out.push(invalid(reportingField, e.reportingController, m));
    if (!e.reportingInstance) out.push(required('reportingInstance'));
    if (e.reportingInstance.length > 128)
      out.push(invalid('reportingInstance', '', 'can have at most 128 characters'));
    if (!e.action) out.push(required('action'));
    if (e.action.length > 128) out.push(invalid('action', '', 'can have at most 128 characters'));
    if (!e.reason) out.push(required('reason'));
    if (e.reason.length > 128) out.push(invalid('reason', '', 'can have at most 128 characters'));
    if (e.message.length > 1024) out.push(invalid('message', '', 'can have at most 1024 characters'));
  }
  return out;
}

const events: KindBehaviour = {
  defaults(obj) {
    // Go serializes these structs and non-omitempty strings even when empty.
    if (!isObj(obj.involvedObject)) obj.involvedObject = {};
    if (!isObj(obj.source)) obj.source = {};
    for (const k of ['eventTime', 'firstTimestamp', 'lastTimestamp']) if (obj[k] === undefined) obj[k] = null;
    for (const k of ['reportingComponent', 'reportingInstance']) if (obj[k] === undefined) obj[k] = '';
  },
  validate: (obj) => legacyValidateEvent(coreEventView(obj), 'reportingComponent'),
  columns: eventColumns(),
  row: (obj, now) => eventRow(coreEventView(obj), now),
  fieldSelectors: {
    'involvedObject.kind': (o) => str(dig(o, 'involvedObject', 'kind')),
    'involvedObject.namespace': (o) => str(dig(o, 'involvedObject', 'namespace')),
    'involvedObject.name': (o) => str(dig(o, 'involvedObject', 'name')),
    'involvedObject.uid': (o) => str(dig(o, 'involvedObject', 'uid')),
    'involvedObject.apiVersion': (o) => str(dig(o, 'involvedObject', 'apiVersion')),
    'involvedObject.resourceVersion': (o) => str(dig(o, 'involvedObject', 'resourceVersion')),
    'involvedObject.fieldPath': (o) => str(dig(o, 'involvedObject', 'fieldPath')),
    reason: (o) => str(o.reason),
    reportingComponent: (o) => str(o.reportingComponent),
    source: (o) => str(dig(o, 'source', 'component')) || str(o.reportingComponent),
    type: (o) => str(o.type),
  },
};

// ---------------------------------------------------------------------------------------------
// PersistentVolumeClaims

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];

/** `helper.GetAccessModesAsString`. */
export function accessModesString(modes: unknown): string {
  const m = new Set(strs(modes));
  return (
    [
      ['ReadWriteOnce', 'RWO'],
      ['ReadOnlyMany', 'ROX'],
      ['ReadWriteMany', 'RWX'],
      ['ReadWriteOncePod', 'RWOP'],
    ] as const
  )
    .filter(([mode]) => m.has(mode))
    .map(([, s]) => s)
    .join(',');
}

/** PersistentVolumeClaimSpec defaults (also used for StatefulSet volume claim templates). */
export function defaultClaimSpec(spec: Obj): void {
  def(spec, 'volumeMode', 'Filesystem');
}

/** `ValidatePersistentVolumeClaimSpec` at `path`. */
export function validateClaimSpec(spec: unknown, path: string): StatusCause[] {
  const s = isObj(spec) ? spec : {};
  const out: StatusCause[] = [];
  const modes = strs(s.accessModes);
  if (modes.length === 0) out.push(required(`${path}.accessModes`, 'at least 1 access mode is required'));
  if (isObj(s.selector)) out.push(...validateLabelSelector(s.selector, `${path}.selector`));
  for (const m of modes)
    if (!ACCESS_MODES.includes(m)) out.push(notSupported(`${path}.accessModes`, m, ACCESS_MODES));
  if (modes.includes('ReadWriteOncePod') && modes.some((m) => m !== 'ReadWriteOncePod')) {
    out.push(forbidden(`${path}.accessModes`, 'may not use ReadWriteOncePod with other access modes'));
  }
  const storage = dig(s, 'resources', 'requests', 'storage');
  if (storage === undefined) out.push(required(`${path}.resources[storage]`));
  else {
    const q = parseQuantity(storage);
    if (q && q.num <= 0n)
      out.push(invalid(`${path}.resources[storage]`, String(storage), 'must be greater than zero'));
  }
  const mode = s.volumeMode;
  if (typeof mode === 'string' && mode !== 'Block' && mode !== 'Filesystem') {
    out.push(notSupported(`${path}.volumeMode`, mode, ['Block', 'Filesystem']));
  }
  return out;
}

const persistentvolumeclaims: KindBehaviour = {
  defaults(obj) {
    defaultClaimSpec(ensureObj(obj, 'spec'));
    def(ensureObj(obj, 'status'), 'phase', 'Pending');
  },
  validate(obj, old) {
    const out = validateClaimSpec(obj.spec, 'spec');
    if (old) {
      const spec = structuredClone(isObj(obj.spec) ? obj.spec : {});
      const oldSpec = structuredClone(isObj(old.spec) ? old.spec : {});
      // The volume name may be set once; requests may change once the claim is bound.
      if (!str(oldSpec.volumeName)) oldSpec.volumeName = spec.volumeName;
      if (dig(obj, 'status', 'phase') === 'Bound') {
        const requests = dig(spec, 'resources', 'requests');
        if (isObj(requests)) requests.storage = dig(oldSpec, 'resources', 'requests', 'storage');
      }
      if (!semanticEqual(spec, oldSpec)) {
        const changed = [...new Set([...Object.keys(spec), ...Object.keys(oldSpec)])]
          .filter((k) => !semanticEqual(spec[k], oldSpec[k]))
          .sort()
          .map(
            (k) => `  spec.${k}: ${JSON.stringify(oldSpec[k] ?? null)} -> ${JSON.stringify(spec[k] ?? null)}`,
          );
        out.push(
          forbidden(
            'spec',
            `spec is immutable after creation except resources.requests for bound claims\n${changed.join('\n')}`,
          ),
        );
      }
      const newSize = parseQuantity(dig(obj, 'spec', 'resources', 'requests', 'storage'));
      const oldSize = parseQuantity(dig(old, 'spec', 'resources', 'requests', 'storage'));
      if (newSize && oldSize && newSize.num * oldSize.den < oldSize.num * newSize.den) {
        out.push(forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
      }
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Status', 'string', docs.pvcStatus.phase),
    col('Volume', 'string', docs.pvcSpec.volumeName),
    col('Capacity', 'string', docs.pvcStatus.capacity),
    col('Access Modes', 'string', docs.pvcStatus.accessModes),
    col('StorageClass', 'string', 'StorageClass of the pvc'),
    col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pvc'),
    ageColumn(),
    col('VolumeMode', 'string', docs.pvcSpec.volumeMode, 1),
  ],
  row(obj, now) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const phase = str(dig(obj, 'metadata', 'deletionTimestamp'))
      ? 'Terminating'
      : str(dig(obj, 'status', 'phase'));
    const volumeName = str(spec.volumeName);
    let capacity = '';
    let accessModes = '';
    if (volumeName) {
      accessModes = accessModesString(dig(obj, 'status', 'accessModes'));
      const cap = dig(obj, 'status', 'capacity', 'storage');
      capacity = cap === undefined ? '0' : String(cap);
    }
    const annotatedClass = dig(obj, 'metadata', 'annotations', 'volume.beta.kubernetes.io/storage-class');
    const storageClass = typeof annotatedClass === 'string' ? annotatedClass : str(spec.storageClassName);
    const vac =
      typeof spec.volumeAttributesClassName === 'string' ? spec.volumeAttributesClassName : '<unset>';
    const volumeMode = typeof spec.volumeMode === 'string' ? spec.volumeMode : '<unset>';
    return [
      nameOf(obj),
      phase,
      volumeName,
      capacity,
      accessModes,
      storageClass,
      vac,
      age(obj, now),
      volumeMode,
    ];
  },
  fieldSelectors: { name: (o) => nameOf(o) },
};

/** core/v1 behaviours, keyed by plural resource. */
export const coreBehaviours: Record<string, KindBehaviour> = {
  namespaces,
  configmaps,
  secrets,
  services,
  endpoints,
  pods,
  nodes,
  serviceaccounts,
  events,
  persistentvolumeclaims,
};
