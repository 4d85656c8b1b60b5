/**
 * Defaults of the pod spec wherever it appears (Pod, and the pod template of workloads):
 * `SetDefaults_PodSpec`, `SetDefaults_Container` and friends of `pkg/apis/core/v1/defaults.go`,
 * plus the Pod-only defaults and admission plugins (ServiceAccount, DefaultTolerationSeconds,
 * Priority) and the QoS class.
 */
import { addQuantity, compareQuantity, parseQuantity, type Quantity } from 'kubeloop/api';
import { arr, def, dig, ensureObj, isObj, numOr, type Obj, objs, str } from '../shared/util.js';

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
export const VOLUME_SOURCES = [
  // validateVolumeSource's order, in which a second source is the one reported.
  'emptyDir',
  'hostPath',
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
export function strMapLoose(v: unknown): Record<string, unknown> {
  return isObj(v) ? v : {};
}
/**
 * Everything a new Pod gets before it is stored: `SetDefaults_PodSpec`, `SetDefaults_Pod`
 * (requests default to limits, `enableServiceLinks`, host ports under host networking), the
 * ServiceAccount and DefaultTolerationSeconds admission plugins, and the initial
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
  admitDefaultTolerations(spec);
  const status = ensureObj(pod, 'status');
  def(status, 'phase', 'Pending');
  def(status, 'qosClass', podQOS(spec));
}
