/**
 * `kubeloop install`/`uninstall` and `deploy`/`undeploy` (kubebuilder's make targets) against a
 * cluster reached through a kubeconfig — here a test control plane — and the kustomize layout
 * they render, which kubectl's own `apply -k` reads the same way.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type KubeconfigFile, kubeconfigFile, startTestEnv, type TestEnv } from '@kubeloop/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlAsync, kubeloop, kubeloopAsync, scratchDir } from './support.js';

const dir = scratchDir('deploy-');
const project = join(dir, 'gadget-operator');
let env: TestEnv;
let kubeconfig: KubeconfigFile;

beforeAll(async () => {
  env = await startTestEnv();
  kubeconfig = kubeconfigFile(env);
  expect(kubeloop(['init', 'gadget-operator', '--domain', 'example.com', '--no-install'], dir).code).toBe(0);
  expect(
    kubeloop(['create', 'api', '--group', 'tools', '--version', 'v1', '--kind', 'Gadget'], project).code,
  ).toBe(0);
});
afterAll(async () => {
  kubeconfig?.remove();
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubeloop install / uninstall', () => {
  it('says what to run when config/crd has no CRD yet', async () => {
    const r = await kubeloopAsync(['install', '--kubeconfig', kubeconfig.path], project);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'config/crd has no CRD: `kubeloop create api` declares a kind, `kubeloop generate` writes its CRD',
    );
  });

  it('installs the generated CRDs, Established when it returns, and removes them', async () => {
    expect((await kubeloopAsync(['generate'], project)).code).toBe(0);
    const install = await kubeloopAsync(['install', '--kubeconfig', kubeconfig.path], project);
    expect(install.stderr).toBe('');
    expect(install.stdout).toContain('customresourcedefinition gadgets.tools.example.com established');
    // Served at once: no waiting after `install` returns.
    expect((await kubectlAsync(kubeconfig.path, ['get', 'gadgets'])).code).toBe(0);
    const uninstall = await kubeloopAsync(['uninstall', '--kubeconfig', kubeconfig.path], project);
    expect(uninstall.stdout).toContain('customresourcedefinition gadgets.tools.example.com deleted');
    expect(
      (await kubectlAsync(kubeconfig.path, ['get', 'crd', 'gadgets.tools.example.com'])).stderr,
    ).toContain('NotFound');
  });
});

describe('kubeloop deploy / undeploy', () => {
  it('deploys the operator with --image, as kubectl apply -k config/default renders it, and removes it', async () => {
    const deploy = await kubeloopAsync(
      ['deploy', '--image', 'registry.example.com/gadget-operator:v0.1.0', '--kubeconfig', kubeconfig.path],
      project,
    );
    expect(deploy.stderr).toBe('');
    expect(deploy.stdout).toContain(
      'Deployment gadget-operator-system/gadget-operator-controller-manager applied',
    );
    const image = await kubectlAsync(kubeconfig.path, [
      'get',
      'deployment',
      'gadget-operator-controller-manager',
      '-n',
      'gadget-operator-system',
      '-o',
      'jsonpath={.spec.template.spec.containers[0].image}',
    ]);
    expect(image.stdout).toBe('registry.example.com/gadget-operator:v0.1.0');
    // kubectl's built-in kustomize reads the same layout: nothing differs from what was deployed.
    const diff = await kubectlAsync(kubeconfig.path, [
      'diff',
      '--server-side',
      '--force-conflicts',
      '-k',
      join(project, 'config/default'),
    ]);
    expect(diff.stderr).toBe('');
    expect(diff.code).toBe(0);
    const undeploy = await kubeloopAsync(['undeploy', '--kubeconfig', kubeconfig.path], project);
    expect(undeploy.stdout).toContain('Namespace gadget-operator-system deleted');
    expect(
      (await kubectlAsync(kubeconfig.path, ['get', 'crd', 'gadgets.tools.example.com'])).stderr,
    ).toContain('NotFound');
  });

  it('deploys a project with webhooks to the local control plane, which has no cert-manager: the certificate is issued and its CA injected as cert-manager would', async () => {
    const hook = kubeloop(
      [
        'create',
        'webhook',
        '--group',
        'tools',
        '--version',
        'v1',
        '--kind',
        'Gadget',
        '--defaulting',
        '--programmatic-validation',
      ],
      project,
    );
    expect(hook.code).toBe(0);
    const deploy = await kubeloopAsync(
      ['deploy', '--image', 'registry.example.com/gadget-operator:v0.1.0', '--kubeconfig', kubeconfig.path],
      project,
    );
    expect(deploy.stderr).toBe('');
    expect(deploy.stdout).toContain("no cert-manager on kubeloop's local control plane");
    expect(deploy.stdout).toContain(
      'MutatingWebhookConfiguration gadget-operator-mutating-webhook-configuration applied',
    );
    const ns = 'gadget-operator-system';
    const ca = await kubectlAsync(kubeconfig.path, [
      'get',
      'secret',
      'webhook-server-cert',
      '-n',
      ns,
      '-o',
      'jsonpath={.data.ca\\.crt}',
    ]);
    expect(ca.stdout).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const bundle = await kubectlAsync(kubeconfig.path, [
      'get',
      'mutatingwebhookconfiguration',
      'gadget-operator-mutating-webhook-configuration',
      '-o',
      'jsonpath={.webhooks[0].clientConfig.caBundle}',
    ]);
    expect(bundle.stdout).toBe(ca.stdout);
    const undeploy = await kubeloopAsync(['undeploy', '--kubeconfig', kubeconfig.path], project);
    expect(undeploy.stderr).toBe('');
    expect(undeploy.code).toBe(0);
    expect(undeploy.stdout).toContain(`Namespace ${ns} deleted`);
    expect(undeploy.stdout).toContain(
      'MutatingWebhookConfiguration gadget-operator-mutating-webhook-configuration deleted',
    );
  });

  it('refuses a kubeloop.local image the local image store does not hold (its pods would run nothing)', async () => {
    const store = join(dir, 'empty-store');
    const r = await kubeloopAsync(
      [
        'deploy',
        '--image',
        'kubeloop.local/gadget-operator:v9',
        '--store',
        store,
        '--kubeconfig',
        kubeconfig.path,
      ],
      project,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `kubeloop.local/gadget-operator:v9 is not in the local image store ${store}: build it with \`kubeloop build --store ${store}\``,
    );
  });
});
