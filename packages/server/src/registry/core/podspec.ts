/**
 * Validation of the pod spec wherever it appears (Pod, PodTemplate, ReplicationController and
 * the pod template of Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs): the
 * parts of `ValidatePodSpec` a user plausibly trips over, and what a Pod update may change.
 * Defaults are in `podspec-defaults.ts`.
 */
import { isIP } from 'node:net';
import { isQualifiedName, type StatusCause } from 'kubeloop/api';
import {
  compareQuantity,
  dig,
  duplicate,
  forbidden,
  GoValue,
  goQuote,
  goStrings,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isObj,
  isSet,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
  notSupported,
  numOr,
  type Obj,
  objs,
  parseQuantity,
  required,
  semanticEqual,
  str,
  strs,
  validateLabels,
} from '../shared/util.js';
import { resourceName } from './limitrange.js';
import { validateEphemeralContainers, validateNoEphemeralInTemplate } from './pod-ephemeral.js';
import { validateAffinityTerms, validateTolerations } from './podspec-affinity.js';
import { strMapLoose, VOLUME_SOURCES } from './podspec-defaults.js';
import { validateContainerHooks, validateInitRestartPolicy } from './podspec-handlers.js';
import { validateContainerSecurityContext, validatePodSecurityContext } from './podspec-security.js';
import {
  hostPortConflicts,
  relaxedEnvVarName,
  validateEnvFrom,
  validateKeySelector,
  validateMountsAndDevices,
  validateObjectFieldSelector,
  validateResourceFieldRef,
  validateVolumeSourceDetails,
} from './podspec-sources.js';
import { validateQuantityValue } from './resourcequota.js';
import { quantityText } from './shared.js';
import { validateStorageSources } from './volume-sources.js';

// ---------------------------------------------------------------------------------------------
// Validation.

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];

/** Whether requests may be below limits (`helper.IsOvercommitAllowed`): native resources other than hugepages. */
function overcommitAllowed(resource: string): boolean {
  const native = !resource.includes('/') || resource.startsWith('kubernetes.io/');
  return native && !resource.startsWith('hugepages-');
}

/** `IsHugePageResourceValueDivisible`: a whole number of pages (`Value()` rounds up). */
function wholePages(name: string, raw: unknown): boolean {
  const page = parseQuantity(name.slice('hugepages-'.length));
  const q = parseQuantity(raw);
  if (!page || !q || page.num <= 0n || (page.num * 1000n) % page.den !== 0n) return false;
  const pageBytes = page.num / page.den;
  const value = q.num >= 0n ? (q.num + q.den - 1n) / q.den : q.num / q.den;
  return value % pageBytes === 0n;
}

export function validateResources(resources: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const limits = strMapLoose(dig(resources, 'limits'));
  const requests = strMapLoose(dig(resources, 'requests'));
  // validateResourceRequirements: each name a container resource, each quantity valid, huge
  // pages in whole pages and only beside cpu or memory.
  let hugePages = false;
  let cpuOrMemory = false;
  for (const [which, list] of [
    ['limits', limits],
    ['requests', requests],
  ] as const) {
    for (const [name, raw] of Object.entries(list)) {
      const field = `${path}.${which}[${name}]`;
      out.push(...resourceName('Container', name, field), ...validateQuantityValue(name, raw, field));
      if (name.startsWith('hugepages-')) {
        hugePages = true;
        if (!wholePages(name, raw))
          out.push(
            invalid(
              field,
              quantityText(raw),
              `${quantityText(raw)} is not positive integer multiple of ${name}`,
            ),
          );
      }
      if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
    }
  }
  if (hugePages && !cpuOrMemory) out.push(forbidden(path, 'HugePages require cpu or memory'));
  for (const [name, raw] of Object.entries(requests)) {
    const req = parseQuantity(raw);
    const limRaw = limits[name];
    const lim = parseQuantity(limRaw);
    if (limRaw === undefined && !overcommitAllowed(name)) {
      out.push(required(`${path}.limits`, 'Limit must be set for non overcommitable resources'));
      continue;
    }
    if (!req || !lim) continue;
    const cmp = compareQuantity(req, lim);
    if (cmp !== 0 && !overcommitAllowed(name)) {
      out.push(
        invalid(`${path}.requests`, String(raw), `must be equal to ${name} limit of ${String(limRaw)}`),
      );
    } else if (cmp > 0) {
      out.push(
        invalid(
          `${path}.requests`,
          String(raw),
          `must be less than or equal to ${name} limit of ${String(limRaw)}`,
        ),
      );
    }
  }
  return out;
}

