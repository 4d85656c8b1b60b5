/**
 * The PodSecurity namespace labels (k8s.io/pod-security-admission `api`): which level and version
 * each of the three modes (enforce, audit, warn) evaluates a namespace's pods at.
 */
import type { StatusCause } from 'kubeloop/api';
import { invalid } from '../../registry/shared/util.js';

/** A Pod Security Standards level, from the least to the most strict. */
export type Level = 'privileged' | 'baseline' | 'restricted';
const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/** A policy version: `latest`, or `v1.<minor>`. */
export type Version = { latest: true } | { latest: false; minor: number };
/** The `latest` version: the newest checks of this server (1.32). */
export const LATEST: Version = { latest: true };

/** A level at a version, as kube prints it: `restricted:latest`, `baseline:v1.30`. */
export interface LevelVersion {
  level: Level;
  version: Version;
}

/** `Version.String`: `latest` or `v1.<minor>`. */
export const versionString = (v: Version): string => (v.latest ? 'latest' : `v1.${v.minor}`);
/** `LevelVersion.String`: `<level>:<version>`. */
export const levelVersionString = (lv: LevelVersion): string => `${lv.level}:${versionString(lv.version)}`;
/** Whether two level-versions are the same one. */
export const sameLevelVersion = (a: LevelVersion, b: LevelVersion): boolean =>
  levelVersionString(a) === levelVersionString(b);

/** `api.CompareLevels`: negative when `a` is less strict than `b`. */
export const compareLevels = (a: Level, b: Level): number => LEVELS.indexOf(a) - LEVELS.indexOf(b);

/** The policy of a namespace: one level and version per mode. */
export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

const PREFIX = 'pod-security.kubernetes.io/';

/** kube-apiserver's default PodSecurityConfiguration: every mode at privileged:latest. */
const DEFAULT_POLICY: Policy = {
  enforce: { level: 'privileged', version: LATEST },
  audit: { level: 'privileged', version: LATEST },
  warn: { level: 'privileged', version: LATEST },
};

/** `ParseLevel`: an invalid level evaluates as restricted. */
function parseLevel(value: string): [Level, string | undefined] {
  return (LEVELS as readonly string[]).includes(value)
    ? [value as Level, undefined]
    : ['restricted', `must be one of ${LEVELS.join(', ')}`];
}

const VERSION = /^v1\.([0-9]|[1-9][0-9]*)$/;

/** `ParseVersion`: an invalid version evaluates as latest. */
function parseVersion(value: string): [Version, string | undefined] {
  if (value === 'latest') return [LATEST, undefined];
  const m = VERSION.exec(value);
  const minor = m ? Number(m[1]) : Number.NaN;
  // Go's Atoi fails past int64; such a version is refused as malformed.
  if (!Number.isSafeInteger(minor)) return [LATEST, 'must be "latest" or "v1.x"'];
  return [{ latest: false, minor }, undefined];
}

/**
 * `PolicyToEvaluate`: the namespace's policy from its labels, and the label errors. The policy
 * is always usable: an invalid enforce level is enforced as restricted (fail closed), an invalid
 * audit or warn level as privileged (fail open), an invalid version as latest.
 */
export function policyToEvaluate(labels: Record<string, unknown> | undefined): {
  policy: Policy;
  errors: StatusCause[];
} {
  const policy: Policy = {
    enforce: { ...DEFAULT_POLICY.enforce },
    audit: { ...DEFAULT_POLICY.audit },
    warn: { ...DEFAULT_POLICY.warn },
  };
  const errors: StatusCause[] = [];
  if (!labels) return { policy, errors };
  const fail = (label: string, value: string, err: string | undefined) => {
    if (err) errors.push(invalid(`metadata.labels[${label}]`, value, err));
  };
  for (const mode of ['enforce', 'audit', 'warn'] as const) {
    const levelLabel = `${PREFIX}${mode}`;
    const level = labels[levelLabel];
    if (typeof level === 'string') {
      const [parsed, err] = parseLevel(level);
      policy[mode].level = err && mode !== 'enforce' ? 'privileged' : parsed;
      fail(levelLabel, level, err);
    }
    const versionLabel = `${levelLabel}-version`;
    const version = labels[versionLabel];
    if (typeof version === 'string') {
      const [parsed, err] = parseVersion(version);
      policy[mode].version = parsed;
      fail(versionLabel, version, err);
    }
  }
  return { policy, errors };
}

/** `Policy.FullyPrivileged`. */
export const fullyPrivileged = (p: Policy): boolean =>
  p.enforce.level === 'privileged' && p.audit.level === 'privileged' && p.warn.level === 'privileged';
