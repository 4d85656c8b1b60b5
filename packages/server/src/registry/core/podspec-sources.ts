/**
 * Where a container's data comes from, as kube-apiserver 1.32 validates it: environment
 * variables (relaxed names, field, resource, ConfigMap and Secret key references, `envFrom`),
 * volume mounts and devices, and the sources of ConfigMap, Secret, projected, downward API and
 * emptyDir volumes.
 */
import { isQualifiedName, type StatusCause } from 'kubeloop/api';
import {
  forbidden,
  invalid,
  isConfigMapKey,
  isDNS1123Subdomain,
  isObj,
  notFound,
  notSupported,
  numOr,
  type Obj,
  objs,
  parseQuantity,
  required,
  str,
} from '../shared/util.js';

/** What `ConvertDownwardAPIFieldLabel` converts. */
const DOWNWARD_FIELDS = new Set([
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'status.phase',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
]);
/** Of those, what an env var may read, and what a downward API volume file may. */
export const ENV_FIELDS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];
const VOLUME_FIELDS = [
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
];
const RESOURCE_FIELDS = [
  'limits.cpu',
  'limits.ephemeral-storage',
  'limits.memory',
  'requests.cpu',
  'requests.ephemeral-storage',
  'requests.memory',
];
const FILE_MODE = 'must be a number between 0 and 0777 (octal), both inclusive';

const set = (v: unknown): boolean => v !== undefined && v !== null;

