/**
 * The Pod Security Standards checks, one by one and together: what each allows and refuses at
 * baseline and restricted, with kube's reasons and details, in kube's order.
 */
import { describe, expect, it } from 'vitest';
import type { Obj } from '../../util/object.js';
import { LATEST, type LevelVersion, policyToEvaluate } from './api.js';
import { DEFAULT_CHECKS } from './checks.js';
import { evaluatePod, forbiddenDetail } from './policy.js';

const baseline: LevelVersion = { level: 'baseline', version: LATEST };
const restricted: LevelVersion = { level: 'restricted', version: LATEST };
const v = (level: LevelVersion['level'], minor: number): LevelVersion => ({
  level,
  version: { latest: false, minor },
});

/** A container that passes restricted, with `sc` merged into its securityContext. */
const good = (name = 'c', sc: Obj = {}, extra: Obj = {}): Obj => ({
  name,
  image: 'nginx',
  securityContext: {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    runAsNonRoot: true,
    seccompProfile: { type: 'RuntimeDefault' },
    ...sc,
  },
  ...extra,
});
const spec = (extra: Obj = {}, containers: Obj[] = [good()]): Obj => ({ containers, ...extra });
const check = (lv: LevelVersion, s: Obj, meta: Obj = {}) =>
  forbiddenDetail(evaluatePod(DEFAULT_CHECKS, lv, meta, s));

