/**
 * Security contexts, pod and container, as kube-apiserver 1.32 validates them
 * (`validatePodSpecSecurityContext`, `ValidateSecurityContext`): user and group ids, sysctls,
 * the fsGroup change policy, seccomp and AppArmor profiles, and privilege escalation against
 * privileged containers.
 */
import type { StatusCause } from 'kubeloop/api';
import {
  duplicate,
  GoValue,
  invalid,
  isObj,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  str,
  strs,
} from '../shared/util.js';

const ID_RANGE = 'must be between 0 and 2147483647, inclusive';
const SYSCTL_MAX_LENGTH = 253;
const SYSCTL_PATTERN = '([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const SYSCTL = new RegExp(`^${SYSCTL_PATTERN}$`);

const set = (v: unknown): boolean => v !== undefined && v !== null;

/** `IsValidUserID`/`IsValidGroupID` of each named field. */
function ids(sc: Obj, path: string, fields: readonly string[]): StatusCause[] {
  const out: StatusCause[] = [];
  for (const f of fields) {
    const v = numOr(sc[f]);
    if (v !== undefined && (v < 0 || v > 2147483647)) out.push(invalid(`${path}.${f}`, v, ID_RANGE));
  }
  return out;
}

/** `validateLocalDescendingPath`: a profile is a relative path without `..`. */
function localDescendingPath(p: string, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (p.startsWith('/')) out.push(invalid(path, p, 'must be a relative path'));
  if (p.split('/').includes('..')) out.push(invalid(path, p, "must not contain '..'"));
  return out;
}

/** `validateSeccompProfileField`. */
function seccompProfile(sp: unknown, path: string): StatusCause[] {
  if (!isObj(sp)) return [];
  const out: StatusCause[] = [];
  const type = str(sp.type);
  const types = ['Localhost', 'RuntimeDefault', 'Unconfined'];
  if (!type) out.push(required(`${path}.type`, 'type is required when seccompProfile is set'));
  else if (!types.includes(type)) out.push(notSupported(`${path}.type`, type, types));
  if (type === 'Localhost') {
    if (!set(sp.localhostProfile))
      out.push(required(`${path}.localhostProfile`, 'must be set when seccomp type is Localhost'));
    else out.push(...localDescendingPath(str(sp.localhostProfile), `${path}.localhostProfile`));
  } else if (set(sp.localhostProfile)) {
    const value = new GoValue(
      `core.SeccompProfile{Type:${JSON.stringify(type)}, LocalhostProfile:(*string)(${JSON.stringify(str(sp.localhostProfile))})}`,
    );
    out.push(invalid(`${path}.localhostProfile`, value, 'can only be set when seccomp type is Localhost'));
  }
  return out;
}

/** `ValidateAppArmorProfileField`. */
function appArmorProfile(profile: unknown, path: string): StatusCause[] {
  if (!isObj(profile)) return [];
  const type = str(profile.type);
  const local = profile.localhostProfile;
  switch (type) {
    case 'Localhost': {
      if (!set(local))
        return [required(`${path}.localhostProfile`, 'must be set when AppArmor type is Localhost')];
      const p = str(local);
      const out: StatusCause[] = [];
      if (p.trim() !== p)
        out.push(invalid(`${path}.localhostProfile`, p, 'must not be padded with whitespace'));
      else if (p === '')
        out.push(required(`${path}.localhostProfile`, 'must be set when AppArmor type is Localhost'));
      if (Buffer.byteLength(p) > 4095)
        out.push({
          reason: 'FieldValueTooLong',
          message: 'Too long: may not be more than 4095 bytes',
          field: `${path}.localhostProfile`,
        });
      return out;
    }
    case 'RuntimeDefault':
    case 'Unconfined':
      return set(local)
        ? [invalid(`${path}.localhostProfile`, str(local), 'can only be set when AppArmor type is Localhost')]
        : [];
    case '':
      return [required(`${path}.type`, 'type is required when appArmorProfile is set')];
    default:
      return [notSupported(`${path}.type`, type, ['Localhost', 'RuntimeDefault', 'Unconfined'])];
  }
}

