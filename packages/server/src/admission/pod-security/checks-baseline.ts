/**
 * The baseline checks of the Pod Security Standards (k8s.io/pod-security-admission `policy`,
 * Kubernetes 1.32), with kube's forbidden reasons and details.
 */
import { goQuote } from '../../openapi/field-validation.js';
import type { Obj } from '../../util/object.js';
import {
  type Check,
  containers,
  joinQuote,
  obj,
  pluralize,
  podSecurityContext,
  securityContext,
  setters,
  sortedUnique,
  str,
  type Violation,
} from './policy.js';

const annotations = (meta: Obj): Obj => obj(meta.annotations) ?? {};

// --- appArmorProfile -------------------------------------------------------------------------

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const allowedAppArmorAnnotation = (v: string) =>
  v === '' || v === 'runtime/default' || v.startsWith('localhost/');
const allowedAppArmorType = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';

/** AppArmor must not be unconfined: neither by the fields (1.30+) nor the beta annotations. */
function appArmorProfile(meta: Obj, spec: Obj): Violation | undefined {
  const badValues: string[] = [];
  const podProfile = obj(podSecurityContext(spec)?.appArmorProfile);
  const podBad = podProfile !== undefined && !allowedAppArmorType(podProfile.type);
  if (podBad) badValues.push(str(podProfile.type));
  const badContainers: string[] = [];
  for (const c of containers(spec)) {
    const profile = obj(securityContext(c)?.appArmorProfile);
    if (profile && !allowedAppArmorType(profile.type)) {
      badContainers.push(str(c.name));
      badValues.push(str(profile.type));
    }
  }
  const who = setters(podBad, badContainers);
  const badAnnotations = Object.entries(annotations(meta))
    .filter(([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && !allowedAppArmorAnnotation(str(v)))
    .map(([k, v]) => `${k}=${goQuote(str(v))}`)
    .sort();
  const values = [...sortedUnique(badValues), ...badAnnotations];
  if (badAnnotations.length > 0) who.push(pluralize('annotation', 'annotations', badAnnotations.length));
  if (who.length === 0) return undefined;
  return {
    reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    detail: `${who.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  };
}

// --- capabilities_baseline -------------------------------------------------------------------

const DEFAULT_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => str(x)) : []);

/** Only the container runtime's default capabilities may be added. */
function capabilitiesBaseline(_meta: Obj, spec: Obj): Violation | undefined {
  const badContainers: string[] = [];
  const nonDefault: string[] = [];
  for (const c of containers(spec)) {
    const added = strings(obj(securityContext(c)?.capabilities)?.add).filter(
      (x) => !DEFAULT_CAPABILITIES.has(x),
    );
    if (added.length === 0) continue;
    badContainers.push(str(c.name));
    nonDefault.push(...added);
  }
  if (badContainers.length === 0) return undefined;
  return {
    reason: 'non-default capabilities',
    detail: `${pluralize('container', 'containers', badContainers.length)} ${joinQuote(badContainers)} must not include ${joinQuote(sortedUnique(nonDefault))} in securityContext.capabilities.add`,
  };
}

// --- hostNamespaces, hostPathVolumes, hostPorts ------------------------------------------------

function hostNamespaces(_meta: Obj, spec: Obj): Violation | undefined {
  const used = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((f) => spec[f] === true);
  if (used.length === 0) return undefined;
  return { reason: 'host namespaces', detail: sortedUnique(used).join(', ') };
}

const volumes = (spec: Obj): Obj[] =>
  Array.isArray(spec.volumes) ? spec.volumes.filter((v): v is Obj => obj(v) !== undefined) : [];

function hostPathVolumes(_meta: Obj, spec: Obj): Violation | undefined {
  const names = volumes(spec)
    .filter((v) => v.hostPath !== undefined && v.hostPath !== null)
    .map((v) => str(v.name));
  if (names.length === 0) return undefined;
  return {
    reason: 'hostPath volumes',
    detail: `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}`,
  };
}

function hostPorts(_meta: Obj, spec: Obj): Violation | undefined {
  const badContainers: string[] = [];
  const ports: string[] = [];
  for (const c of containers(spec)) {
    const used = (Array.isArray(c.ports) ? c.ports : [])
      .map((p) => obj(p)?.hostPort)
      .filter((p): p is number => typeof p === 'number' && p !== 0);
    if (used.length === 0) continue;
    badContainers.push(str(c.name));
    ports.push(...used.map(String));
  }
  if (badContainers.length === 0) return undefined;
  const unique = sortedUnique(ports);
  return {
    reason: 'hostPort',
    detail: `${pluralize('container', 'containers', badContainers.length)} ${joinQuote(badContainers)} ${pluralize('uses', 'use', badContainers.length)} ${pluralize('hostPort', 'hostPorts', unique.length)} ${unique.join(', ')}`,
  };
}

// --- privileged, procMount -------------------------------------------------------------------

function privileged(_meta: Obj, spec: Obj): Violation | undefined {
  const bad = containers(spec)
    .filter((c) => securityContext(c)?.privileged === true)
    .map((c) => str(c.name));
  if (bad.length === 0) return undefined;
  return {
    reason: 'privileged',
    detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not set securityContext.privileged=true`,
  };
}

function procMount(_meta: Obj, spec: Obj): Violation | undefined {
  const bad: string[] = [];
  const types: string[] = [];
  for (const c of containers(spec)) {
    const mount = securityContext(c)?.procMount;
    if (typeof mount !== 'string' || mount === 'Default') continue;
    bad.push(str(c.name));
    types.push(mount);
  }
  if (bad.length === 0) return undefined;
  return {
    reason: 'procMount',
    detail: `${pluralize('container', 'containers', bad.length)} ${joinQuote(bad)} must not set securityContext.procMount to ${joinQuote(sortedUnique(types))}`,
  };
}

// --- seLinuxOptions --------------------------------------------------------------------------

const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);

