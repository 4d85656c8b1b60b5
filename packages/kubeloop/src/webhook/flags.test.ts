import { describe, expect, it } from 'vitest';
import { webhookFlags } from './flags.js';

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

  it('ENABLE_WEBHOOKS=false turns them off; a bad port or a missing value is an error', () => {
    expect(webhookFlags([], { ENABLE_WEBHOOKS: 'false' }).enabled).toBe(false);
    expect(() => webhookFlags(['--webhook-port=http'], {})).toThrow(
      '--webhook-port must be a port number, got "http"',
    );
    expect(() => webhookFlags(['--webhook-port'], {})).toThrow('flag needs an argument: --webhook-port');
  });
});
