/**
 * `kubeloop dev` on a project scaffolded by `kubeloop init` and `create api`: the manifests
 * follow the code while it runs (a new field of the spec is kept, not pruned), the hints name the
 * project's own kinds, and a project with nothing to install is told what to run.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kubectl, kubeloop, kubeloopProcess, scratchDir } from './support.js';

const dir = scratchDir('dev-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const devArgs = (kubeconfig: string) => [
  'dev',
  '--port=0',
  `--kubeconfig=${kubeconfig}`,
  '--metrics-bind-address=127.0.0.1:0',
  '--health-probe-bind-address=127.0.0.1:0',
];

describe('kubeloop dev', () => {
  it('regenerates the CRD when the declaration changes and reapplies it: a new spec field is kept', async () => {
    const project = join(dir, 'shop');
    expect(kubeloop(['init', 'shop', '--domain', 'example.com', '--no-install'], dir).code).toBe(0);
    expect(
      kubeloop(['create', 'api', '--group', 'web', '--version', 'v1', '--kind', 'Shop'], project).code,
    ).toBe(0);
    const kubeconfig = join(project, '.kubeloop/kubeconfig');
    const dev = kubeloopProcess(devArgs(kubeconfig), project, { terminal: true });
    // Where the output stood when Ctrl-C was typed: dev's "stopping" and the operator's own
    // shutdown line come in either order, both being signalled at once.
    let beforeCtrlC = 0;
    try {
      await dev.waitFor(/\[Shop\] default\/shop-sample .*status\.observedGeneration=1/);
      // The hints name the project's kinds, not another project's.
      expect(dev.output()).toContain('kubectl get shops -A');
      expect(dev.output()).not.toContain('foos');

      const api = join(project, 'src/api/web/v1/shop.ts');
      writeFileSync(
        api,
        readFileSync(api, 'utf8').replace(
          'ShopSpec = Type.Object({',
          "ShopSpec = Type.Object({\n  port: Type.Optional(Type.Integer({ description: 'The port.' })),",
        ),
      );
      await dev.waitFor(/applied the changed CRD\(s\): shops\.web\.example\.com/);
      await dev.waitFor(/restarting the operator/);
      const apply = kubectl(
        kubeconfig,
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'web.example.com/v1',
          kind: 'Shop',
          metadata: { name: 'with-port', namespace: 'default' },
          spec: { port: 8080 },
        }),
      );
      expect(apply.stderr).toBe('');
      expect(kubectl(kubeconfig, ['get', 'shop', 'with-port', '-o', 'jsonpath={.spec.port}']).stdout).toBe(
        '8080',
      );
      // The restarted operator reconciles it.
      await dev.waitFor(/\[Shop\] default\/with-port .*status\.observedGeneration=1/);
    } finally {
      beforeCtrlC = dev.output().length;
      await dev.stop();
    }
    // Ctrl-C reaches kubeloop dev and the operator (one process group), and dev stops the
    // operator too: the operator logs its shutdown once.
    const afterCtrlC = dev.output().slice(beforeCtrlC);
    expect(afterCtrlC).toContain('stopping');
    expect(afterCtrlC.match(/signal received, shutting down/g)).toHaveLength(1);
  });

  it('without config/crd, fails with the command that generates it instead of waiting forever', async () => {
    const project = join(dir, 'bare');
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'bare', type: 'module', private: true }),
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', outDir: 'dist', rootDir: 'src', types: [] },
        include: ['src'],
      }),
    );
    writeFileSync(join(project, 'src/main.ts'), 'export {};\n');
    const dev = kubeloopProcess(devArgs(join(project, '.kubeloop/kubeconfig')), project);
    const code = await dev.exited;
    expect(code).toBe(1);
    expect(dev.output()).toContain('has no config/crd: generate it with `kubeloop generate`');
  });
});
