import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { Pod } from '../client/builtin-kinds.js';
import { defineResource } from '../schema/define/resource.js';
import { defaulter, mutatingWebhook, validator } from '../webhook/admission.js';
import {
  certManagerResources,
  injectCaFrom,
  managerWebhookPatch,
  webhookConfigurations,
  webhookKustomizeFiles,
  webhookService,
  withConversionWebhook,
} from './webhook.js';
import { toYaml } from './yaml.js';

const Foo = defineResource({
  group: 'samplecontroller.example.com',
  kind: 'Foo',
  versions: {
    v1alpha1: { spec: Type.Object({ size: Type.Integer() }) },
    v1: { spec: Type.Object({ replicas: Type.Integer() }), storage: true },
  },
});

const hooks = [
  defaulter(Foo, () => {}),
  validator(Foo, { delete: () => undefined }),
  mutatingWebhook(Pod, () => ({ allowed: true }), { failurePolicy: 'Ignore', timeoutSeconds: 5 }),
];

describe('webhookConfigurations', () => {
  it('derives kubebuilder’s entries from the declarations, for a Service', () => {
    const [mutating, validating] = webhookConfigurations(hooks, {
      target: { service: { name: 'webhook-service', namespace: 'system' } },
      injectCaFrom: injectCaFrom({ project: 'foo' }),
    });
    expect(mutating).toEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: {
        name: 'mutating-webhook-configuration',
        annotations: { 'cert-manager.io/inject-ca-from': 'system/serving-cert' },
      },
      webhooks: [
        {
          admissionReviewVersions: ['v1'],
          clientConfig: {
            service: {
              name: 'webhook-service',
              namespace: 'system',
              path: '/mutate-samplecontroller-example-com-v1-foo',
            },
          },
          failurePolicy: 'Fail',
          name: 'mfoo-v1.kb.io',
          rules: [
            {
              apiGroups: ['samplecontroller.example.com'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['foos'],
            },
          ],
          sideEffects: 'None',
        },
        {
          admissionReviewVersions: ['v1'],
          clientConfig: {
            service: { name: 'webhook-service', namespace: 'system', path: '/mutate--v1-pod' },
          },
          failurePolicy: 'Ignore',
          name: 'mpod-v1.kb.io',
          rules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods'] },
          ],
          sideEffects: 'None',
          timeoutSeconds: 5,
        },
      ],
    });
    expect(validating?.kind).toBe('ValidatingWebhookConfiguration');
    expect(
      (validating!.webhooks as Array<{ name: string; rules: Array<{ operations: string[] }> }>)[0],
    ).toMatchObject({
      name: 'vfoo-v1.kb.io',
      rules: [{ operations: ['CREATE', 'UPDATE', 'DELETE'] }],
    });
  });

  it('uses a URL and a base64 caBundle for local development, and leaves out an empty configuration', () => {
    const out = webhookConfigurations([hooks[1]!], {
      target: { url: 'https://127.0.0.1:9443/' },
      caBundle: 'PEM',
    });
    expect(out).toHaveLength(1);
    expect((out[0]!.webhooks as Array<{ clientConfig: unknown }>)[0]?.clientConfig).toEqual({
      url: 'https://127.0.0.1:9443/validate-samplecontroller-example-com-v1-foo',
      caBundle: Buffer.from('PEM').toString('base64'),
    });
  });
});

describe('the cluster wiring', () => {
  it('Service 443 → 9443 selecting the manager, cert-manager Issuer and Certificate, the manager patch', () => {
    expect(webhookService({ project: 'foo' })).toMatchObject({
      kind: 'Service',
      metadata: { name: 'webhook-service', namespace: 'system' },
      spec: {
        ports: [{ port: 443, protocol: 'TCP', targetPort: 9443 }],
        selector: { 'control-plane': 'controller-manager', 'app.kubernetes.io/name': 'foo' },
      },
    });
    const [issuer, cert] = certManagerResources({ project: 'foo' });
    expect(issuer).toMatchObject({
      kind: 'Issuer',
      metadata: { name: 'selfsigned-issuer' },
      spec: { selfSigned: {} },
    });
    expect(cert).toMatchObject({
      kind: 'Certificate',
      metadata: { name: 'serving-cert', namespace: 'system' },
      spec: {
        dnsNames: ['webhook-service.system.svc', 'webhook-service.system.svc.cluster.local'],
        issuerRef: { kind: 'Issuer', name: 'selfsigned-issuer' },
        secretName: 'webhook-server-cert',
      },
    });
    const patch = managerWebhookPatch('controller-manager', { project: 'foo' });
    expect(toYaml([patch])).toContain('mountPath: /tmp/k8s-webhook-server/serving-certs');
    expect(toYaml([patch])).toContain('secretName: webhook-server-cert');
  });

  it('marks a CRD’s conversion as Webhook at /convert, leaving the declaration’s CRD alone', () => {
    const crd = withConversionWebhook(Foo.crd(), {
      target: { service: { name: 'webhook-service', namespace: 'system' } },
      injectCaFrom: 'system/serving-cert',
    });
    expect(crd.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: {
        clientConfig: { service: { name: 'webhook-service', namespace: 'system', path: '/convert' } },
        conversionReviewVersions: ['v1'],
      },
    });
    expect(crd.metadata?.annotations).toEqual({ 'cert-manager.io/inject-ca-from': 'system/serving-cert' });
    expect(Foo.crd().spec.conversion).toBeUndefined();
  });
});

describe('webhookKustomizeFiles', () => {
  it('writes config/webhook and config/certmanager that kustomize builds', async () => {
    const { mkdtemp, mkdir, writeFile, rm } = await import('node:fs/promises');
    const { execFile } = await import('node:child_process');
    const { join, dirname } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'kubeloop-webhook-kustomize-'));
    try {
      for (const f of webhookKustomizeFiles(hooks, { project: 'foo' })) {
        await mkdir(dirname(join(dir, f.path)), { recursive: true });
        await writeFile(join(dir, f.path), f.content);
      }
      const build = (folder: string) =>
        new Promise<string>((resolve, reject) =>
          execFile('kubectl', ['kustomize', join(dir, folder)], (err, out, stderr) =>
            err ? reject(new Error(stderr)) : resolve(out),
          ),
        );
      const webhook = await build('config/webhook');
      expect(webhook).toContain('kind: MutatingWebhookConfiguration');
      expect(webhook).toContain('cert-manager.io/inject-ca-from: system/serving-cert');
      expect(webhook).toContain('path: /validate-samplecontroller-example-com-v1-foo');
      expect(webhook).toContain('targetPort: 9443');
      const certs = await build('config/certmanager');
      expect(certs).toContain('kind: Certificate');
      expect(certs).toContain('secretName: webhook-server-cert');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
