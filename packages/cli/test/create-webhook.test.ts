/**
 * `kubeloop create webhook`, run as a user runs it on a scaffolded project: what it refuses (in
 * kubebuilder's words), what it writes and wires, what PROJECT records, that running it again
 * changes nothing and that a later type joins the kind's file; and the scaffolded project
 * type-checks with its webhook tests passing under its own vitest.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kubeloop, root, scratchDir } from './support.js';

const dir = scratchDir('webhook-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const project = join(dir, 'cache-operator');
const read = (f: string) => readFileSync(join(project, f), 'utf8');

/** Every file of the project but node_modules and dist, with its content. */
function snapshot(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === 'dist') continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[relative(project, p)] = `${statSync(p).mtimeMs}:${readFileSync(p, 'utf8')}`;
    }
  };
  walk(project);
  return out;
}

function ok(args: string[]) {
  const r = kubeloop(args, project);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

const count = (text: string, s: string) => text.split(s).length - 1;

beforeAll(() => {
  expect(kubeloop(['init', 'cache-operator', '--domain', 'example.com', '--no-install'], dir).code).toBe(0);
  ok(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached']);
  ok([
    'create',
    'api',
    '--group',
    'etcd',
    '--version',
    'v1alpha1',
    '--kind',
    'EtcdCluster',
    '--controller=false',
  ]);
});

describe('kubeloop create webhook', () => {
  it('refuses a kind not created with create api, and no webhook type, in kubebuilder’s words', () => {
    const missing = kubeloop(
      ['create', 'webhook', '--group', 'cache', '--version', 'v2', '--kind', 'Memcached', '--defaulting'],
      project,
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      "no API found for cache.example.com/v2, Kind Memcached: run 'kubeloop create api --group cache --version v2 --kind Memcached' first",
    );
    const none = kubeloop(
      ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'],
      project,
    );
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      'kubeloop create webhook requires at least one of --defaulting, --programmatic-validation and --conversion to be true',
    );
    const spoke = kubeloop(
      [
        'create',
        'webhook',
        '--group',
        'cache',
        '--version',
        'v1',
        '--kind',
        'Memcached',
        '--conversion',
        '--spoke',
        'v9',
      ],
      project,
    );
    expect(spoke.stderr).toContain('invalid spoke version "v9"');
  });

  it('scaffolds a defaulter and a validator with their test, wires them into start.ts and manifests.ts, records them in PROJECT', () => {
    const out = ok([
      'create',
      'webhook',
      '--group',
      'cache',
      '--version',
      'v1',
      '--kind',
      'Memcached',
      '--defaulting',
      '--programmatic-validation',
    ]);
    expect(out).toContain('wrote src/webhooks/memcached.ts');
    const hooks = read('src/webhooks/memcached.ts');
    expect(hooks).toContain('export const memcachedDefaulter = defaulter(Memcached, (memcached) => {');
    expect(hooks).toContain('export const memcachedValidator = validator(Memcached, {');
    expect(hooks).toMatch(/export const webhooks = \[\n {2}memcachedDefaulter,\n {2}memcachedValidator,\n/);
    expect(read('src/webhooks/memcached.test.ts')).toContain("from 'vitest'");
    expect(read('src/webhooks.ts')).toContain('...memcachedWebhooks,');
    const main = read('src/start.ts');
    expect(main).toContain('const hooks = webhookFlags(process.argv.slice(2));');
    expect(main).toContain('managerFlags(hooks.rest, { leaderElectionId: LEADER_ELECTION_ID })');
    expect(main).toContain(
      'if (hooks.enabled) new WebhookServer(hooks.options).register(...allWebhooks).setupWithManager(manager);',
    );
    expect(read('src/manifests.ts')).toContain('webhooks: allWebhooks,');
    const memcached = parse(read('PROJECT')).resources.find((r: { kind: string }) => r.kind === 'Memcached');
    expect(memcached.webhooks).toEqual({ defaulting: true, validation: true, webhookVersion: 'v1' });
  });

  it('changes nothing when run again', () => {
    const before = snapshot();
    const again = ok([
      'create',
      'webhook',
      '--group',
      'cache',
      '--version',
      'v1',
      '--kind',
      'Memcached',
      '--defaulting',
      '--programmatic-validation',
    ]);
    expect(again).toContain('defaulting webhook already exists for Memcached');
    expect(snapshot()).toEqual(before);
  });

  it('adds a later type to the kind’s file, and wires the server into start.ts once', () => {
    ok([
      'create',
      'webhook',
      '--group',
      'etcd',
      '--version',
      'v1alpha1',
      '--kind',
      'EtcdCluster',
      '--defaulting',
    ]);
    ok([
      'create',
      'webhook',
      '--group',
      'etcd',
      '--version',
      'v1alpha1',
      '--kind',
      'EtcdCluster',
      '--programmatic-validation',
    ]);
    const hooks = read('src/webhooks/etcdcluster.ts');
    expect(count(hooks, 'export const etcdClusterDefaulter =')).toBe(1);
    expect(count(hooks, 'export const etcdClusterValidator =')).toBe(1);
    expect(hooks).toContain(
      "import { defaulter, fieldErrors, type ValidationResult, validator } from 'kubeloop/webhook';",
    );
    expect(hooks).toMatch(/ {2}etcdClusterDefaulter,\n {2}etcdClusterValidator,\n/);
    expect(hooks).toContain('Defaults an EtcdCluster on create');
    const test = read('src/webhooks/etcdcluster.test.ts');
    expect(test).toContain("import { etcdClusterDefaulter, etcdClusterValidator } from './etcdcluster.js';");
    const main = read('src/start.ts');
    expect(count(main, 'setupWithManager')).toBe(1);
    expect(count(main, "from 'kubeloop/webhook'")).toBe(1);
    expect(count(read('src/manifests.ts'), 'webhooks: allWebhooks')).toBe(1);
    expect(count(read('src/webhooks.ts'), '...etcdClusterWebhooks,')).toBe(1);
    const etcd = parse(read('PROJECT')).resources.find((r: { kind: string }) => r.kind === 'EtcdCluster');
    expect(etcd.webhooks).toEqual({ defaulting: true, validation: true, webhookVersion: 'v1' });
  });

  it('--conversion: refuses a kind of one version, then converts between the versions create api declared as one CRD', () => {
    const one = kubeloop(
      ['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached', '--conversion'],
      project,
    );
    expect(one.stderr).toContain(
      "Memcached has one version (v1): a conversion needs another: run 'kubeloop create api --group cache --version <other> --kind Memcached --controller=false' first",
    );
    // A second version: no second controller, and one declaration of both versions, registered once.
    ok(['create', 'api', '--group', 'cache', '--version', 'v2', '--kind', 'Memcached']);
    const v2 = read('src/api/cache/v2/memcached.ts');
    expect(v2).toContain(
      "import { MemcachedSpec as MemcachedSpecV1, MemcachedStatus as MemcachedStatusV1 } from '../v1/memcached.js';",
    );
    expect(v2).toMatch(
      /versions: \{\n {4}v1: \{\n {6}spec: MemcachedSpecV1,\n {6}status: MemcachedStatusV1,\n {6}storage: true,/,
    );
    const registry = read('src/resources.ts');
    expect(registry).toContain("import { Memcached, memcachedSample } from './api/cache/v2/memcached.js';");
    expect(registry).not.toContain('./api/cache/v1/memcached.js');
    expect(count(registry, '{ resource: Memcached, sample: memcachedSample },')).toBe(1);
    expect(count(read('src/manager.ts'), 'manager.add(memcachedController);')).toBe(1);

    ok([
      'create',
      'webhook',
      '--group',
      'cache',
      '--version',
      'v1',
      '--kind',
      'Memcached',
      '--conversion',
      '--spoke',
      'v2',
    ]);
    const hooks = read('src/webhooks/memcached.ts');
    // The defaulter and validator are of v1 (its own declaration); the conversion of every version.
    expect(hooks).toContain("import { Memcached as MemcachedVersions } from '../api/cache/v2/memcached.js';");
    expect(hooks).toContain(
      "export const memcachedConversion = conversion(MemcachedVersions, {\n  hub: 'v1',\n  spokes: {\n    v2: {",
    );
    expect(hooks).toMatch(/ {2}memcachedValidator,\n {2}memcachedConversion,\n/);
    expect(read('src/webhooks/memcached.test.ts')).toContain(
      'expectRoundTrip(memcachedConversion, [memcachedSample]);',
    );
    const memcached = parse(read('PROJECT')).resources.find(
      (r: { kind: string; version: string }) => r.kind === 'Memcached' && r.version === 'v1',
    );
    expect(memcached.webhooks).toEqual({
      defaulting: true,
      validation: true,
      conversion: true,
      spoke: ['v2'],
      webhookVersion: 'v1',
    });
  });

  it('leaves a project whose webhook tests pass under its own vitest', () => {
    const vitest = spawnSync(
      process.execPath,
      [join(root, 'node_modules/vitest/vitest.mjs'), 'run', 'src/webhooks'],
      {
        cwd: project,
        encoding: 'utf8',
        env: { ...process.env, CI: 'true' },
      },
    );
    expect(vitest.status, vitest.stdout + vitest.stderr).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: vitest's colours, whatever the env says
    expect(vitest.stdout.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/Tests +5 passed/);
  });
});
