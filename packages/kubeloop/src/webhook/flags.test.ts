import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { webhookFlags } from './flags.js';

/** The source modules `file` loads at run time (type-only imports left out), transitively. */
function runtimeImports(file: string, seen = new Set<string>()): Set<string> {
  for (const m of readFileSync(file, 'utf8').matchAll(
    /^(?:import|export)\s(?!type\s)[^;]*?from\s+'(\.[^']+)'/gm,
  )) {
    const dep = join(dirname(file), m[1]!.replace(/\.js$/, '.ts'));
    if (!seen.has(dep)) {
      seen.add(dep);
      runtimeImports(dep, seen);
    }
  }
  return seen;
}

describe('webhookFlags', () => {
  it('reads the webhook flags in both forms and leaves the rest for managerFlags', () => {
    const f = webhookFlags(
      [
        '--leader-elect',
        '--webhook-port=9444',
        '--webhook-cert-path',
        '/certs',
        '-webhook-host=0.0.0.0',
        '--metrics-bind-address=:8080',
      ],
      {},
    );
    expect(f).toEqual({
      enabled: true,
      options: { port: 9444, certDir: '/certs', host: '0.0.0.0' },
      rest: ['--leader-elect', '--metrics-bind-address=:8080'],
    });
    expect(webhookFlags(['--webhook-cert-name=a.crt', '--webhook-cert-key=a.key'], {}).options).toEqual({
      certName: 'a.crt',
      keyName: 'a.key',
    });
  });

  it('reads the certificate directory under $KUBELOOP_ROOT in a process-backed pod', () => {
    expect(webhookFlags([], { KUBELOOP_ROOT: '/pods/p1' }).options.certDir).toBe(
      '/pods/p1/tmp/k8s-webhook-server/serving-certs',
    );
    expect(webhookFlags(['--webhook-cert-path=/certs'], { KUBELOOP_ROOT: '/pods/p1' }).options.certDir).toBe(
      '/pods/p1/certs',
    );
    expect(webhookFlags(['--webhook-cert-path=certs'], { KUBELOOP_ROOT: '/pods/p1' }).options.certDir).toBe(
      'certs',
    );
  });

  it('loads none of the webhook server (an operator reads the flags even when it serves no webhooks)', () => {
    const here = dirname(fileURLToPath(import.meta.url));
    const loaded = [...runtimeImports(join(here, 'flags.ts'))].map((f) =>
      f.slice(here.length - 'webhook'.length),
    );
    expect(loaded.sort()).toEqual(
      [
        'client/config/errors.ts',
        'client/config/in-cluster.ts',
        'client/config/pem.ts',
        'webhook/defaults.ts',
      ].sort(),
    );
  });

  it('ENABLE_WEBHOOKS=false turns them off; a bad port or a missing value is an error', () => {
    expect(webhookFlags([], { ENABLE_WEBHOOKS: 'false' }).enabled).toBe(false);
    expect(() => webhookFlags(['--webhook-port=http'], {})).toThrow(
      '--webhook-port must be a port number, got "http"',
    );
    expect(() => webhookFlags(['--webhook-port'], {})).toThrow('flag needs an argument: --webhook-port');
  });
});