/** `validateObjectFieldSelector`: a field the downward API converts, among `allowed`. */
export function validateObjectFieldSelector(
  ref: Obj,
  path: string,
  allowed: readonly string[] = ENV_FIELDS,
): StatusCause[] {
  if (!str(ref.apiVersion)) return [required(`${path}.apiVersion`)];
  const fieldPath = str(ref.fieldPath);
  if (!fieldPath) return [required(`${path}.fieldPath`)];
  const subscripted = /^(metadata\.(?:annotations|labels))\['(.*)'\]$/.exec(fieldPath);
  let why: string | undefined;
  if (str(ref.apiVersion) !== 'v1') why = `unsupported pod version: ${str(ref.apiVersion)}`;
  else if (!subscripted && /\[/.test(fieldPath)) why = `field label does not support subscript: ${fieldPath}`;
  else if (!subscripted && !DOWNWARD_FIELDS.has(fieldPath) && fieldPath !== 'spec.host')
    why = `field label not supported: ${fieldPath}`;
  if (why) return [invalid(`${path}.fieldPath`, fieldPath, `error converting fieldPath: ${why}`)];
  if (subscripted) {
    const key = subscripted[1] === 'metadata.annotations' ? subscripted[2]!.toLowerCase() : subscripted[2]!;
    return isQualifiedName(key).map((m) => invalid(path, key, m));
  }
  const converted = fieldPath === 'spec.host' ? 'spec.nodeName' : fieldPath;
  return allowed.includes(converted) ? [] : [notSupported(`${path}.fieldPath`, converted, allowed)];
}

/** `IsRelaxedEnvVarName` (RelaxedEnvironmentVariableValidation, beta and on in 1.32). */
export function relaxedEnvVarName(name: string, path: string): StatusCause[] {
  if (name === '') return [invalid(path, name, 'environment variable name must be non-empty')];
  for (const ch of name) {
    const c = ch.codePointAt(0)!;
    if (c > 0x7e || c < 0x20 || ch === '=')
      return [
        invalid(
          path,
          name,
          "a valid environment variable name must consist only of printable ASCII characters other than '='",
        ),
      ];
  }
  return [];
}

/** `validateConfigMapKeySelector`/`validateSecretKeySelector`: a named object and a valid key. */
export function validateKeySelector(sel: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const name = str(sel.name);
  for (const m of isDNS1123Subdomain(name)) out.push(invalid(`${path}.name`, name, m));
  const key = str(sel.key);
  if (!key) out.push(required(`${path}.key`));
  else for (const m of isConfigMapKey(key)) out.push(invalid(`${path}.key`, key, m));
  return out;
}

/** `validateContainerResourceFieldSelector`: a resource an env var or a volume file may read. */
export function validateResourceFieldRef(ref: Obj, path: string, volume: boolean): StatusCause[] {
  const resource = str(ref.resource);
  if (volume && !str(ref.containerName)) return [required(`${path}.containerName`)];
  if (!resource) return [required(`${path}.resource`)];
  if (
    RESOURCE_FIELDS.includes(resource) ||
    resource.startsWith('limits.hugepages-') ||
    resource.startsWith('requests.hugepages-')
  )
    return [];
  return [notSupported(`${path}.resource`, resource, RESOURCE_FIELDS)];
}

/** `ValidateEnvFrom`: a relaxed prefix and one of a ConfigMap or a Secret. */
export function validateEnvFrom(envFrom: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  objs(envFrom).forEach((e, i) => {
    const prefix = str(e.prefix);
    if (prefix) out.push(...relaxedEnvVarName(prefix, `${path}[${i}].prefix`));
    let sources = 0;
    for (const k of ['configMapRef', 'secretRef']) {
      if (!isObj(e[k])) continue;
      sources++;
      const name = str(e[k].name);
      if (!name) out.push(required(`${path}[${i}].${k}.name`));
      else for (const m of isDNS1123Subdomain(name)) out.push(invalid(`${path}[${i}].${k}.name`, name, m));
    }
    if (sources === 0) out.push(invalid(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources > 1) out.push(invalid(path, '', 'may not have more than one field specified at a time'));
  });
  return out;
}

/** `validateLocalDescendingPath`: relative, without `..` steps. */
export function localDescendingPath(p: string, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (p.startsWith('/')) out.push(invalid(path, p, 'must be a relative path'));
  if (p.split('/').includes('..')) out.push(invalid(path, p, "must not contain '..'"));
  return out;
}

/** `ValidateLocalNonReservedPath`: a local descending path that does not start with `..`. */
function localNonReservedPath(p: string, path: string): StatusCause[] {
  const out = localDescendingPath(p, path);
  if (p.startsWith('..') && !p.startsWith('../')) out.push(invalid(path, p, "must not start with '..'"));
  return out;
}

const badMode = (v: unknown): boolean => {
  const n = numOr(v);
  return n !== undefined && (n < 0 || n > 0o777);
};

/** `validateKeyToPath`: an item of a ConfigMap or Secret volume. */
function keyToPath(kp: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!str(kp.key)) out.push(required(`${path}.key`));
  if (!str(kp.path)) out.push(required(`${path}.path`));
  out.push(...localNonReservedPath(str(kp.path), `${path}.path`));
  if (badMode(kp.mode)) out.push(invalid(`${path}.mode`, numOr(kp.mode), FILE_MODE));
  return out;
}

/** `validateDownwardAPIVolumeFile` (kube reports its errors at the source, not at the item). */
function downwardAPIFile(file: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!str(file.path)) out.push(required(`${path}.path`));
  out.push(...localNonReservedPath(str(file.path), `${path}.path`));
  if (isObj(file.fieldRef)) {
    out.push(...validateObjectFieldSelector(file.fieldRef, `${path}.fieldRef`, VOLUME_FIELDS));
    if (isObj(file.resourceFieldRef))
      out.push(
        invalid(path, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'),
      );
  } else if (isObj(file.resourceFieldRef)) {
    out.push(...validateResourceFieldRef(file.resourceFieldRef, `${path}.resourceFieldRef`, true));
  } else out.push(required(path, 'one of fieldRef and resourceFieldRef is required'));
  if (badMode(file.mode)) out.push(invalid(`${path}.mode`, numOr(file.mode), FILE_MODE));
  return out;
}

/** The checks of `validateVolumeSource` for ConfigMap, Secret, projected, downward API and emptyDir volumes. */
export function validateVolumeSourceDetails(v: Obj, vp: string): StatusCause[] {
  const out: StatusCause[] = [];
  for (const [kind, nameField] of [
    ['secret', 'secretName'],
    ['configMap', 'name'],
  ] as const) {
    const src = v[kind];
    if (!isObj(src)) continue;
    if (!str(src[nameField])) out.push(required(`${vp}.${kind}.${nameField}`));
    if (badMode(src.defaultMode))
      out.push(invalid(`${vp}.${kind}.defaultMode`, numOr(src.defaultMode), FILE_MODE));
    objs(src.items).forEach((kp, i) => {
      out.push(...keyToPath(kp, `${vp}.${kind}.items[${i}]`));
    });
  }
  if (isObj(v.downwardAPI)) {
    const p = `${vp}.downwardAPI`;
    if (badMode(v.downwardAPI.defaultMode))
      out.push(invalid(`${p}.defaultMode`, numOr(v.downwardAPI.defaultMode), FILE_MODE));
    for (const file of objs(v.downwardAPI.items)) out.push(...downwardAPIFile(file, p));
  }
  if (isObj(v.projected)) out.push(...projected(v.projected, `${vp}.projected`));
  if (isObj(v.emptyDir) && set(v.emptyDir.sizeLimit)) {
    const q = parseQuantity(v.emptyDir.sizeLimit);
    if (q && q.num < 0n)
      out.push(forbidden(`${vp}.emptyDir.sizeLimit`, 'SizeLimit field must be a valid resource quantity'));
  }
  return out;
}

/** `validateProjectedVolumeSource`: one volume type per source, unique paths, token lifetimes. */
function projected(src: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (badMode(src.defaultMode)) out.push(invalid(`${path}.defaultMode`, numOr(src.defaultMode), FILE_MODE));
  const paths = new Set<string>();
  objs(src.sources).forEach((s, i) => {
    const sp = `${path}.sources[${i}]`;
    let sources = 0;
    for (const kind of ['secret', 'configMap'] as const) {
      const ref = s[kind];
      if (!isObj(ref)) continue;
      sources++;
      if (!str(ref.name)) out.push(required(`${sp}.${kind}.name`));
      objs(ref.items).forEach((kp, j) => {
        out.push(...keyToPath(kp, `${sp}.${kind}.items[${j}]`));
        const p = str(kp.path);
        if (p && paths.has(p)) out.push(invalid(path, str(ref.name), 'conflicting duplicate paths'));
        if (p) paths.add(p);
      });
    }
    if (isObj(s.downwardAPI)) {
      sources++;
      for (const file of objs(s.downwardAPI.items)) {
        out.push(...downwardAPIFile(file, `${sp}.downwardAPI`));
        const p = str(file.path);
        if (p && paths.has(p)) out.push(invalid(path, p, 'conflicting duplicate paths'));
        if (p) paths.add(p);
      }
    }
    if (isObj(s.serviceAccountToken)) {
      sources++;
      const seconds = numOr(s.serviceAccountToken.expirationSeconds) ?? 0;
      const tp = `${sp}.serviceAccountToken.expirationSeconds`;
      if (seconds < 600) out.push(invalid(tp, seconds, 'may not specify a duration less than 10 minutes'));
      if (seconds > 2 ** 32)
        out.push(invalid(tp, seconds, 'may not specify a duration larger than 2^32 seconds'));
      if (!str(s.serviceAccountToken.path)) out.push(required(`${path}.path`));
    }
    if (isObj(s.clusterTrustBundle)) sources++;
    if (sources > 1) out.push(forbidden(sp, 'may not specify more than 1 volume type'));
  });
  return out;
}

/**
 * `ValidateVolumeMounts` and `ValidateVolumeDevices`: mounts of known volumes at unique paths,
 * devices of claims, neither sharing a name or a path with the other.
 */
export function validateMountsAndDevices(
  c: Obj,
  path: string,
  volumes: Set<string>,
  claims: Set<string>,
): StatusCause[] {
  const out: StatusCause[] = [];
  const mounts = objs(c.volumeMounts);
  const devices = objs(c.volumeDevices);
  const deviceNames = new Set(devices.map((d) => str(d.name)));
  const devicePaths = new Set(devices.map((d) => str(d.devicePath)));
  const mountNames = new Set(mounts.map((m) => str(m.name)));
  const mountPaths = new Set(mounts.map((m) => str(m.mountPath)));
  const mp = `${path}.volumeMounts`;
  const seenMounts = new Set<string>();
  const privileged = isObj(c.securityContext) && c.securityContext.privileged === true;
  mounts.forEach((m, i) => {
    const ip = `${mp}[${i}]`;
    const name = str(m.name);
    const at = str(m.mountPath);
    if (!name) out.push(required(`${ip}.name`));
    if (!volumes.has(name)) out.push(notFound(`${ip}.name`, name));
    if (!at) out.push(required(`${ip}.mountPath`));
    if (seenMounts.has(at)) out.push(invalid(`${ip}.mountPath`, at, 'must be unique'));
    seenMounts.add(at);
    if (deviceNames.has(name))
      out.push(invalid(`${ip}.name`, name, 'must not already exist in volumeDevices'));
    if (devicePaths.has(at))
      out.push(invalid(`${ip}.mountPath`, at, 'must not already exist as a path in volumeDevices'));
    // kube names these paths without the mount's index.
    const subPath = str(m.subPath);
    if (subPath) out.push(...localDescendingPath(subPath, `${mp}.subPath`));
    const subPathExpr = str(m.subPathExpr);
    if (subPathExpr) {
      if (subPath)
        out.push(invalid(`${ip}.subPathExpr`, subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
      out.push(...localDescendingPath(subPathExpr, `${mp}.subPathExpr`));
    }
    if (set(m.mountPropagation)) {
      const propagation = str(m.mountPropagation);
      const supported = ['Bidirectional', 'HostToContainer', 'None'];
      if (!supported.includes(propagation))
        out.push(notSupported(`${mp}.mountPropagation`, propagation, supported));
      if (propagation === 'Bidirectional' && !privileged)
        out.push(
          forbidden(
            `${mp}.mountPropagation`,
            'Bidirectional mount propagation is available only to privileged containers',
          ),
        );
    }
  });
  const dp = `${path}.volumeDevices`;
  const seenNames = new Set<string>();
  const seenPaths = new Set<string>();
  devices.forEach((d, i) => {
    const ip = `${dp}[${i}]`;
    const name = str(d.name);
    const at = str(d.devicePath);
    if (!name) out.push(required(`${ip}.name`));
    if (seenNames.has(name)) out.push(invalid(`${ip}.name`, name, 'must be unique'));
    if (volumes.has(name) && !claims.has(name))
      out.push(
        invalid(
          `${ip}.name`,
          name,
          'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode',
        ),
      );
    if (!volumes.has(name)) out.push(notFound(`${ip}.name`, name));
    if (!at) out.push(required(`${ip}.devicePath`));
    if (seenPaths.has(at)) out.push(invalid(`${ip}.devicePath`, at, 'must be unique'));
    if (at?.split('/').includes('..'))
      out.push(invalid(`${ip}.devicePath`, at, "can not contain backsteps ('..')"));
    else seenPaths.add(at);
    if (mountNames.has(name)) out.push(invalid(`${ip}.name`, name, 'must not already exist in volumeMounts'));
    if (mountPaths.has(at))
      out.push(invalid(`${ip}.devicePath`, at, 'must not already exist as a path in volumeMounts'));
    if (name) seenNames.add(name);
  });
  return out;
}

/** `checkHostPortConflicts`: a host port (protocol, IP, port) once across the given containers. */
export function hostPortConflicts(containers: Obj[], path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Set<string>();
  containers.forEach((c, ci) => {
    objs(c.ports).forEach((p, pi) => {
      const port = numOr(p.hostPort) ?? 0;
      if (port === 0) return;
      const key = `${str(p.protocol)}/${str(p.hostIP)}/${port}`;
      if (seen.has(key))
        out.push({
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: ${JSON.stringify(key)}`,
          field: `${path}[${ci}].ports[${pi}].hostPort`,
        });
      seen.add(key);
    });
  });
  return out;
}
