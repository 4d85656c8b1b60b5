import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseKubeconfig } from './kubeconfig.js';

// A file of its own: the test reads the module cache of this process, which no other test touches.
const require = createRequire(import.meta.url);
const yamlModules = () => Object.keys(require.cache).filter((k) => /[\\/]vendor[\\/]yaml\.cjs$/.test(k));
const installedYaml = () =>
  Object.keys(require.cache).filter((k) => /[\\/]node_modules[\\/]yaml[\\/]/.test(k));
const KUBECONFIG = 'clusters:\n- name: c\n  cluster: { server: https://one }\n';

afterEach(() => vi.useRealTimers());

describe('the YAML parser of kubeconfigs', () => {
  it('is not loaded for a kubeconfig kubectl wrote', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-kubeconfig-yaml-'));
    try {
      const path = join(dir, 'config');
      const kubectl = (...args: string[]) =>
        execFileSync('kubectl', ['config', ...args, `--kubeconfig=${path}`]);
      kubectl('set-cluster', 'c', '--server=https://c.example:6443', '--insecure-skip-tls-verify=true');
      kubectl('set-credentials', 'u', '--exec-command=aws', '--exec-arg=eks', '--exec-env=AWS_PROFILE=p');
      kubectl('set-context', 'ctx', '--cluster=c', '--user=u', '--namespace=ns');
      kubectl('use-context', 'ctx');
      const kc = parseKubeconfig(readFileSync(path, 'utf8'), path);
      expect(kc.currentContext?.name).toBe('ctx');
      expect(kc.clusters.get('c')?.value).toEqual({
        'insecure-skip-tls-verify': true,
        server: 'https://c.example:6443',
      });
      expect(kc.users.get('u')?.value).toMatchObject({ exec: { command: 'aws', args: ['eks'] } });
      expect(yamlModules()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is loaded to parse, kept while parses follow, and dropped a second after the last one', () => {
    vi.useFakeTimers();
    expect(yamlModules()).toEqual([]);
    expect(parseKubeconfig(KUBECONFIG).clusters.get('c')?.value.server).toBe('https://one');
    expect(yamlModules().length).toBe(1);
    vi.advanceTimersByTime(900);
    // A parse within the second keeps the same modules and starts the second again.
    const loaded = yamlModules();
    expect(parseKubeconfig(KUBECONFIG).clusters.size).toBe(1);
    vi.advanceTimersByTime(900);
    expect(yamlModules()).toEqual(loaded);
    vi.advanceTimersByTime(100);
    expect(yamlModules()).toEqual([]);
    // Loaded again when needed, with the same answers.
    expect(parseKubeconfig(KUBECONFIG).clusters.get('c')?.value.server).toBe('https://one');
    expect(() => parseKubeconfig('clusters: [')).toThrow(/YAML|yaml|flow/);
    vi.advanceTimersByTime(1000);
    expect(yamlModules()).toEqual([]);
  });

  it('leaves alone a yaml that someone else loaded before', () => {
    vi.useFakeTimers();
    const theirs = require('yaml') as typeof import('yaml');
    const loaded = installedYaml();
    expect(loaded.length).toBeGreaterThan(10);
    expect(parseKubeconfig(KUBECONFIG).clusters.size).toBe(1);
    vi.advanceTimersByTime(1000);
    expect(yamlModules()).toEqual([]);
    expect(installedYaml()).toEqual(loaded);
    expect(require('yaml')).toBe(theirs);
  });

  it('parses as the installed yaml does, of which it is the bundle (npm run build:yaml -w packages/kubeloop)', async () => {
    const vendored = require('../../../vendor/yaml.cjs') as typeof import('yaml');
    const installed = require('yaml') as typeof import('yaml');
    const docs = [
      KUBECONFIG,
      'a: &x { b: [1, 2.5, "s", null, true] }\nc: *x\nd: |\n  text\n  lines\ne: 0x1f\nf: 2001-12-14\n',
      'users:\n- name: u\n  user:\n    exec: { command: \'c\', args: ["--a"], env: null }\n',
    ];
    for (const d of docs) expect(vendored.parse(d)).toEqual(installed.parse(d));
    const error = (y: typeof import('yaml')) => {
      try {
        y.parse('a: [');
      } catch (e) {
        return { name: (e as Error).name, message: (e as Error).message };
      }
    };
    expect(error(vendored)).toEqual(error(installed));
    expect(error(vendored)?.name).toBe('YAMLParseError');
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    await promisify(execFile)(process.execPath, ['scripts/bundle-yaml.mjs', '--check'], { cwd: root });
  }, 60_000);

  it("gives yaml's own error for a kubeconfig the simple reader declines", () => {
    // A duplicate key is declined by the simple reader and reported by yaml, in yaml's words.
    const duplicate = 'clusters: []\nclusters: []\n';
    const yamlError = (() => {
      try {
        (require('../../../vendor/yaml.cjs') as typeof import('yaml')).parse(duplicate);
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(yamlError).toMatch(/unique/);
    expect(() => parseKubeconfig(duplicate)).toThrow(`not valid YAML: ${yamlError}`);
  });
});
