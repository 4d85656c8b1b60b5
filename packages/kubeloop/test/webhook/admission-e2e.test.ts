/**
 * `kubeloop/webhook` end to end on the local control plane, driven with kubectl as a user would:
 * the SDK's server registered with a URL client config and its CA, then defaulting, denials
 * with field errors, warnings, dry run, a handler that throws, a certificate rotation while
 * serving (conversion: conversion-e2e.test.ts).
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import { defineResource, Type } from 'kubeloop';
import { toYaml, webhookConfigurations } from 'kubeloop/manifests';
import {
  createCertificateAuthority,
  defaulter,
  fieldErrors,
  issueServingCertificate,
  validator,
  WebhookServer,
} from 'kubeloop/webhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const GROUP = 'webhooks.kubeloop.dev';
const Foo = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'Foo',
  spec: Type.Object({ deploymentName: Type.String(), replicas: Type.Optional(Type.Integer()) }),
});

const dryRuns: boolean[] = [];
let k: KubectlEnv;
let dir: string;
let server: WebhookServer;
let ca: ReturnType<typeof createCertificateAuthority>;

const V1 = `foos.v1.${GROUP}`;

const foo = (name: string, spec: Record<string, unknown>) =>
  toYaml([{ apiVersion: `${GROUP}/v1`, kind: 'Foo', metadata: { name, namespace: 'default' }, spec }]);

async function servingSerial(): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: server.port, ca: ca.cert, servername: 'localhost' }, () => {
      const pem = s.getPeerX509Certificate()?.serialNumber ?? '';
      s.end();
      resolve(pem);
    });
    s.on('error', reject);
  });
}

beforeAll(async () => {
  k = await startKubectlEnv();
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-webhook-e2e-'));
  // A CA of the test's own (as cert-manager's), so that the test can rotate the leaf under it.
  ca = createCertificateAuthority('e2e-ca');
  const leaf = issueServingCertificate(ca, ['127.0.0.1', 'localhost']);
  await writeFile(join(dir, 'ca.crt'), ca.cert);
  await writeFile(join(dir, 'tls.key'), leaf.key);
  await writeFile(join(dir, 'tls.crt'), leaf.cert);
  server = new WebhookServer({ port: 0, certDir: dir }).register(
    defaulter(Foo, (f, ctx) => {
      f.spec.replicas ??= 1;
      dryRuns.push(ctx.dryRun);
    }),
    validator(Foo, {
      create: (f) => {
        if (f.spec.deploymentName === 'panic') throw new Error('boom');
        if ((f.spec.replicas ?? 0) > 10)
          return { errors: [fieldErrors.invalid('spec.replicas', f.spec.replicas, 'must be at most 10')] };
        if (f.spec.deploymentName.startsWith('legacy-'))
          return { warnings: ['deploymentName legacy-* is deprecated'] };
        return undefined;
      },
      update: (old, f) =>
        old.spec.deploymentName !== f.spec.deploymentName
          ? { errors: [fieldErrors.forbidden('spec.deploymentName', 'field is immutable')] }
          : undefined,
      delete: (f) =>
        f.metadata.labels?.protected === 'true'
          ? { errors: [fieldErrors.forbidden('metadata.labels[protected]', 'remove the label first')] }
          : undefined,
    }),
  );
  await server.listen();
  expect(server.caBundle).toBe(ca.cert);
  await k.ok(['apply', '-f', '-'], { input: toYaml([Foo.crd()]) });
  await k.ok(['wait', '--for=condition=Established', `crd/foos.${GROUP}`]);
  const configs = webhookConfigurations(server.webhooks, {
    target: { url: server.url },
    caBundle: server.caBundle,
  });
  await k.ok(['apply', '-f', '-'], { input: toYaml(configs) });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await k?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('admission through the API server', () => {
  it('defaults on create', async () => {
    await k.ok(['apply', '-f', '-'], { input: foo('plain', { deploymentName: 'web' }) });
    expect(await k.ok(['get', V1, 'plain', '-o', 'jsonpath={.spec.replicas}'])).toBe('1');
    expect(await k.ok(['get', V1, 'plain', '-o', 'jsonpath={.metadata.generation} {.metadata.uid}'])).toMatch(
      /^1 [0-9a-f-]{36}$/,
    );
  });

  it('denies with the field error, printed as kubectl prints schema errors', async () => {
    const r = await k.run(['create', '-f', '-'], {
      input: foo('big', { deploymentName: 'web', replicas: 20 }),
    });
    expect(r.code).toBe(1);
    // kubectl prints the causes of a 422 as it prints a schema error's.
    expect(r.stderr.trim()).toBe(
      'The Foo "big" is invalid: spec.replicas: Invalid value: 20: must be at most 10',
    );
    expect((await k.run(['get', V1, 'big'])).code).toBe(1);
  });

  it('passes a warning to kubectl', async () => {
    const r = await k.run(['create', '-f', '-'], { input: foo('old', { deploymentName: 'legacy-web' }) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Warning: deploymentName legacy-* is deprecated');
  });

  it('refuses an update and a delete with their field errors', async () => {
    await k.ok(['apply', '-f', '-'], { input: foo('keep', { deploymentName: 'web' }) });
    const u = await k.run([
      'patch',
      'foo',
      'keep',
      '--type=merge',
      '-p',
      '{"spec":{"deploymentName":"other"}}',
    ]);
    expect(u.code).toBe(1);
    expect(u.stderr).toContain('spec.deploymentName: Forbidden: field is immutable');
    await k.ok(['label', V1, 'keep', 'protected=true']);
    const d = await k.run(['delete', V1, 'keep']);
    expect(d.code).toBe(1);
    expect(d.stderr).toContain('metadata.labels[protected]: Forbidden: remove the label first');
    await k.ok(['label', V1, 'keep', 'protected-']);
    await k.ok(['delete', V1, 'keep']);
  });

  it('runs in a dry run, which the handler sees, and stores nothing', async () => {
    dryRuns.length = 0;
    const out = await k.ok(['create', '--dry-run=server', '-o', 'jsonpath={.spec.replicas}', '-f', '-'], {
      input: foo('dry', { deploymentName: 'web' }),
    });
    expect(out).toBe('1');
    expect(dryRuns).toEqual([true]);
    expect((await k.run(['get', V1, 'dry'])).code).toBe(1);
  });

  it('answers a handler that throws with a 500 and keeps serving', async () => {
    const r = await k.run(['create', '-f', '-'], { input: foo('p', { deploymentName: 'panic' }) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('panic: boom [recovered]');
    await k.ok(['apply', '-f', '-'], { input: foo('after-panic', { deploymentName: 'web' }) });
    const metrics = await server.metricsRegistry.metrics();
    expect(metrics).toMatch(/controller_runtime_webhook_panics_total 1\b/);
  });

  it('keeps serving across a certificate rotation, on the new certificate', async () => {
    const before = await servingSerial();
    const leaf = issueServingCertificate(ca, ['127.0.0.1', 'localhost']);
    await writeFile(join(dir, 'tls.key'), leaf.key);
    await writeFile(join(dir, 'tls.crt'), leaf.cert);
    await server.reloadCertificates();
    const after = await servingSerial();
    expect(after).not.toBe(before);
    expect(after).toBe(new X509Certificate(leaf.cert).serialNumber);
    await k.ok(['apply', '-f', '-'], { input: foo('rotated', { deploymentName: 'web' }) });
    expect(await k.ok(['get', V1, 'rotated', '-o', 'jsonpath={.spec.replicas}'])).toBe('1');
  });
});
