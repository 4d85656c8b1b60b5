import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseKubeconfig } from './kubeconfig.js';

// A file of its own: the test reads the module cache of this process, which no other test touches.
const require = createRequire(import.meta.url);
const yamlModules = () => Object.keys(require.cache).filter((k) => /[\\/]node_modules[\\/]yaml[\\/]/.test(k));
const KUBECONFIG = 'clusters:\n- name: c\n  cluster: { server: https://one }\n';

afterEach(() => vi.useRealTimers());

describe('the YAML parser of kubeconfigs', () => {
  it('is loaded to parse, kept while parses follow, and dropped a second after the last one', () => {
    vi.useFakeTimers();
    expect(yamlModules()).toEqual([]);
    expect(parseKubeconfig(KUBECONFIG).clusters.get('c')?.value.server).toBe('https://one');
    expect(yamlModules().length).toBeGreaterThan(10);
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
    const loaded = yamlModules();
    expect(loaded.length).toBeGreaterThan(10);
    expect(parseKubeconfig(KUBECONFIG).clusters.size).toBe(1);
    vi.advanceTimersByTime(1000);
    expect(yamlModules()).toEqual(loaded);
    expect(require('yaml')).toBe(theirs);
  });
});