/** `validateEnvVarValueFrom`: one source, none with a `value`. */
function validateEnvValueFrom(e: Obj, path: string): StatusCause[] {
  const from = e.valueFrom;
  if (!isObj(from)) return [];
  const out: StatusCause[] = [];
  let sources = 0;
  for (const k of ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef']) {
    if (!isObj(from[k])) continue;
    sources++;
    const ref = from[k] as Obj;
    if (k === 'fieldRef') out.push(...validateObjectFieldSelector(ref, `${path}.fieldRef`));
    else if (k === 'resourceFieldRef')
      out.push(...validateResourceFieldRef(ref, `${path}.resourceFieldRef`, false));
    else out.push(...validateKeySelector(ref, `${path}.${k}`));
  }
  if (sources === 0)
    out.push(
      invalid(
        path,
        '',
        'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      ),
    );
  else if (str(e.value)) out.push(invalid(path, '', 'may not be specified when `value` is not empty'));
  else if (sources > 1) out.push(invalid(path, '', 'may not have more than one field specified at a time'));
  return out;
}

function validatePorts(ports: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const names = new Set<string>();
  objs(ports).forEach((p, i) => {
    const pp = `${path}[${i}]`;
    const name = str(p.name);
    if (name) {
      const msgs = isValidPortName(name);
      if (msgs.length > 0) for (const m of msgs) out.push(invalid(`${pp}.name`, name, m));
      else if (names.has(name)) out.push(duplicate(`${pp}.name`, name));
      else names.add(name);
    }
    const cp = numOr(p.containerPort) ?? 0;
    if (cp === 0) out.push(required(`${pp}.containerPort`));
    else for (const m of isValidPortNum(cp)) out.push(invalid(`${pp}.containerPort`, cp, m));
    const hp = numOr(p.hostPort) ?? 0;
    if (hp !== 0) for (const m of isValidPortNum(hp)) out.push(invalid(`${pp}.hostPort`, hp, m));
    const proto = str(p.protocol);
    if (!proto) out.push(required(`${pp}.protocol`));
    else if (!PROTOCOLS.includes(proto)) out.push(notSupported(`${pp}.protocol`, proto, PROTOCOLS));
  });
  return out;
}

/** A pod's volume names, and those of claims (which alone may back a block device). */
interface PodVolumes {
  names: Set<string>;
  claims: Set<string>;
}

function validateContainer(c: Obj, path: string, volumes: PodVolumes): StatusCause[] {
  const out: StatusCause[] = [];
  const name = str(c.name);
  if (!name) out.push(required(`${path}.name`));
  else for (const m of isDNS1123Label(name)) out.push(invalid(`${path}.name`, name, m));
  if (!str(c.image)) out.push(required(`${path}.image`));
  const tmp = str(c.terminationMessagePolicy);
  if (!tmp)
    out.push(required(`${path}.terminationMessagePolicy`, "must be 'File' or 'FallbackToLogsOnError'"));
  else if (tmp !== 'File' && tmp !== 'FallbackToLogsOnError') {
    out.push(invalid(`${path}.terminationMessagePolicy`, tmp, "must be 'File' or 'FallbackToLogsOnError'"));
  }
  out.push(...validatePorts(c.ports, `${path}.ports`));
  objs(c.env).forEach((e, i) => {
    const n = str(e.name);
    if (!n) out.push(required(`${path}.env[${i}].name`));
    // RelaxedEnvironmentVariableValidation (beta, on in 1.32): printable ASCII but '='.
    out.push(...relaxedEnvVarName(n, `${path}.env[${i}].name`));
    out.push(...validateEnvValueFrom(e, `${path}.env[${i}].valueFrom`));
  });
  out.push(...validateEnvFrom(c.envFrom, `${path}.envFrom`));
  out.push(...validateMountsAndDevices(c, path, volumes.names, volumes.claims));
  const policy = str(c.imagePullPolicy);
  if (!policy) out.push(required(`${path}.imagePullPolicy`));
  else if (!PULL_POLICIES.includes(policy))
    out.push(notSupported(`${path}.imagePullPolicy`, policy, PULL_POLICIES));
  out.push(...validateResources(c.resources, `${path}.resources`));
  out.push(...validateContainerSecurityContext(c, path));
  return out;
}

function validateVolumes(volumes: unknown, path: string): { causes: StatusCause[]; names: Set<string> } {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  objs(volumes).forEach((v, i) => {
    const vp = `${path}[${i}]`;
    const name = str(v.name);
    const sources = VOLUME_SOURCES.filter((s) => v[s] !== undefined && v[s] !== null);
    if (sources.length === 0) causes.push(required(vp, 'must specify a volume type'));
    for (const extra of sources.slice(1))
      causes.push(forbidden(`${vp}.${extra}`, 'may not specify more than 1 volume type'));
    causes.push(...validateVolumeSourceDetails(v, vp));
    causes.push(...validateStorageSources(v, vp));
    if (isObj(v.persistentVolumeClaim) && !str(v.persistentVolumeClaim.claimName)) {
      causes.push(required(`${vp}.persistentVolumeClaim.claimName`));
    }
    if (isObj(v.hostPath)) causes.push(...validateHostPath(v.hostPath, `${vp}.hostPath`));
    if (!name) causes.push(required(`${vp}.name`));
    else for (const m of isDNS1123Label(name)) causes.push(invalid(`${vp}.name`, name, m));
    if (names.has(name)) causes.push(duplicate(`${vp}.name`, name));
    names.add(name);
  });
  return { causes, names };
}

const HOST_PATH_TYPES = [
  '',
  'BlockDevice',
  'CharDevice',
  'Directory',
  'DirectoryOrCreate',
  'File',
  'FileOrCreate',
  'Socket',
];

/** `validateHostPathVolumeSource` (pod volumes and PersistentVolumes): a path without `..` steps, a known type. */
export function validateHostPath(hostPath: Obj, path: string): StatusCause[] {
  const p = str(hostPath.path);
  if (!p) return [required(`${path}.path`)];
  const out: StatusCause[] = [];
  if (p.split('/').includes('..')) out.push(invalid(`${path}.path`, p, "must not contain '..'"));
  if (typeof hostPath.type === 'string' && !HOST_PATH_TYPES.includes(hostPath.type))
    out.push(notSupported(`${path}.type`, hostPath.type, HOST_PATH_TYPES));
  return out;
}

/**
 * `ValidatePodSpec` (the common subset): containers, volumes, restart and DNS policy, service
 * account name, tolerations and `activeDeadlineSeconds`. `path` is the spec's field path
 * (`spec` or `spec.template.spec`).
 */
export function validatePodSpec(spec: unknown, path: string): StatusCause[] {
  if (!isObj(spec)) return [required(path)];
  const out: StatusCause[] = [];
  const { causes, names } = validateVolumes(spec.volumes, `${path}.volumes`);
  out.push(...causes);
  const claims = new Set(
    objs(spec.volumes)
      .filter((v) => isObj(v.persistentVolumeClaim) || isObj(v.ephemeral))
      .map((v) => str(v.name)),
  );
  const volumes: PodVolumes = { names, claims };
  const containers = objs(spec.containers);
  if (containers.length === 0) out.push(required(`${path}.containers`));
  const seen = new Set<string>();
  // The pod's termination grace period bounds a lifecycle hook's sleep (defaulted to 30).
  const grace = numOr(spec.terminationGracePeriodSeconds);
  containers.forEach((c, i) => {
    const cp = `${path}.containers[${i}]`;
    out.push(...validateContainer(c, cp, volumes));
    const name = str(c.name);
    if (seen.has(name)) out.push(duplicate(`${cp}.name`, name));
    else seen.add(name);
    out.push(...validateContainerHooks(c, cp, grace, 'container'));
  });
  // A host port once across the regular containers (init containers run one at a time).
  out.push(...hostPortConflicts(containers, `${path}.containers`));
  objs(spec.initContainers).forEach((c, i) => {
    const cp = `${path}.initContainers[${i}]`;
    out.push(...validateContainer(c, cp, volumes));
    out.push(...validateInitRestartPolicy(c, cp));
    const name = str(c.name);
    if (name && seen.has(name)) out.push(duplicate(`${cp}.name`, name));
    else seen.add(name);
    out.push(...validateContainerHooks(c, cp, grace, 'init'));
  });
  out.push(...validateEphemeralContainers(spec, path, (c, p) => validateContainer(c, p, volumes)));
  const restart = str(spec.restartPolicy);
  if (!restart) out.push(required(`${path}.restartPolicy`));
  else if (!RESTART_POLICIES.includes(restart))
    out.push(notSupported(`${path}.restartPolicy`, restart, RESTART_POLICIES));
  const dns = str(spec.dnsPolicy);
  if (!dns) out.push(required(`${path}.dnsPolicy`));
  else if (!DNS_POLICIES.includes(dns)) out.push(notSupported(`${path}.dnsPolicy`, dns, DNS_POLICIES));
  const sa = str(spec.serviceAccountName);
  if (sa) for (const m of isDNS1123Subdomain(sa)) out.push(invalid(`${path}.serviceAccountName`, sa, m));
  const node = str(spec.nodeName);
  if (node) for (const m of isDNS1123Subdomain(node)) out.push(invalid(`${path}.nodeName`, node, m));
  out.push(...validateTolerations(spec.tolerations, `${path}.tolerations`));
  const ads = numOr(spec.activeDeadlineSeconds);
  if (ads !== undefined && (ads < 1 || ads > 2147483647)) {
    out.push(invalid(`${path}.activeDeadlineSeconds`, ads, 'must be between 1 and 2147483647, inclusive'));
  }
  out.push(...validateLabels(spec.nodeSelector, `${path}.nodeSelector`));
  out.push(...validatePodLevel(spec, path));
  return out;
}

/** The pod-level fields users get wrong: ids, host names, affinity terms, gates, aliases, spread. */
function validatePodLevel(spec: Obj, path: string): StatusCause[] {
  const out = validatePodSecurityContext(spec, path);
  for (const f of ['hostname', 'subdomain']) {
    const v = str(spec[f]);
    if (v) for (const m of isDNS1123Label(v)) out.push(invalid(`${path}.${f}`, v, m));
  }
  const terms = dig(spec.affinity, 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution');
  if (isObj(terms) && objs(terms.nodeSelectorTerms).length === 0) {
    out.push(
      required(
        `${path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`,
        'must have at least one node selector term',
      ),
    );
  }
  out.push(...validateAffinityTerms(spec, path));
  out.push(...validatePodDNSConfig(spec, path));
  objs(spec.readinessGates).forEach((g, i) => {
    const type = str(g.conditionType);
    for (const m of isQualifiedName(type))
      out.push(invalid(`${path}.readinessGates[${i}].conditionType`, type, m));
  });
  objs(spec.hostAliases).forEach((a, i) => {
    const ip = str(a.ip);
    if (isIP(ip) === 0)
      out.push(
        invalid(
          `${path}.hostAliases[${i}].ip`,
          ip,
          'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        ),
      );
    strs(a.hostnames).forEach((h, j) => {
      for (const m of isDNS1123Subdomain(h))
        out.push(invalid(`${path}.hostAliases[${i}].hostnames[${j}]`, h, m));
    });
  });
  const constraints = objs(spec.topologySpreadConstraints);
  const pairOf = (c: Obj) => `${str(c.topologyKey)}\u0000${str(c.whenUnsatisfiable)}`;
  constraints.forEach((c, i) => {
    const cp = `${path}.topologySpreadConstraints[${i}]`;
    const skew = numOr(c.maxSkew) ?? 0;
    if (skew <= 0) out.push(invalid(`${cp}.maxSkew`, skew, 'must be greater than zero'));
    const key = str(c.topologyKey);
    if (!key) out.push(required(`${cp}.topologyKey`, 'can not be empty'));
    const when = str(c.whenUnsatisfiable);
    if (when !== 'DoNotSchedule' && when !== 'ScheduleAnyway')
      out.push(notSupported(`${cp}.whenUnsatisfiable`, when, ['DoNotSchedule', 'ScheduleAnyway']));
    // ValidateSpreadConstraintNotRepeat: the first of two alike is the one reported.
    if (constraints.slice(i + 1).some((later) => pairOf(later) === pairOf(c)))
      out.push(duplicate(`${cp}.{topologyKey, whenUnsatisfiable}`, `{${key}, ${when}}`));
    const minDomains = numOr(c.minDomains);
    if (minDomains !== undefined && minDomains <= 0)
      out.push(invalid(`${cp}.minDomains`, minDomains, 'must be greater than zero'));
    if (minDomains !== undefined && when !== 'DoNotSchedule')
      out.push(
        invalid(
          `${cp}.minDomains`,
          minDomains,
          `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${when}`,
        ),
      );
    for (const f of ['nodeAffinityPolicy', 'nodeTaintsPolicy'])
      if (isSet(c[f]) && c[f] !== 'Honor' && c[f] !== 'Ignore')
        out.push(notSupported(`${cp}.${f}`, c[f], ['Honor', 'Ignore']));
  });
  // validateOS: a pod's OS is linux or windows.
  if (isObj(spec.os)) {
    const os = str(spec.os.name);
    if (!os) out.push(required(`${path}.os.name`, 'cannot be empty'));
    else if (os !== 'linux' && os !== 'windows')
      out.push(notSupported(`${path}.os`, os, ['linux', 'windows']));
  }
  return out;
}

/** `validatePodDNSConfig`: what dnsPolicy None needs, and the resolver's limits (3 nameservers, 32 searches). */
function validatePodDNSConfig(spec: Obj, path: string): StatusCause[] {
  const p = `${path}.dnsConfig`;
  const config = spec.dnsConfig;
  if (str(spec.dnsPolicy) === 'None') {
    if (!isObj(config)) return [required(p, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if (strs(config.nameservers).length === 0)
      return [
        required(`${p}.nameservers`, 'must provide at least one DNS nameserver when `dnsPolicy` is None'),
      ];
  }
  if (!isObj(config)) return [];
  const out: StatusCause[] = [];
  const nameservers = strs(config.nameservers);
  if (nameservers.length > 3)
    out.push(
      invalid(
        `${p}.nameservers`,
        new GoValue(goStrings(nameservers)),
        'must not have more than 3 nameservers',
      ),
    );
  nameservers.forEach((ns, i) => {
    if (isIP(ns) === 0)
      out.push(
        invalid(
          `${p}.nameservers[${i}]`,
          ns,
          'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        ),
      );
  });
  const searches = strs(config.searches);
  if (searches.length > 32)
    out.push(
      invalid(`${p}.searches`, new GoValue(goStrings(searches)), 'must not have more than 32 search paths'),
    );
  if (searches.join(' ').length > 2048)
    out.push(
      invalid(
        `${p}.searches`,
        new GoValue(goStrings(searches)),
        'must not have more than 2048 characters (including spaces) in the search list',
      ),
    );
  searches.forEach((search, i) => {
    if (i === 0 && search === '.') return;
    const name = search.endsWith('.') ? search.slice(0, -1) : search;
    for (const m of isDNS1123Subdomain(name)) out.push(invalid(`${p}.searches[${i}]`, name, m));
  });
  objs(config.options).forEach((o, i) => {
    if (!str(o.name)) out.push(required(`${p}.options[${i}]`, 'must not be empty'));
  });
  return out;
}

/** `ValidatePodTemplateSpec`: template labels and the pod spec. */
export function validatePodTemplate(template: unknown, path: string): StatusCause[] {
  if (!isObj(template)) return [required(path)];
  return [
    ...validateLabels(dig(template, 'metadata', 'labels'), `${path}.labels`),
    ...validatePodSpec(template.spec, `${path}.spec`),
    ...validateNoEphemeralInTemplate(template, path),
  ];
}

const UPDATABLE_POD_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
].join(',');

/** `ValidatePodUpdate`: a pod's spec is immutable except images, activeDeadlineSeconds and added tolerations. */
export function validatePodUpdate(pod: Obj, old: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = isObj(pod.spec) ? pod.spec : {};
  const oldSpec = isObj(old.spec) ? old.spec : {};
  for (const list of ['containers', 'initContainers'] as const) {
    const next = objs(spec[list]);
    const prev = objs(oldSpec[list]);
    if (next.length !== prev.length) {
      return [forbidden(`spec.${list}`, 'pod updates may not add or remove containers')];
    }
    next.forEach((c, i) => {
      const image = str(c.image);
      if (!image) out.push(required(`spec.${list}[${i}].image`));
      if (image.trim() !== image) {
        out.push(invalid(`spec.${list}[${i}].image`, image, 'must not have leading or trailing whitespace'));
      }
    });
  }
  const ads = numOr(spec.activeDeadlineSeconds);
  const oldAds = numOr(oldSpec.activeDeadlineSeconds);
  if (ads !== undefined) {
    if (ads < 0 || ads > 2147483647) {
      out.push(invalid('spec.activeDeadlineSeconds', ads, 'must be between 0 and 2147483647, inclusive'));
      return out;
    }
    if (oldAds !== undefined && oldAds < ads) {
      out.push(invalid('spec.activeDeadlineSeconds', ads, 'must be less than or equal to previous value'));
      return out;
    }
  } else if (oldAds !== undefined) {
    out.push(
      invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'),
    );
  }
  // Tolerations may only be added (an existing one may change only its tolerationSeconds).
  const oldTolerations = objs(oldSpec.tolerations);
  const newTolerations = objs(spec.tolerations);
  for (const t of oldTolerations) {
    const same = (n: Obj): boolean =>
      ['key', 'operator', 'value', 'effect'].every((k) => str(n[k]) === str(t[k]));
    if (!newTolerations.some(same)) {
      out.push(
        forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'),
      );
      break;
    }
  }
  // Scheduling gates may only be removed (validateOnlyDeletedSchedulingGates).
  const oldGates = new Set(objs(oldSpec.schedulingGates).map((g) => str(g.name)));
  objs(spec.schedulingGates).forEach((g, i) => {
    if (!oldGates.has(str(g.name)))
      out.push(
        forbidden(
          `spec.schedulingGates[${i}].name`,
          `only deletion is allowed, but found new scheduling gate '${str(g.name)}'`,
        ),
      );
  });
  // Everything else must be unchanged: compare with the mutable fields taken from the old pod.
  const munged = structuredClone(spec);
  munged.schedulingGates = oldSpec.schedulingGates;
  for (const list of ['containers', 'initContainers'] as const) {
    objs(munged[list]).forEach((c, i) => {
      c.image = objs(oldSpec[list])[i]?.image;
    });
  }
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  munged.tolerations = oldSpec.tolerations;
  const oldGrace = numOr(oldSpec.terminationGracePeriodSeconds);
  if (oldGrace !== undefined && oldGrace < 0 && numOr(spec.terminationGracePeriodSeconds) === 1) {
    munged.terminationGracePeriodSeconds = oldSpec.terminationGracePeriodSeconds;
  }
  if (!semanticEqual(munged, oldSpec)) {
    const changed = [...new Set([...Object.keys(munged), ...Object.keys(oldSpec)])]
      .filter((k) => !semanticEqual(munged[k], oldSpec[k]))
      .sort();
    const diff = changed.map(
      (k) => `  spec.${k}: ${JSON.stringify(oldSpec[k] ?? null)} -> ${JSON.stringify(munged[k] ?? null)}`,
    );
    out.push(
      forbidden(
        'spec',
        `pod updates may not change fields other than ${UPDATABLE_POD_FIELDS}\n${diff.join('\n')}`,
      ),
    );
  }
  return out;
}