describe('baseline checks', () => {
  it('allows a plain pod and a restricted one', () => {
    expect(check(baseline, spec({}, [{ name: 'c', image: 'nginx' }]))).toBe('');
    expect(check(restricted, spec())).toBe('');
  });

  it('host namespaces', () => {
    expect(check(baseline, spec({ hostPID: true, hostNetwork: true, hostIPC: false }))).toBe(
      'host namespaces (hostNetwork, hostPID)',
    );
  });

  it('privileged', () => {
    expect(
      check(baseline, spec({}, [good('a', { privileged: true }), good('b', { privileged: false })])),
    ).toBe('privileged (container "a" must not set securityContext.privileged=true)');
    expect(
      check(baseline, spec({}, [good('a', { privileged: true }), good('b', { privileged: true })])),
    ).toBe('privileged (containers "a", "b" must not set securityContext.privileged=true)');
  });

  it('capabilities beyond the default set', () => {
    const s = spec({}, [good('a', { capabilities: { add: ['NET_ADMIN', 'CHOWN', 'SYS_ADMIN'] } })]);
    expect(check(baseline, s)).toBe(
      'non-default capabilities (container "a" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add)',
    );
    expect(check(baseline, spec({}, [good('a', { capabilities: { add: ['CHOWN', 'KILL'] } })]))).toBe('');
    // Restricted's own capabilities check replaces baseline's.
    expect(check(restricted, s)).toBe(
      'unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"]; container "a" must not include "CHOWN", "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add)',
    );
    expect(
      check(
        restricted,
        spec({}, [good('a', { capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } })]),
      ),
    ).toBe('');
  });

  it('hostPath and restricted volume types', () => {
    const s = spec({
      volumes: [
        { name: 'h', hostPath: { path: '/' } },
        { name: 'n', nfs: { server: 's', path: '/' } },
        { name: 'e', emptyDir: {} },
        { name: 'p', persistentVolumeClaim: { claimName: 'x' } },
      ],
    });
    expect(check(baseline, s)).toBe('hostPath volumes (volume "h")');
    expect(check(restricted, s)).toBe(
      'restricted volume types (volumes "h", "n" use restricted volume types "hostPath", "nfs")',
    );
    expect(check(restricted, spec({ volumes: [{ name: 'i', image: { reference: 'x' } }] }))).toBe(
      'restricted volume types (volume "i" uses restricted volume type "unknown")',
    );
  });

  it('host ports', () => {
    const s = spec({}, [
      good(
        'a',
        {},
        {
          ports: [
            { containerPort: 80, hostPort: 8080 },
            { containerPort: 81, hostPort: 10000 },
          ],
        },
      ),
      good('b', {}, { ports: [{ containerPort: 82 }] }),
    ]);
    expect(check(baseline, s)).toBe('hostPort (container "a" uses hostPorts 10000, 8080)');
  });

  it('AppArmor fields and annotations', () => {
    expect(check(baseline, spec({ securityContext: { appArmorProfile: { type: 'Unconfined' } } }))).toBe(
      'forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined")',
    );
    expect(
      check(
        baseline,
        spec({}, [good('a', { appArmorProfile: { type: 'Localhost', localhostProfile: 'p' } })]),
      ),
    ).toBe('');
    expect(
      check(baseline, spec(), {
        annotations: {
          'container.apparmor.security.beta.kubernetes.io/c': 'unconfined',
          'container.apparmor.security.beta.kubernetes.io/d': 'runtime/default',
        },
      }),
    ).toBe(
      'forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/c="unconfined"")',
    );
    expect(
      check(baseline, spec({}, [good('c', { appArmorProfile: { type: 'Unconfined' } })]), {
        annotations: { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' },
      }),
    ).toBe(
      'forbidden AppArmor profiles (container "c" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/c="unconfined"")',
    );
  });

  it('SELinux options', () => {
    expect(
      check(
        baseline,
        spec({ securityContext: { seLinuxOptions: { type: 'spc_t', user: 'u' } } }, [
          good('a', { seLinuxOptions: { role: 'r' } }),
          good('b', { seLinuxOptions: { type: 'container_t', level: 's0' } }),
        ]),
      ),
    ).toBe(
      'seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)',
    );
  });

  it('/proc mount', () => {
    expect(
      check(baseline, spec({}, [good('a', { procMount: 'Unmasked' }), good('b', { procMount: 'Default' })])),
    ).toBe('procMount (container "a" must not set securityContext.procMount to "Unmasked")');
  });

  it('seccomp, by field and (before 1.19) by annotation', () => {
    const s = spec({ securityContext: { seccompProfile: { type: 'Unconfined' } } }, [
      good('a', { seccompProfile: { type: 'Unconfined' } }),
    ]);
    expect(check(baseline, s)).toBe(
      'seccompProfile (pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined")',
    );
    const meta = { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' } };
    expect(check(baseline, spec(), meta)).toBe('');
    expect(check(v('baseline', 18), spec(), meta)).toBe(
      'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")',
    );
  });

  it('sysctls, by version', () => {
    const s = spec({
      securityContext: {
        sysctls: [
          { name: 'net.ipv4.tcp_rmem', value: '1' },
          { name: 'kernel.msgmax', value: '1' },
          { name: 'net.ipv4.ip_local_port_range', value: '1 2' },
        ],
      },
    });
    expect(check(baseline, s)).toBe('forbidden sysctls (kernel.msgmax)');
    expect(check(v('baseline', 31), s)).toBe('forbidden sysctls (net.ipv4.tcp_rmem, kernel.msgmax)');
    expect(check(v('baseline', 40), s)).toBe('forbidden sysctls (kernel.msgmax)');
  });

  it('Windows hostProcess', () => {
    expect(
      check(
        baseline,
        spec({ securityContext: { windowsOptions: { hostProcess: true } } }, [
          good('a', { windowsOptions: { hostProcess: true } }),
        ]),
      ),
    ).toBe(
      'hostProcess (pod and container "a" must not set securityContext.windowsOptions.hostProcess=true)',
    );
  });
});

describe('restricted checks', () => {
  it('refuses a plain pod with kube message, in kube order', () => {
    expect(check(restricted, spec({}, [{ name: 'x', image: 'nginx' }]))).toBe(
      'allowPrivilegeEscalation != false (container "x" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "x" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "x" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "x" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });

  it('runs baseline checks first, then restricted ones, each by ID', () => {
    const s = spec({ hostNetwork: true }, [
      { name: 'x', image: 'nginx', securityContext: { privileged: true } },
    ]);
    expect(check(restricted, s)).toBe(
      'host namespaces (hostNetwork), privileged (container "x" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "x" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "x" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "x" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "x" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });

  it('allowPrivilegeEscalation over init, regular and ephemeral containers', () => {
    const s = spec(
      {
        initContainers: [good('i', { allowPrivilegeEscalation: true })],
        ephemeralContainers: [good('e', { allowPrivilegeEscalation: undefined })],
      },
      [good('c')],
    );
    expect(check(restricted, s)).toBe(
      'allowPrivilegeEscalation != false (containers "i", "e" must set securityContext.allowPrivilegeEscalation=false)',
    );
  });

  it('runAsNonRoot: pod-level true covers containers; false anywhere is refused', () => {
    const pod = { securityContext: { runAsNonRoot: true } };
    expect(check(restricted, spec(pod, [good('a', { runAsNonRoot: undefined })]))).toBe('');
    expect(
      check(
        restricted,
        spec({ securityContext: { runAsNonRoot: false } }, [good('a', { runAsNonRoot: false })]),
      ),
    ).toBe('runAsNonRoot != true (pod and container "a" must not set securityContext.runAsNonRoot=false)');
  });

  it('runAsUser=0', () => {
    expect(
      check(
        restricted,
        spec({ securityContext: { runAsUser: 0 } }, [
          good('a', { runAsUser: 0 }),
          good('b', { runAsUser: 1000 }),
        ]),
      ),
    ).toBe('runAsUser=0 (pod and container "a" must not set runAsUser=0)');
    expect(check(v('restricted', 22), spec({ securityContext: { runAsUser: 0 } }))).toBe('');
  });

  it('seccomp: a pod-level profile covers containers', () => {
    const s = spec({ securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'p' } } }, [
      good('a', { seccompProfile: undefined }),
    ]);
    expect(check(restricted, s)).toBe('');
    expect(check(restricted, spec({}, [good('a', { seccompProfile: { type: 'Unconfined' } })]))).toBe(
      'seccompProfile (container "a" must not set securityContext.seccompProfile.type to "Unconfined")',
    );
  });

  it('a Windows pod passes the Linux-only checks from 1.25', () => {
    const s = spec({ os: { name: 'windows' }, securityContext: { runAsNonRoot: true } }, [
      { name: 'w', image: 'x' },
    ]);
    expect(check(restricted, s)).toBe('');
    expect(check(v('restricted', 24), s)).toContain('allowPrivilegeEscalation != false');
  });
});

describe('namespace labels', () => {
  it('no labels: privileged everywhere', () => {
    const { policy, errors } = policyToEvaluate({});
    expect(errors).toEqual([]);
    expect(policy.enforce.level).toBe('privileged');
  });

  it('an invalid enforce level is enforced as restricted; an invalid warn level is ignored', () => {
    const { policy, errors } = policyToEvaluate({
      'pod-security.kubernetes.io/enforce': 'strict',
      'pod-security.kubernetes.io/warn': 'loud',
      'pod-security.kubernetes.io/warn-version': 'v2.0',
    });
    expect(policy.enforce.level).toBe('restricted');
    expect(policy.warn.level).toBe('privileged');
    expect(errors.map((e) => `${e.field}: ${e.message}`)).toEqual([
      'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "loud": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "v2.0": must be "latest" or "v1.x"',
    ]);
  });
});
