/**
 * The pod spec wherever it appears (Pod, and the pod template of Deployments, ReplicaSets,
 * StatefulSets, DaemonSets and Jobs): `SetDefaults_PodSpec`, `SetDefaults_Container` and friends of
 * `pkg/apis/core/v1/defaults.go`, the Pod-only defaults and admission plugins, and the parts of
 * `ValidatePodSpec` a user plausibly trips over.
 */
import type { StatusCause } from 'kubeloop/api';
import {
  addQuantity,
  arr,
  compareQuantity,
  def,
  dig,
  duplicate,
  ensureObj,
  forbidden,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isObj,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
  notFound,
  notSupported,
  numOr,
  type Obj,
  objs,
  parseQuantity,
  type Quantity,
  required,
  semanticEqual,
  str,
  validateLabels,
} from '../shared/util.js';

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

/** The tag `parsers.ParseImageName` finds: `latest` when neither tag nor digest is given, undefined when unparsable. */
export function imageTag(image: string): string | undefined {
  if (image === '' || image !== image.trim()) return undefined;
  let rest = image;
  let digest = '';
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag = '';
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  // The repository path (after an optional registry host) must be lowercase.
  const slash = rest.indexOf('/');
  const first = slash >= 0 ? rest.slice(0, slash) : '';
  const hasHost = first.includes('.') || first.includes(':') || first === 'localhost';
  const path = hasHost ? rest.slice(slash + 1) : rest;
  if (path === '' || /[A-Z]/.test(path)) return undefined;
  if (tag === '' && digest === '') return 'latest';
  return tag;
}

function defaultHTTPGet(handler: unknown): void {
  const get = dig(handler, 'httpGet');
  if (!isObj(get)) return;
  def(get, 'path', '/');
  def(get, 'scheme', 'HTTP');
}

function defaultProbe(probe: unknown): void {
  if (!isObj(probe)) return;
  for (const [k, v] of [
    ['timeoutSeconds', 1],
    ['periodSeconds', 10],
    ['successThreshold', 1],
    ['failureThreshold', 3],
  ] as const) {
    if (!numOr(probe[k])) probe[k] = v;
  }
  defaultHTTPGet(probe);
  const grpc = probe.grpc;
  if (isObj(grpc) && grpc.service === undefined) grpc.service = '';
}

function defaultFieldRef(item: unknown): void {
  const ref = dig(item, 'fieldRef');
  if (isObj(ref)) def(ref, 'apiVersion', 'v1');
}

/** `SetDefaults_Container` plus the declarative defaults of its nested types. */
export function defaultContainer(c: Obj): void {
  if (!str(c.imagePullPolicy)) {
    c.imagePullPolicy = imageTag(str(c.image)) === 'latest' ? 'Always' : 'IfNotPresent';
  }
  def(c, 'terminationMessagePath', '/dev/termination-log');
  def(c, 'terminationMessagePolicy', 'File');
  // ResourceRequirements is a struct, so Go always serializes it.
  if (!isObj(c.resources)) c.resources = {};
  for (const p of objs(c.ports)) def(p, 'protocol', 'TCP');
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  defaultHTTPGet(dig(c, 'lifecycle', 'postStart'));
  defaultHTTPGet(dig(c, 'lifecycle', 'preStop'));
  for (const e of objs(c.env)) defaultFieldRef(e.valueFrom);
}

const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'configMap',
  'storageos',
  'csi',
  'ephemeral',
  'image',
] as const;