function seLinuxOptions(_meta: Obj, spec: Obj): Violation | undefined {
  const badTypes: string[] = [];
  let setUser = false;
  let setRole = false;
  const valid = (o: Obj | undefined): boolean => {
    if (!o) return true;
    let ok = true;
    if (!SELINUX_TYPES.has(str(o.type))) {
      ok = false;
      badTypes.push(str(o.type));
    }
    if (str(o.user) !== '') {
      ok = false;
      setUser = true;
    }
    if (str(o.role) !== '') {
      ok = false;
      setRole = true;
    }
    return ok;
  };
  const podBad = !valid(obj(podSecurityContext(spec)?.seLinuxOptions));
  const badContainers = containers(spec)
    .filter((c) => !valid(obj(securityContext(c)?.seLinuxOptions)))
    .map((c) => str(c.name));
  const who = setters(podBad, badContainers);
  if (who.length === 0) return undefined;
  const data: string[] = [];
  const types = sortedUnique(badTypes);
  if (types.length > 0) data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
  if (setUser) data.push('user may not be set');
  if (setRole) data.push('role may not be set');
  return {
    reason: 'seLinuxOptions',
    detail: `${who.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`,
  };
}

// --- seccompProfile_baseline -----------------------------------------------------------------

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const validSeccompAnnotation = (v: string) =>
  v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
/** A seccomp profile type the baseline and restricted levels allow. */
export const validSeccompType = (t: unknown) => t === 'Localhost' || t === 'RuntimeDefault';

