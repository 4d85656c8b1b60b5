/**
 * `generateManifests` with webhooks: kubebuilder's config/webhook and config/certmanager, the
 * conversion stanza of the converted CRD, and config/default's wiring — checked against what
 * `kubectl kustomize config/default` (kubectl 1.32) renders.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { Deployment, Pod } from '../client/builtin-kinds.js';
import { defineResource, Type } from '../schema/define/index.js';
import { defaulter, mutatingWebhook, validator } from '../webhook/admission.js';
import { conversion } from '../webhook/conversion.js';
import { generateManifests, installManifests, type OperatorProject, writeGeneratedFiles } from './project.js';
import { standInForCertManager } from './webhook-layout.js';

const Foo = defineResource({
  group: 'samplecontroller.example.com',
  kind: 'Foo',
  versions: {
    v1alpha1: { spec: Type.Object({ size: Type.Integer() }) },
    v1: { spec: Type.Object({ replicas: Type.Integer() }), storage: true },
  },
});
const Bar = defineResource({ group: 'example.com', version: 'v1', kind: 'Bar', spec: Type.Object({}) });

const project: OperatorProject = {
  name: 'foo-operator',
  resources: [Foo, Bar],
  controllers: [{ for: Foo, owns: [Deployment] }],
  webhooks: [
    defaulter(Foo, () => {}),
    validator(Foo, { delete: () => undefined }),
    mutatingWebhook(Pod, () => ({ allowed: true }), { failurePolicy: 'Ignore' }),
    conversion(Foo, {
      hub: 'v1',
      spokes: {
        v1alpha1: {
          toHub: (o) => ({ spec: { replicas: o.spec.size } }),
          fromHub: (h) => ({ spec: { size: h.spec.replicas } }),
        },
      },
    }),
  ],
};

type Obj = Record<string, any>;
const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
const files = new Map(generateManifests(project).map((f) => [f.path, f.content]));

let dir: string;
let rendered: Obj[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-webhook-layout-'));
  await writeGeneratedFiles(dir, generateManifests(project));
  rendered = docs(
    await new Promise<string>((resolve, reject) =>
      execFile('kubectl', ['kustomize', join(dir, 'config/default')], (err, out, stderr) =>
        err ? reject(new Error(stderr)) : resolve(out),
      ),
    ),
  );
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('generateManifests with webhooks', () => {
  it('writes config/webhook, config/certmanager and the manager patch; a project without webhooks has none', () => {
    expect([...files.keys()].filter((f) => /webhook|certmanager/.test(f)).sort()).toEqual([
      'config/certmanager/certificate.yaml',
      'config/certmanager/kustomization.yaml',
      'config/certmanager/kustomizeconfig.yaml',
      'config/default/manager_webhook_patch.yaml',
      'config/webhook/kustomization.yaml',
      'config/webhook/manifests.yaml',
      'config/webhook/service.yaml',
    ]);
    const plain = generateManifests({ ...project, webhooks: [] }).map((f) => f.path);
    expect(plain.filter((f) => /webhook|certmanager/.test(f))).toEqual([]);
    expect(parse(files.get('config/default/kustomization.yaml')!).resources).toEqual([
      '../crd',
      '../rbac',
      '../manager',
      '../webhook',
      '../certmanager',
      'metrics_service.yaml',
    ]);
  });

  it('marks only the converted CRD with the conversion webhook, on the base Service', () => {
    const foo = parse(files.get('config/crd/bases/samplecontroller.example.com_foos.yaml')!);
    expect(foo.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: {
        clientConfig: { service: { name: 'webhook-service', namespace: 'system', path: '/convert' } },
        conversionReviewVersions: ['v1'],
      },
    });
    expect(parse(files.get('config/crd/bases/example.com_bars.yaml')!).spec.conversion).toBeUndefined();
  });

  it('renders with kubectl kustomize exactly as dist/install.yaml', () => {
    const expected = JSON.parse(JSON.stringify(installManifests(project))) as Obj[];
    const id = (o: Obj) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    expect(rendered.map(id)).toEqual(expected.map(id));
    expect(rendered).toEqual(expected);
    expect(docs(files.get('dist/install.yaml')!)).toEqual(expected);
  });

  it('wires the prefixed Service, the namespace and cert-manager’s CA injection everywhere', () => {
    const ns = 'foo-operator-system';
    const inject = `${ns}/foo-operator-serving-cert`;
    const service = { name: 'foo-operator-webhook-service', namespace: ns };
    const of = (kind: string, name?: string) =>
      rendered.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name))!;
    const mutating = of('MutatingWebhookConfiguration');
    expect(mutating.metadata).toMatchObject({
      name: 'foo-operator-mutating-webhook-configuration',
      annotations: { 'cert-manager.io/inject-ca-from': inject },
    });
    expect(mutating.webhooks.map((w: Obj) => w.clientConfig.service)).toEqual([
      { ...service, path: '/mutate-samplecontroller-example-com-v1-foo' },
      { ...service, path: '/mutate--v1-pod' },
    ]);
    expect(of('ValidatingWebhookConfiguration').webhooks[0].clientConfig.service).toEqual({
      ...service,
      path: '/validate-samplecontroller-example-com-v1-foo',
    });
    const crd = of('CustomResourceDefinition', 'foos.samplecontroller.example.com');
    expect(crd.metadata.annotations['cert-manager.io/inject-ca-from']).toBe(inject);
    expect(crd.spec.conversion.webhook.clientConfig.service).toEqual({ ...service, path: '/convert' });
    expect(of('Certificate').spec).toEqual({
      dnsNames: [
        `foo-operator-webhook-service.${ns}.svc`,
        `foo-operator-webhook-service.${ns}.svc.cluster.local`,
      ],
      issuerRef: { kind: 'Issuer', name: 'foo-operator-selfsigned-issuer' },
      secretName: 'webhook-server-cert',
    });
    expect(of('Service', 'foo-operator-webhook-service').spec.ports).toEqual([
      { port: 443, protocol: 'TCP', targetPort: 9443 },
    ]);
    const manager = of('Deployment').spec.template.spec;
    expect(manager.containers[0].args).toEqual(
      expect.arrayContaining([
        '--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs',
        '--webhook-host=0.0.0.0',
      ]),
    );
    expect(manager.containers[0].ports).toContainEqual({
      containerPort: 9443,
      name: 'webhook-server',
      protocol: 'TCP',
    });
    expect(manager.volumes).toContainEqual({
      name: 'webhook-certs',
      secret: { secretName: 'webhook-server-cert' },
    });
  });
});

describe('standInForCertManager', () => {
  it('issues the Secret a Certificate asks for and injects its CA as cert-manager’s CA injector does', () => {
    const objects = standInForCertManager(installManifests(project)) as Obj[];
    expect(objects.filter((o) => o.apiVersion === 'cert-manager.io/v1')).toEqual([]);
    const secret = objects.find((o) => o.kind === 'Secret')!;
    expect(secret.metadata).toEqual({ name: 'webhook-server-cert', namespace: 'foo-operator-system' });
    const pem = (k: string) => Buffer.from(secret.data[k], 'base64').toString();
    const cert = new X509Certificate(pem('tls.crt'));
    expect(cert.checkHost('foo-operator-webhook-service.foo-operator-system.svc')).toBeDefined();
    expect(cert.verify(new X509Certificate(pem('ca.crt')).publicKey)).toBe(true);
    const bundles = [
      ...objects.filter((o) => /WebhookConfiguration$/.test(o.kind)).flatMap((o) => o.webhooks),
      objects.find((o) => o.metadata.name === 'foos.samplecontroller.example.com')!.spec.conversion.webhook,
    ].map((w: Obj) => w.clientConfig.caBundle);
    expect(bundles).toHaveLength(4);
    expect(new Set(bundles)).toEqual(new Set([secret.data['ca.crt']]));
  });
});
