/**
 * The PodSecurity admission plugin through kubectl 1.32: a namespace's
 * `pod-security.kubernetes.io/*` labels refuse pods at the enforce level and warn at the warn
 * level, with kube-apiserver's messages; workloads are never refused; a stricter enforce level
 * warns about the pods already there; invalid labels are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let env: KubectlEnv;
beforeAll(async () => {
  env = await startKubectlEnv({ controllers: false });
  for (const ns of ['psa-enforce', 'psa-warn', 'psa-existing']) await env.ok(['create', 'namespace', ns]);
});
afterAll(async () => {
  await env?.stop();
});

/** The `Warning:` lines kubectl printed. */
const warnings = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('Warning: '));

/** A pod that meets the restricted level. */
const restrictedPod = (name: string, namespace: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace },
  spec: {
    securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [
      {
        name: 'app',
        image: 'nginx',
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      },
    ],
  },
});

const RESTRICTED_PLAIN = (c: string) =>
  `allowPrivilegeEscalation != false (container "${c}" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "${c}" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "${c}" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "${c}" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`;

describe('PodSecurity', () => {
  it('enforce=restricted refuses a non-compliant pod with kube message and admits a compliant one', async () => {
    const labelled = await env.run([
      'label',
      'ns',
      'psa-enforce',
      'pod-security.kubernetes.io/enforce=restricted',
    ]);
    expect(labelled).toMatchObject({ code: 0, stdout: 'namespace/psa-enforce labeled\n' });
    expect(warnings(labelled.stderr)).toEqual([]);

    const refused = await env.run(['run', 'bad', '--image=nginx', '-n', 'psa-enforce']);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `Error from server (Forbidden): pods "bad" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_PLAIN('bad')}`,
    );
    expect((await env.run(['get', 'pod', 'bad', '-n', 'psa-enforce'])).code).toBe(1);
    // A server-side dry run is refused alike.
    const dry = await env.run(['run', 'bad', '--image=nginx', '-n', 'psa-enforce', '--dry-run=server']);
    expect(dry.code).toBe(1);
    expect(dry.stderr).toContain('pods "bad" is forbidden: violates PodSecurity "restricted:latest": ');

    const admitted = await env.run(['create', '-f', '-'], {
      input: JSON.stringify(restrictedPod('good', 'psa-enforce')),
    });
    expect(admitted).toMatchObject({ code: 0, stdout: 'pod/good created\n' });
    expect(warnings(admitted.stderr)).toEqual([]);
  });

  it('warn=baseline admits a violating pod with a Warning', async () => {
    await env.ok(['label', 'ns', 'psa-warn', 'pod-security.kubernetes.io/warn=baseline']);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'priv', namespace: 'psa-warn' },
      spec: {
        hostNetwork: true,
        containers: [{ name: 'priv', image: 'nginx', securityContext: { privileged: true } }],
      },
    };
    const r = await env.run(['create', '-f', '-'], { input: JSON.stringify(pod) });
    expect(r).toMatchObject({ code: 0, stdout: 'pod/priv created\n' });
    expect(warnings(r.stderr)).toEqual([
      'Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork), privileged (container "priv" must not set securityContext.privileged=true)',
    ]);
    // An update that changes no image is not checked again.
    const labelled = await env.run(['label', 'pod', 'priv', '-n', 'psa-warn', 'tier=x']);
    expect(labelled.code).toBe(0);
    expect(warnings(labelled.stderr)).toEqual([]);
    // One that changes an image is.
    const image = await env.run(['set', 'image', 'pod/priv', 'priv=nginx:1.27', '-n', 'psa-warn']);
    expect(image.code).toBe(0);
    expect(warnings(image.stderr)).toHaveLength(1);
  });

  it('never refuses a workload; warns about its template at the warn level only', async () => {
    const plain = await env.run(['create', 'deployment', 'web', '--image=nginx', '-n', 'psa-enforce']);
    expect(plain).toMatchObject({ code: 0, stdout: 'deployment.apps/web created\n' });
    // As in kube-apiserver, the enforce level is for the pods themselves.
    expect(warnings(plain.stderr)).toEqual([]);

    await env.ok(['label', 'ns', 'psa-enforce', 'pod-security.kubernetes.io/warn=restricted']);
    const warned = await env.run(['create', 'deployment', 'web2', '--image=nginx', '-n', 'psa-enforce']);
    expect(warned).toMatchObject({ code: 0, stdout: 'deployment.apps/web2 created\n' });
    expect(warnings(warned.stderr)).toEqual([
      `Warning: would violate PodSecurity "restricted:latest": ${RESTRICTED_PLAIN('nginx')}`,
    ]);
    // Server-side apply carries the warning too.
    const applied = await env.run(['apply', '--server-side', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web3', namespace: 'psa-enforce' },
        spec: {
          selector: { matchLabels: { app: 'web3' } },
          template: {
            metadata: { labels: { app: 'web3' } },
            spec: { containers: [{ name: 'app', image: 'nginx' }] },
          },
        },
      }),
    });
    expect(applied).toMatchObject({ code: 0, stdout: 'deployment.apps/web3 serverside-applied\n' });
    expect(warnings(applied.stderr)).toEqual([
      `Warning: would violate PodSecurity "restricted:latest": ${RESTRICTED_PLAIN('app')}`,
    ]);
    const job = await env.run(['create', 'job', 'j', '--image=busybox', '-n', 'psa-enforce']);
    expect(job.code).toBe(0);
    expect(warnings(job.stderr)).toEqual([
      `Warning: would violate PodSecurity "restricted:latest": ${RESTRICTED_PLAIN('j')}`,
    ]);
  });

  it('warns about existing pods when the enforce level gets stricter', async () => {
    for (const name of ['b', 'a', 'c']) await env.ok(['run', name, '--image=nginx', '-n', 'psa-existing']);
    const baseline = await env.run([
      'label',
      'ns',
      'psa-existing',
      'pod-security.kubernetes.io/enforce=baseline',
    ]);
    expect(baseline.code).toBe(0);
    expect(warnings(baseline.stderr)).toEqual([]);

    const restricted = await env.run([
      'label',
      'ns',
      'psa-existing',
      'pod-security.kubernetes.io/enforce=restricted',
      '--overwrite',
    ]);
    expect(restricted).toMatchObject({ code: 0, stdout: 'namespace/psa-existing labeled\n' });
    expect(warnings(restricted.stderr)).toEqual([
      'Warning: existing pods in namespace "psa-existing" violate the new PodSecurity enforce level "restricted:latest"',
      'Warning: a (and 2 other pods): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    ]);
    // Relaxing it warns about nothing.
    const relaxed = await env.run([
      'label',
      'ns',
      'psa-existing',
      'pod-security.kubernetes.io/enforce=baseline',
      '--overwrite',
    ]);
    expect(warnings(relaxed.stderr)).toEqual([]);
  });

  it('refuses invalid labels', async () => {
    const r = await env.run([
      'label',
      'ns',
      'psa-existing',
      'pod-security.kubernetes.io/enforce=strict',
      '--overwrite',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'The Namespace "psa-existing" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
    );
    const created = await env.run(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'psa-bad', labels: { 'pod-security.kubernetes.io/warn-version': 'v1' } },
      }),
    });
    expect(created.code).toBe(1);
    expect(created.stderr.trim()).toBe(
      'The Namespace "psa-bad" is invalid: metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "v1": must be "latest" or "v1.x"',
    );
  });
});