/** `validatePodSpecSecurityContext`: the pod's `securityContext`. */
export function validatePodSecurityContext(spec: Obj, path: string): StatusCause[] {
  const p = `${path}.securityContext`;
  // v1 has these two on the pod spec; kube's internal type (and its error path) has them in the
  // security context.
  const shared: StatusCause[] =
    spec.shareProcessNamespace === true && spec.hostPID === true
      ? [
          invalid(
            `${p}.shareProcessNamespace`,
            true,
            'ShareProcessNamespace and HostPID cannot both be enabled',
          ),
        ]
      : [];
  const sc = spec.securityContext;
  if (!isObj(sc)) return shared;
  const out = ids(sc, p, ['fsGroup', 'runAsUser', 'runAsGroup']);
  (Array.isArray(sc.supplementalGroups) ? sc.supplementalGroups : []).forEach((g, i) => {
    if (typeof g === 'number' && (g < 0 || g > 2147483647))
      out.push(invalid(`${p}.supplementalGroups[${i}]`, g, ID_RANGE));
  });
  out.push(...shared);
  const names = new Set<string>();
  objs(sc.sysctls).forEach((s, i) => {
    const name = str(s.name);
    const np = `${p}.sysctls[${i}].name`;
    if (!name) out.push(required(np));
    else if (name.length > SYSCTL_MAX_LENGTH || !SYSCTL.test(name))
      out.push(
        invalid(
          np,
          name,
          `must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_PATTERN}`,
        ),
      );
    else if (names.has(name)) out.push(duplicate(np, name));
    names.add(name);
  });
  if (set(sc.fsGroupChangePolicy)) {
    const policy = str(sc.fsGroupChangePolicy);
    if (policy !== 'Always' && policy !== 'OnRootMismatch')
      out.push(notSupported(`${p}.fsGroupChangePolicy`, policy, ['Always', 'OnRootMismatch']));
  }
  out.push(...seccompProfile(sc.seccompProfile, `${p}.seccompProfile`));
  out.push(...appArmorProfile(sc.appArmorProfile, `${p}.appArmorProfile`));
  return out;
}

/** `ValidateSecurityContext`: a container's `securityContext` (after its ids, checked with the container). */
export function validateContainerSecurityContext(c: Obj, path: string): StatusCause[] {
  const sc = c.securityContext;
  if (!isObj(sc)) return [];
  const p = `${path}.securityContext`;
  const out = ids(sc, p, ['runAsUser', 'runAsGroup']);
  // procMount is not checked: its gate (ProcMountType) is off in 1.32, which drops the field.
  out.push(...seccompProfile(sc.seccompProfile, `${p}.seccompProfile`));
  if (sc.allowPrivilegeEscalation === false) {
    const value = new GoValue(goSecurityContext(sc));
    if (sc.privileged === true)
      out.push(invalid(p, value, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
    for (const cap of strs(dig2(sc, 'capabilities', 'add')))
      if (cap === 'CAP_SYS_ADMIN')
        out.push(
          invalid(
            p,
            value,
            'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN',
          ),
        );
  }
  out.push(...appArmorProfile(sc.appArmorProfile, `${p}.appArmorProfile`));
  return out;
}

const dig2 = (o: Obj, a: string, b: string): unknown => (isObj(o[a]) ? (o[a] as Obj)[b] : undefined);

/** Go's `%#v` of a container SecurityContext, in kube's field order (pointers shown by their value). */
function goSecurityContext(sc: Obj): string {
  const ptr = (type: string, v: unknown) => (set(v) ? `(*${type})(${JSON.stringify(v)})` : `(*${type})(nil)`);
  return (
    'core.SecurityContext{' +
    [
      `Capabilities:${isObj(sc.capabilities) ? '&core.Capabilities{…}' : '(*core.Capabilities)(nil)'}`,
      `Privileged:${ptr('bool', sc.privileged)}`,
      'SELinuxOptions:(*core.SELinuxOptions)(nil)',
      'WindowsOptions:(*core.WindowsSecurityContextOptions)(nil)',
      `RunAsUser:${ptr('int64', sc.runAsUser)}`,
      `RunAsGroup:${ptr('int64', sc.runAsGroup)}`,
      `RunAsNonRoot:${ptr('bool', sc.runAsNonRoot)}`,
      `ReadOnlyRootFilesystem:${ptr('bool', sc.readOnlyRootFilesystem)}`,
      `AllowPrivilegeEscalation:${ptr('bool', sc.allowPrivilegeEscalation)}`,
      `ProcMount:${ptr('core.ProcMountType', sc.procMount)}`,
      'SeccompProfile:(*core.SeccompProfile)(nil)',
      'AppArmorProfile:(*core.AppArmorProfile)(nil)',
    ].join(', ') +
    '}'
  );
}