/** `SetDefaults_Volume` and the defaults of the volume sources a pod usually uses. */
export function defaultVolume(v: Obj): void {
  if (!VOLUME_SOURCES.some((s) => v[s] !== undefined && v[s] !== null)) v.emptyDir = {};
  for (const s of ['secret', 'configMap', 'downwardAPI', 'projected'] as const) {
    const src = v[s];
    if (isObj(src) && src.defaultMode === undefined) src.defaultMode = 420;
  }
  for (const item of objs(dig(v, 'downwardAPI', 'items'))) defaultFieldRef(item);
  for (const source of objs(dig(v, 'projected', 'sources'))) {
    const token = source.serviceAccountToken;
    if (isObj(token) && token.expirationSeconds === undefined) token.expirationSeconds = 3600;
    for (const item of objs(dig(source, 'downwardAPI', 'items'))) defaultFieldRef(item);
  }
  const hostPath = v.hostPath;
  if (isObj(hostPath) && hostPath.type === undefined) hostPath.type = '';
  const claimSpec = dig(v, 'ephemeral', 'volumeClaimTemplate', 'spec');
  if (isObj(claimSpec)) def(claimSpec, 'volumeMode', 'Filesystem');
}

/** `SetDefaults_PodSpec` plus the defaults of its containers and volumes (for pods and pod templates). */
export function defaultPodSpec(spec: Obj): void {
  def(spec, 'dnsPolicy', 'ClusterFirst');
  def(spec, 'restartPolicy', 'Always');
  if (!isObj(spec.securityContext)) spec.securityContext = {};
  if (numOr(spec.terminationGracePeriodSeconds) === undefined) spec.terminationGracePeriodSeconds = 30;
  def(spec, 'schedulerName', 'default-scheduler');
  // The v1 conversion keeps the deprecated `serviceAccount` mirroring `serviceAccountName`.
  if (!str(spec.serviceAccountName) && str(spec.serviceAccount))
    spec.serviceAccountName = spec.serviceAccount;
  if (str(spec.serviceAccountName)) spec.serviceAccount = spec.serviceAccountName;
  for (const list of CONTAINER_LISTS) for (const c of objs(spec[list])) defaultContainer(c);
  for (const v of objs(spec.volumes)) defaultVolume(v);
}

/** Defaults of a `PodTemplateSpec`: the spec, and the `creationTimestamp: null` Go writes for its empty ObjectMeta. */
export function defaultPodTemplate(template: Obj): void {
  const m = ensureObj(template, 'metadata');
  if (m.creationTimestamp === undefined) m.creationTimestamp = null;
  defaultPodSpec(ensureObj(template, 'spec'));
}

// ---------------------------------------------------------------------------------------------
// Pod only: SetDefaults_Pod, the admission plugins every cluster runs, and the initial status.

const SA_TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The 5-character suffix of the `kube-api-access-*` volume; derived from the uid so a re-applied default is stable. */
function suffixFor(uid: string): string {
  let h = 2166136261;
  for (let i = 0; i < uid.length; i++) h = Math.imul(h ^ uid.charCodeAt(i), 16777619) >>> 0;
  let out = '';
  for (let i = 0; i < 5; i++) {
    out += SUFFIX_ALPHABET[h % SUFFIX_ALPHABET.length];
    h = Math.floor(h / SUFFIX_ALPHABET.length) ^ Math.imul(h, 31 + i);
    h >>>= 0;
  }
  return out;
}

/** The ServiceAccount admission plugin: `serviceAccountName: default` and the projected API token volume. */
function admitServiceAccount(pod: Obj, spec: Obj): void {
  def(spec, 'serviceAccountName', 'default');
  spec.serviceAccount = spec.serviceAccountName;
  if (spec.automountServiceAccountToken === false) return;
  const containers = CONTAINER_LISTS.flatMap((l) => objs(spec[l]));
  const mounted = containers.some((c) => objs(c.volumeMounts).some((m) => m.mountPath === SA_TOKEN_PATH));
  if (mounted) return;
  const volumes = objs(spec.volumes);
  let name = volumes.map((v) => str(v.name)).find((n) => n.startsWith('kube-api-access-'));
  if (!name) {
    name = `kube-api-access-${suffixFor(str(dig(pod, 'metadata', 'uid')) || str(dig(pod, 'metadata', 'name')))}`;
    spec.volumes = [
      ...arr(spec.volumes),
      {
        name,
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { items: [{ key: 'ca.crt', path: 'ca.crt' }], name: 'kube-root-ca.crt' } },
            {
              downwardAPI: {
                items: [
                  { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' },
                ],
              },
            },
          ],
        },
      },
    ];
  }
  for (const c of containers) {
    c.volumeMounts = [...arr(c.volumeMounts), { mountPath: SA_TOKEN_PATH, name, readOnly: true }];
  }
}

