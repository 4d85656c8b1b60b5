/**
 * `kubeloop init` and `kubeloop create api`, run as a user runs them (the built command, in a
 * project folder): what they write, what they refuse, and the flags commander used to swallow.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TYPES_NODE_RANGE, TYPESCRIPT_RANGE, VITEST_RANGE } from '../src/commands/init.js';
import { kubeloop, root, scratchDir } from './support.js';

const dir = scratchDir('scaffold-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const project = join(dir, 'memcached-operator');

describe('kubeloop init', () => {
  it('writes a standalone project: scripts mirroring the Makefile, its own strict tsconfig, the project file', () => {
    const r = kubeloop(['init', 'memcached-operator', '--domain', 'example.com', '--no-install'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    expect(pkg.name).toBe('memcached-operator');
    expect(Object.keys(pkg.scripts)).toEqual(
      expect.arrayContaining([
        'build',
        'test',
        'manifests',
        'install-crds',
        'uninstall-crds',
        'run',
        'dev',
        'deploy',
        'undeploy',
      ]),
    );
    // npm runs a script named `install` at every `npm install`: it must not install CRDs.
    expect(pkg.scripts.install).toBeUndefined();
    expect(pkg.dependencies).toEqual({ kubeloop: '0.1.0' });
    const tsconfig = readFileSync(join(project, 'tsconfig.json'), 'utf8');
    expect(tsconfig).not.toContain('extends');
    expect(JSON.parse(tsconfig).compilerOptions.strict).toBe(true);
    expect(readFileSync(join(project, 'src/start.ts'), 'utf8')).toContain(
      'managerFlags(process.argv.slice(2)',
    );
    // The entry point sets the heap before it loads the operator (a static import would be loaded first).
    const main = readFileSync(join(project, 'src/main.ts'), 'utf8');
    expect(main.indexOf('tuneOperatorHeap();')).toBeGreaterThan(0);
    expect(main.indexOf("await import('./start.js');")).toBeGreaterThan(main.indexOf('tuneOperatorHeap();'));
    const file = parse(readFileSync(join(project, 'PROJECT'), 'utf8'));
    expect(file).toMatchObject({ domain: 'example.com', projectName: 'memcached-operator', resources: [] });
    for (const f of [
      '.gitignore',
      'README.md',
      'src/manager.ts',
      'src/manifests.ts',
      'src/testing/env.ts',
      'Dockerfile',
      'config/default/kustomization.yaml',
      'config/rbac/role.yaml',
      'config/manager/manager.yaml',
    ])
      expect(existsSync(join(project, f)), f).toBe(true);
  });

  it('refuses a project that exists, and a bad domain', () => {
    expect(
      kubeloop(['init', 'memcached-operator', '--domain', 'example.com', '--no-install'], dir).stderr,
    ).toContain('already has a PROJECT');
    const bad = kubeloop(['init', 'other', '--domain', 'Example_com', '--no-install'], dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--domain "Example_com" must be a DNS-1123 subdomain');
  });

  it('asks for a missing --domain only in a terminal: elsewhere (CI) it names the flag', () => {
    const r = kubeloop(['init', 'nodomain', '--no-install'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--domain is required');
  });

  it('gives new projects the TypeScript and @types/node kubeloop is built with', () => {
    const repo = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(TYPESCRIPT_RANGE.replace(/^[~^]/, '')).toMatch(
      new RegExp(`^${repo.devDependencies.typescript.replace(/^[~^]/, '').replace('.', '\\.')}`),
    );
    expect(TYPES_NODE_RANGE).toBe(repo.devDependencies['@types/node']);
    expect(VITEST_RANGE).toBe(repo.devDependencies.vitest);
  });
});

describe('kubeloop create api', () => {
  it('takes --version as the API version, not as the global --version', () => {
    const r = kubeloop(
      ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'],
      project,
    );
    expect(r.stdout).not.toMatch(/^0\.1\.0/);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(kubeloop(['--version'], project).stdout.trim()).toBe('0.1.0');
  });

  it('scaffolds the declaration, the controller and its test, and registers them', () => {
    const api = readFileSync(join(project, 'src/api/cache/v1/memcached.ts'), 'utf8');
    expect(api).toContain("group: 'cache.example.com'");
    expect(api).toContain("version: 'v1'");
    expect(api).not.toContain("scope: 'Cluster'");
    expect(existsSync(join(project, 'src/controller/memcached.ts'))).toBe(true);
    expect(existsSync(join(project, 'src/controller/memcached.test.ts'))).toBe(true);
    expect(readFileSync(join(project, 'src/manager.ts'), 'utf8')).toContain(
      'manager.add(memcachedController);',
    );
    expect(readFileSync(join(project, 'src/resources.ts'), 'utf8')).toContain(
      '{ resource: Memcached, sample: memcachedSample },',
    );
    expect(parse(readFileSync(join(project, 'PROJECT'), 'utf8')).resources).toEqual([
      {
        group: 'cache',
        version: 'v1',
        kind: 'Memcached',
        domain: 'example.com',
        plural: 'memcacheds',
        path: 'src/api/cache/v1/memcached.ts',
        api: { crdVersion: 'v1', namespaced: true },
        controller: true,
      },
    ]);
  });

  it('scaffolds a cluster-scoped kind with --namespaced=false, and a resource without a controller', () => {
    expect(
      kubeloop(
        [
          'create',
          'api',
          '--group',
          'infra',
          '--version',
          'v1alpha1',
          '--kind',
          'Region',
          '--namespaced=false',
        ],
        project,
      ).code,
    ).toBe(0);
    expect(readFileSync(join(project, 'src/api/infra/v1alpha1/region.ts'), 'utf8')).toContain(
      "scope: 'Cluster'",
    );
    expect(
      kubeloop(
        ['create', 'api', '--group', 'infra', '--version', 'v1', '--kind', 'Zone', '--controller=false'],
        project,
      ).code,
    ).toBe(0);
    expect(existsSync(join(project, 'src/controller/zone.ts'))).toBe(false);
    expect(readFileSync(join(project, 'src/manager.ts'), 'utf8')).not.toContain('zone');
  });

  it('refuses a kind that exists, a missing flag outside a terminal, and a folder that is no project', () => {
    const again = kubeloop(
      ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'],
      project,
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');
    const missing = kubeloop(['create', 'api', '--group', 'cache', '--version', 'v1'], project);
    expect(missing.stderr).toContain('--kind is required');
    expect(
      kubeloop(['create', 'api', '--group', 'a', '--version', 'v1', '--kind', 'A'], dir).stderr,
    ).toContain('is not a kubeloop project (no PROJECT)');
  });
});

describe('kubeloop run', () => {
  it("passes the flags after -- to the operator, whose manager reads them (--help: kubebuilder's flags)", () => {
    const r = kubeloop(['run', '--', '--help'], project, { KUBECONFIG: join(dir, 'no-such-kubeconfig') });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--metrics-bind-address <addr>');
    expect(r.stdout).toContain('--leader-elect[=true|false]');
  });
});

describe('what the seed operators found', () => {
  it("takes --group '' as kubebuilder does: the domain is the kind's API group", () => {
    const r = kubeloop(['create', 'api', '--group', '', '--version', 'v1', '--kind', 'Widget'], project);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const api = readFileSync(join(project, 'src/api/v1/widget.ts'), 'utf8');
    expect(api).toContain("group: 'example.com'");
    expect(api).toContain("apiVersion: 'example.com/v1'");
    expect(readFileSync(join(project, 'src/controller/widget.ts'), 'utf8')).toContain(
      "from '../api/v1/widget.js'",
    );
    const widget = parse(readFileSync(join(project, 'PROJECT'), 'utf8')).resources.find(
      (x: { kind: string }) => x.kind === 'Widget',
    );
    expect(widget).toMatchObject({ group: '', domain: 'example.com', path: 'src/api/v1/widget.ts' });
    const hook = kubeloop(
      ['create', 'webhook', '--group', '', '--version', 'v1', '--kind', 'Widget', '--defaulting'],
      project,
    );
    expect(hook.stderr).toBe('');
    expect(readFileSync(join(project, 'src/webhooks/widget.ts'), 'utf8')).toContain(
      "import { Widget } from '../api/v1/widget.js';",
    );
  });

  it('commits dist/install.yaml (kubebuilder does) while the rest of dist/ stays ignored', () => {
    expect(spawnSync('git', ['init', '-q'], { cwd: project }).status).toBe(0);
    const ignored = (f: string) => spawnSync('git', ['check-ignore', '-q', f], { cwd: project }).status === 0;
    expect(ignored('dist/install.yaml')).toBe(false);
    expect(ignored('dist/main.js')).toBe(true);
    expect(ignored('node_modules/x')).toBe(true);
  });

  it('writes "an EtcdCluster", not "a EtcdCluster"', () => {
    expect(
      kubeloop(['create', 'api', '--group', 'etcd', '--version', 'v1', '--kind', 'EtcdCluster'], project)
        .code,
    ).toBe(0);
    const api = readFileSync(join(project, 'src/api/etcd/v1/etcdcluster.ts'), 'utf8');
    const controller = readFileSync(join(project, 'src/controller/etcdcluster.ts'), 'utf8');
    expect(api).toContain('An EtcdCluster object');
    expect(controller).toContain("what an EtcdCluster's spec asks");
    expect(`${api}${controller}`).not.toMatch(/\ba EtcdCluster/i);
  });

  it("scaffolds vitest tests, run by the project's npm test (and by kubeloop's vitest for an example in the repository)", () => {
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    expect(pkg.scripts.test).toBe('kubeloop generate && vitest run');
    expect(pkg.devDependencies.vitest).toBe(VITEST_RANGE);
    expect(readFileSync(join(project, 'vitest.config.ts'), 'utf8')).toContain(
      "include: ['src/**/*.test.ts']",
    );
    const test = readFileSync(join(project, 'src/controller/memcached.test.ts'), 'utf8');
    expect(test).toContain("from 'vitest'");
    expect(test).not.toContain('node:test');
  });
});
