/**
 * The restricted checks of the Pod Security Standards (k8s.io/pod-security-admission `policy`,
 * Kubernetes 1.32), with kube's forbidden reasons and details. Restricted runs the baseline
 * checks too, except those these override.
 */
import type { Obj } from '../../util/object.js';
import { badSeccomp, seccompForbidden } from './checks-baseline.js';
import {
  type Check,
  type CheckPod,
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
  windowsPod,
} from './policy.js';

/** From 1.25 a Windows pod (`spec.os.name: windows`) passes the Linux-only checks. */
const linuxOnly =
  (check: CheckPod): CheckPod =>
  (meta, spec) =>
    windowsPod(spec) ? undefined : check(meta, spec);

const containersNamed = (names: readonly string[]) =>
  `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;

function allowPrivilegeEscalation(_meta: Obj, spec: Obj): Violation | undefined {
  const bad = containers(spec)
    .filter((c) => securityContext(c)?.allowPrivilegeEscalation !== false)
    .map((c) => str(c.name));
  if (bad.length === 0) return undefined;
  return {
    reason: 'allowPrivilegeEscalation != false',
    detail: `${containersNamed(bad)} must set securityContext.allowPrivilegeEscalation=false`,
  };
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => str(x)) : []);

/** Containers drop ALL capabilities and add none but NET_BIND_SERVICE. */
function capabilitiesRestricted(_meta: Obj, spec: Obj): Violation | undefined {
  const missingDropAll: string[] = [];
  const adding: string[] = [];
  const forbidden: string[] = [];
  for (const c of containers(spec)) {
    const caps = obj(securityContext(c)?.capabilities);
    if (!caps) {
      missingDropAll.push(str(c.name));
      continue;
    }
    if (!strings(caps.drop).includes('ALL')) missingDropAll.push(str(c.name));
    const added = strings(caps.add).filter((x) => x !== 'NET_BIND_SERVICE');
    if (added.length > 0) {
      adding.push(str(c.name));
      forbidden.push(...added);
    }
  }
  const details: string[] = [];
  if (missingDropAll.length > 0)
    details.push(`${containersNamed(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length > 0)
    details.push(
      `${containersNamed(adding)} must not include ${joinQuote(sortedUnique(forbidden))} in securityContext.capabilities.add`,
    );
  if (details.length === 0) return undefined;
  return { reason: 'unrestricted capabilities', detail: details.join('; ') };
}

/** Inline volume sources a restricted pod may use; every other source is restricted. */
const ALLOWED_VOLUMES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];
/** The restricted sources kube names (an image volume has no name before 1.33: "unknown"). */
const RESTRICTED_VOLUMES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];
const set = (v: Obj, field: string) => v[field] !== undefined && v[field] !== null;

function restrictedVolumes(_meta: Obj, spec: Obj): Violation | undefined {
  const bad: string[] = [];
  const types: string[] = [];
  for (const v of Array.isArray(spec.volumes) ? spec.volumes : []) {
    const volume = obj(v);
    if (!volume || ALLOWED_VOLUMES.some((f) => set(volume, f))) continue;
    bad.push(str(volume.name));
    types.push(RESTRICTED_VOLUMES.find((f) => set(volume, f)) ?? 'unknown');
  }
  if (bad.length === 0) return undefined;
  const unique = sortedUnique(types);
  return {
    reason: 'restricted volume types',
    detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', unique.length)} ${joinQuote(unique)}`,
  };
}

function runAsNonRoot(_meta: Obj, spec: Obj): Violation | undefined {
  const podValue = podSecurityContext(spec)?.runAsNonRoot;
  const podBad = podValue === false;
  const podTrue = podValue === true;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const value = securityContext(c)?.runAsNonRoot;
    if (typeof value === 'boolean') {
      if (!value) explicit.push(str(c.name));
    } else if (!podTrue) implicit.push(str(c.name));
  }
  const who = setters(podBad, explicit);
  if (who.length > 0) {
    return {
      reason: 'runAsNonRoot != true',
      detail: `${who.join(' and ')} must not set securityContext.runAsNonRoot=false`,
    };
  }
  if (implicit.length === 0) return undefined;
  return {
    reason: 'runAsNonRoot != true',
    detail: `pod or ${containersNamed(implicit)} must set securityContext.runAsNonRoot=true`,
  };
}

function runAsUser(_meta: Obj, spec: Obj): Violation | undefined {
  const bad = containers(spec)
    .filter((c) => securityContext(c)?.runAsUser === 0)
    .map((c) => str(c.name));
  const who = setters(podSecurityContext(spec)?.runAsUser === 0, bad);
  if (who.length === 0) return undefined;
  return { reason: 'runAsUser=0', detail: `${who.join(' and ')} must not set runAsUser=0` };
}

/** A seccomp profile of RuntimeDefault or Localhost must be set, on the pod or every container. */
function seccompRestricted(_meta: Obj, spec: Obj): Violation | undefined {
  const explicit = seccompForbidden(spec);
  if (explicit) return explicit;
  if (badSeccomp(spec).podValid) return undefined;
  const implicit = containers(spec)
    .filter((c) => obj(securityContext(c)?.seccompProfile) === undefined)
    .map((c) => str(c.name));
  if (implicit.length === 0) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `pod or ${containersNamed(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
  };
}

/** The restricted checks, by ID. */
export const RESTRICTED_CHECKS: readonly Check[] = [
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { min: 8, check: allowPrivilegeEscalation },
      { min: 25, check: linuxOnly(allowPrivilegeEscalation) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { min: 22, check: capabilitiesRestricted, overrides: ['capabilities_baseline'] },
      { min: 25, check: linuxOnly(capabilitiesRestricted), overrides: ['capabilities_baseline'] },
    ],
  },
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    versions: [{ min: 0, check: restrictedVolumes, overrides: ['hostPathVolumes'] }],
  },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ min: 0, check: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ min: 23, check: runAsUser }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { min: 19, check: seccompRestricted, overrides: ['seccompProfile_baseline'] },
      { min: 25, check: linuxOnly(seccompRestricted), overrides: ['seccompProfile_baseline'] },
    ],
  },
];