/** The DefaultTolerationSeconds admission plugin: tolerate not-ready/unreachable nodes for 300s. */
function admitDefaultTolerations(spec: Obj): void {
  const tolerations = objs(spec.tolerations);
  const tolerates = (key: string): boolean =>
    tolerations.some((t) => (t.key === key || !str(t.key)) && (t.effect === 'NoExecute' || !str(t.effect)));
  const added: Obj[] = [];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    if (!tolerates(key)) added.push({ effect: 'NoExecute', key, operator: 'Exists', tolerationSeconds: 300 });
  }
  if (added.length > 0) spec.tolerations = [...arr(spec.tolerations), ...added];
}

const SYSTEM_PRIORITIES: Record<string, number> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};

/** The Priority admission plugin for the classes every cluster has (no PriorityClass objects are served). */
function admitPriority(spec: Obj): void {
  const cls = str(spec.priorityClassName);
  if (cls === '') {
    if (numOr(spec.priority) === undefined) spec.priority = 0;
  } else if (Object.hasOwn(SYSTEM_PRIORITIES, cls)) {
    if (numOr(spec.priority) === undefined) spec.priority = SYSTEM_PRIORITIES[cls];
  } else return;
  def(spec, 'preemptionPolicy', 'PreemptLowerPriority');
}

const QOS_RESOURCES = ['cpu', 'memory'];