/** Before 1.19: the alpha seccomp annotations. */
function seccompBaselineAnnotations(meta: Obj, spec: Obj): Violation | undefined {
  const a = annotations(meta);
  const bad: string[] = [];
  const look = (key: string) => {
    if (key in a && !validSeccompAnnotation(str(a[key]))) bad.push(`${key}=${goQuote(str(a[key]))}`);
  };
  look(SECCOMP_POD_ANNOTATION);
  for (const c of containers(spec)) look(SECCOMP_CONTAINER_PREFIX + str(c.name));
  if (bad.length === 0) return undefined;
  const unique = sortedUnique(bad);
  return {
    reason: 'seccompProfile',
    detail: `forbidden ${pluralize('annotation', 'annotations', unique.length)} ${unique.join(', ')}`,
  };
}

/**
 * The explicitly bad seccomp setters and values (a type other than RuntimeDefault or
 * Localhost), shared with the restricted check.
 */
export function badSeccomp(spec: Obj): {
  podBad: boolean;
  podValid: boolean;
  containers: string[];
  values: string[];
} {
  const values: string[] = [];
  const podProfile = obj(podSecurityContext(spec)?.seccompProfile);
  const podBad = podProfile !== undefined && !validSeccompType(podProfile.type);
  if (podBad) values.push(str(podProfile.type));
  const bad: string[] = [];
  for (const c of containers(spec)) {
    const profile = obj(securityContext(c)?.seccompProfile);
    if (profile && !validSeccompType(profile.type)) {
      bad.push(str(c.name));
      values.push(str(profile.type));
    }
  }
  return { podBad, podValid: podProfile !== undefined && !podBad, containers: bad, values };
}

/** The 1.19+ seccomp check of baseline: a profile type other than RuntimeDefault or Localhost. */
export function seccompForbidden(spec: Obj): Violation | undefined {
  const bad = badSeccomp(spec);
  const who = setters(bad.podBad, bad.containers);
  if (who.length === 0) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedUnique(bad.values))}`,
  };
}

// --- sysctls ---------------------------------------------------------------------------------

const SYSCTLS_1_0 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [
  ...SYSCTLS_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

/** Only the safe, namespaced sysctls of the version may be set. */
function sysctls(allowed: readonly string[]) {
  const safe = new Set(allowed);
  return (_meta: Obj, spec: Obj): Violation | undefined => {
    const list = podSecurityContext(spec)?.sysctls;
    const bad = (Array.isArray(list) ? list : []).map((s) => str(obj(s)?.name)).filter((n) => !safe.has(n));
    return bad.length === 0 ? undefined : { reason: 'forbidden sysctls', detail: bad.join(', ') };
  };
}

// --- windowsHostProcess ----------------------------------------------------------------------

const hostProcess = (sc: Obj | undefined) => obj(sc?.windowsOptions)?.hostProcess === true;

function windowsHostProcess(_meta: Obj, spec: Obj): Violation | undefined {
  const bad = containers(spec)
    .filter((c) => hostProcess(securityContext(c)))
    .map((c) => str(c.name));
  const who = setters(hostProcess(podSecurityContext(spec)), bad);
  if (who.length === 0) return undefined;
  return {
    reason: 'hostProcess',
    detail: `${who.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`,
  };
}

/** The baseline checks, by ID. */
export const BASELINE_CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ min: 0, check: appArmorProfile }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ min: 0, check: capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ min: 0, check: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ min: 0, check: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ min: 0, check: hostPorts }] },
  { id: 'privileged', level: 'baseline', versions: [{ min: 0, check: privileged }] },
  { id: 'procMount', level: 'baseline', versions: [{ min: 0, check: procMount }] },
  { id: 'seLinuxOptions', level: 'baseline', versions: [{ min: 0, check: seLinuxOptions }] },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { min: 0, check: seccompBaselineAnnotations },
      { min: 19, check: (_meta, spec) => seccompForbidden(spec) },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { min: 0, check: sysctls(SYSCTLS_1_0) },
      { min: 27, check: sysctls(SYSCTLS_1_27) },
      { min: 29, check: sysctls(SYSCTLS_1_29) },
      { min: 32, check: sysctls(SYSCTLS_1_32) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ min: 0, check: windowsHostProcess }] },
];