/** `qos.GetPodQOS`. */
export function podQOS(spec: Obj): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const zero: Quantity = { num: 0n, den: 1n };
  const requests = new Map<string, Quantity>();
  const limits = new Map<string, Quantity>();
  let guaranteed = true;
  for (const c of [...objs(spec.containers), ...objs(spec.initContainers)]) {
    for (const [name, raw] of Object.entries(strMapLoose(dig(c, 'resources', 'requests')))) {
      const q = parseQuantity(raw);
      if (!QOS_RESOURCES.includes(name) || !q || compareQuantity(q, zero) <= 0) continue;
      const prev = requests.get(name);
      requests.set(name, prev ? addQuantity(prev, q) : q);
    }
    const found = new Set<string>();
    for (const [name, raw] of Object.entries(strMapLoose(dig(c, 'resources', 'limits')))) {
      const q = parseQuantity(raw);
      if (!QOS_RESOURCES.includes(name) || !q || compareQuantity(q, zero) <= 0) continue;
      found.add(name);
      const prev = limits.get(name);
      limits.set(name, prev ? addQuantity(prev, q) : q);
    }
    if (!QOS_RESOURCES.every((r) => found.has(r))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      const lim = limits.get(name);
      if (!lim || compareQuantity(lim, req) !== 0) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/** A resource list whose quantities may be strings or numbers. */
function strMapLoose(v: unknown): Record<string, unknown> {
  return isObj(v) ? v : {};
}

/**
 * Everything a new Pod gets before it is stored: `SetDefaults_PodSpec`, `SetDefaults_Pod`
 * (requests default to limits, `enableServiceLinks`, host ports under host networking), the
 * ServiceAccount, DefaultTolerationSeconds and Priority admission plugins, and the initial
 * `status` (`phase: Pending`, `qosClass`).
 */
export function defaultPod(pod: Obj): void {
  const spec = ensureObj(pod, 'spec');
  defaultPodSpec(spec);
  for (const list of ['containers', 'initContainers'] as const) {
    for (const c of objs(spec[list])) {
      const resources = ensureObj(c, 'resources');
      if (!isObj(resources.limits)) continue;
      const requests = ensureObj(resources, 'requests');
      for (const [k, v] of Object.entries(resources.limits)) if (requests[k] === undefined) requests[k] = v;
    }
  }
  if (typeof spec.enableServiceLinks !== 'boolean') spec.enableServiceLinks = true;
  if (spec.hostNetwork === true) {
    for (const list of ['containers', 'initContainers'] as const) {
      for (const c of objs(spec[list]))
        for (const p of objs(c.ports)) if (!numOr(p.hostPort)) p.hostPort = p.containerPort;
    }
  }
  admitServiceAccount(pod, spec);
  admitDefaultTolerations(spec);
  admitPriority(spec);
  const status = ensureObj(pod, 'status');
  def(status, 'phase', 'Pending');
  def(status, 'qosClass', podQOS(spec));
}

// ---------------------------------------------------------------------------------------------
// Validation.

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** Whether requests may be below limits (`helper.IsOvercommitAllowed`): native resources other than hugepages. */
function overcommitAllowed(resource: string): boolean {
  const native = !resource.includes('/') || resource.startsWith('kubernetes.io/');
  return native && !resource.startsWith('hugepages-');
}

function validateResources(resources: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const limits = strMapLoose(dig(resources, 'limits'));
  const requests = strMapLoose(dig(resources, 'requests'));
  for (const [name, raw] of [...Object.entries(limits), ...Object.entries(requests)]) {
    const q = parseQuantity(raw);
    const which = Object.hasOwn(requests, name) && requests[name] === raw ? 'requests' : 'limits';
    if (q && q.num < 0n)
      out.push(invalid(`${path}.${which}[${name}]`, String(raw), 'must be greater than or equal to 0'));
  }
  for (const [name, raw] of Object.entries(requests)) {
    const req = parseQuantity(raw);
    const limRaw = limits[name];
    const lim = parseQuantity(limRaw);
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

function validateContainer(c: Obj, path: string, volumes: Set<string>): StatusCause[] {
  const out: StatusCause[] = [];
  const name = str(c.name);
  if (!name) out.push(required(`${path}.name`));
  else for (const m of isDNS1123Label(name)) out.push(invalid(`${path}.name`, name, m));
  if (!str(c.image)) out.push(required(`${path}.image`));
  const tmp = str(c.terminationMessagePolicy);
  if (!tmp)
    out.push(required(`${path}.terminationMessagePolicy`, "must be 'File' or 'FallbackToLogsOnError'"));
  else if (tmp !== 'File' && tmp !== 'FallbackToLogsOnError') {
    out.push(notSupported(`${path}.terminationMessagePolicy`, tmp, ['File', 'FallbackToLogsOnError']));
  }
  out.push(...validatePorts(c.ports, `${path}.ports`));
  objs(c.env).forEach((e, i) => {
    const n = str(e.name);
    if (!n) out.push(required(`${path}.env[${i}].name`));
    else for (const m of isEnvVarName(n)) out.push(invalid(`${path}.env[${i}].name`, n, m));
  });
  const mountPaths = new Set<string>();
  objs(c.volumeMounts).forEach((m, i) => {
    const mp = `${path}.volumeMounts[${i}]`;
    const n = str(m.name);
    if (!n) out.push(required(`${mp}.name`));
    if (!volumes.has(n)) out.push(notFound(`${mp}.name`, n));
    const at = str(m.mountPath);
    if (!at) out.push(required(`${mp}.mountPath`));
    if (mountPaths.has(at)) out.push(invalid(`${mp}.mountPath`, at, 'must be unique'));
    mountPaths.add(at);
  });
  const policy = str(c.imagePullPolicy);
  if (!policy) out.push(required(`${path}.imagePullPolicy`));
  else if (!PULL_POLICIES.includes(policy))
    out.push(notSupported(`${path}.imagePullPolicy`, policy, PULL_POLICIES));
  out.push(...validateResources(c.resources, `${path}.resources`));
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
    if (isObj(v.secret) && !str(v.secret.secretName)) causes.push(required(`${vp}.secret.secretName`));
    if (isObj(v.configMap) && !str(v.configMap.name)) causes.push(required(`${vp}.configMap.name`));
    if (isObj(v.persistentVolumeClaim) && !str(v.persistentVolumeClaim.claimName)) {
      causes.push(required(`${vp}.persistentVolumeClaim.claimName`));
    }
    if (isObj(v.hostPath) && !str(v.hostPath.path)) causes.push(required(`${vp}.hostPath.path`));
    if (!name) causes.push(required(`${vp}.name`));
    else for (const m of isDNS1123Label(name)) causes.push(invalid(`${vp}.name`, name, m));
    if (names.has(name)) causes.push(duplicate(`${vp}.name`, name));
    names.add(name);
  });
  return { causes, names };
}

function validateTolerations(tolerations: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  objs(tolerations).forEach((t, i) => {
    const tp = `${path}[${i}]`;
    const op = str(t.operator);
    if (op === '' || op === 'Equal') {
      const msgs = isValidLabelValue(str(t.value));
      if (msgs.length > 0) out.push(invalid(`${tp}.operator`, str(t.value), msgs.join(';')));
    } else if (op === 'Exists') {
      if (str(t.value))
        out.push(invalid(`${tp}.operator`, t, "value must be empty when `operator` is 'Exists'"));
    } else out.push(notSupported(`${tp}.operator`, op, ['Equal', 'Exists']));
    const effect = str(t.effect);
    if (effect && !TAINT_EFFECTS.includes(effect))
      out.push(notSupported(`${tp}.effect`, effect, TAINT_EFFECTS));
  });
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
  const { causes, names: volumes } = validateVolumes(spec.volumes, `${path}.volumes`);
  out.push(...causes);
  const containers = objs(spec.containers);
  if (containers.length === 0) out.push(required(`${path}.containers`));
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    const cp = `${path}.containers[${i}]`;
    out.push(...validateContainer(c, cp, volumes));
    const name = str(c.name);
    if (seen.has(name)) out.push(duplicate(`${cp}.name`, name));
    else seen.add(name);
  });
  objs(spec.initContainers).forEach((c, i) => {
    const cp = `${path}.initContainers[${i}]`;
    out.push(...validateContainer(c, cp, volumes));
    const name = str(c.name);
    if (name && seen.has(name)) out.push(duplicate(`${cp}.name`, name));
    else seen.add(name);
  });
  const restart = str(spec.restartPolicy);
  if (!restart) out.push(required(`${path}.restartPolicy`));
  else if (!RESTART_POLICIES.includes(restart))
    out.push(notSupported(`${path}.restartPolicy`, restart, RESTART_POLICIES));
  const dns = str(spec.dnsPolicy);
  if (!dns) out.push(required(`${path}.dnsPolicy`));
  else if (!DNS_POLICIES.includes(dns)) out.push(notSupported(`${path}.dnsPolicy`, dns, DNS_POLICIES));
  const sa = str(spec.serviceAccountName);
  if (sa) for (const m of isDNS1123Subdomain(sa)) out.push(invalid(`${path}.serviceAccountName`, sa, m));
  out.push(...validateTolerations(spec.tolerations, `${path}.tolerations`));
  const ads = numOr(spec.activeDeadlineSeconds);
  if (ads !== undefined && (ads < 1 || ads > 2147483647)) {
    out.push(invalid(`${path}.activeDeadlineSeconds`, ads, 'must be between 1 and 2147483647, inclusive'));
  }
  out.push(...validateLabels(spec.nodeSelector, `${path}.nodeSelector`));
  return out;
}

/** `ValidatePodTemplateSpec`: template labels and the pod spec. */
export function validatePodTemplate(template: unknown, path: string): StatusCause[] {
  if (!isObj(template)) return [required(path)];
  return [
    ...validateLabels(dig(template, 'metadata', 'labels'), `${path}.labels`),
    ...validatePodSpec(template.spec, `${path}.spec`),
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
  // Everything else must be unchanged: compare with the mutable fields taken from the old pod.
  const munged = structuredClone(spec);
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
