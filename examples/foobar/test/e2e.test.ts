/**
 * FooBar end to end, driven by the real kubectl as the README walks through it: the operator
 * installed with `kubectl apply -k config/default` (its CRDs, generated RBAC, webhook Service
 * and cert-manager Certificate), FooBar's
 * conversion pointed at the webhook server as `kubeloop dev` points it, the operator run under
 * its ServiceAccount; the seed's v1 sample applied and read at v2, `kubectl wait` for Ready, a
 * `kubectl replace` that cannot lose the status, a refused FooBar, and a delete that returns
 * once the external registry is clean.
 */
import { join } from 'node:path';
import { type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  certManagerCrds,
  eventually,
  fooBarCrdFor,
  OPERATOR_USER,
  type RunningOperator,
  type RunningWebhooks,
  root,
  startOperator,
  startWebhooks,
} from './env.js';

let env: KubectlEnv;
let webhooks: RunningWebhooks;
let op: RunningOperator;
beforeAll(async () => {
  env = await startKubectlEnv();
  await env.ok(['apply', '-f', '-'], { input: certManagerCrds() });
  await env.ok([
    'wait',
    '--for=condition=Established',
    'crd/issuers.cert-manager.io',
    'crd/certificates.cert-manager.io',
  ]);
  await env.ok(['apply', '-k', join(root, 'config/default')]);
  webhooks = await startWebhooks();
  // As deployed, the CRD names the webhook Service in the cluster; here the server runs locally.
  const conversion = fooBarCrdFor(webhooks.server).spec.conversion as {
    webhook: { clientConfig: Record<string, unknown> };
  };
  conversion.webhook.clientConfig.service = null;
  await env.ok([
    'patch',
    'crd',
    'foobars.test.example.com',
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { conversion } }),
  ]);
  await env.ok([
    'wait',
    '--for=condition=Established',
    'crd/foobars.test.example.com',
    'crd/foobartasks.test.example.com',
  ]);
  op = await startOperator(env.cp);
});
afterAll(async () => {
  await op?.stop();
  await webhooks?.stop();
  await env?.stop();
});

const get = (args: string[], path: string) => env.ok(['get', ...args, '-o', `jsonpath=${path}`]);

describe('FooBar with kubectl', () => {
  it('is what the generated RBAC lets its ServiceAccount do, and no more', async () => {
    const can = async (verb: string, resource: string) =>
      (
        await env.run(['auth', 'can-i', verb, resource, '--all-namespaces', `--as=${OPERATOR_USER}`])
      ).stdout.trim();
    expect(await can('create', 'foobartasks.test.example.com')).toBe('yes');
    expect(await can('patch', 'foobars.test.example.com/status')).toBe('yes');
    expect(await can('create', 'foobars.test.example.com')).toBe('no');
    expect(await can('delete', 'foobars.test.example.com')).toBe('no');
  });

  it('applies the seed’s v1 sample, stores it at v2 and shows it Ready at both versions', async () => {
    await env.ok(['apply', '-f', join(root, 'config/samples/test_v1_foobar.yaml')]);
    await env.ok(['wait', '--for=condition=Ready', 'foobar/foobar-sample', '--timeout=30s']);
    expect(
      await get(['foobars.v2.test.example.com', 'foobar-sample'], '{.spec.target.name} {.spec.target.type}'),
    ).toBe('web.example.com http');
    expect(await get(['foobars.v1.test.example.com', 'foobar-sample'], '{.spec.target} {.spec.type}')).toBe(
      'web.example.com http',
    );
    expect(await get(['crd', 'foobars.test.example.com'], '{.status.storedVersions}')).toBe('["v2"]');
    // kubectl's preferred version is v2: its printer columns.
    const table = (await env.ok(['get', 'foobars'])).split('\n');
    expect(table[0]).toMatch(/^NAME\s+TARGET\s+TYPE\s+READY\s+AGE$/);
    expect(table[1]).toMatch(/^foobar-sample\s+web\.example\.com\s+http\s+True\s+/);
    expect(await get(['foobartask', 'foobar-sample'], '{.metadata.ownerReferences[0].kind}')).toBe('FooBar');
    expect(op.registry.get('default/foobar-sample')).toEqual({ target: 'web.example.com', type: 'http' });
  });

  it('keeps the status through a kubectl replace (the status subresource; seed 000 3.4, 3.5)', async () => {
    const generation = await get(['foobar', 'foobar-sample'], '{.metadata.generation}');
    const replaced = await env.run(['replace', '-f', '-'], {
      input:
        'apiVersion: test.example.com/v1\nkind: FooBar\nmetadata:\n  name: foobar-sample\n  namespace: default\nspec:\n  target: web.example.com\n  type: http\n',
    });
    expect(replaced.code).toBe(0);
    // The replace dropped the operator's finalizer with the rest of the metadata: it is put back.
    await eventually(
      async () =>
        (await get(['foobar', 'foobar-sample'], '{.metadata.finalizers}')) ===
        '["test.example.com/task-cleanup"]',
    );
    expect(await get(['foobar', 'foobar-sample'], '{.metadata.generation}')).toBe(generation);
    expect(await get(['foobar', 'foobar-sample'], '{.status.conditions[?(@.type=="Ready")].status}')).toBe(
      'True',
    );
  });

  it('refuses a FooBar without a target, and reports a refused type as not Ready', async () => {
    const bad = await env.run(['apply', '-f', '-'], {
      input: 'apiVersion: test.example.com/v1\nkind: FooBar\nmetadata:\n  name: bad\nspec:\n  type: http\n',
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('The FooBar "bad" is invalid: spec.target: Required value');
    await env.ok(['apply', '-f', '-'], {
      input:
        'apiVersion: test.example.com/v1\nkind: FooBar\nmetadata:\n  name: dns\nspec:\n  target: dns.example.com\n  type: udp\n',
    });
    await eventually(
      async () =>
        (await get(['foobar', 'dns'], '{.status.conditions[?(@.type=="Ready")].reason}')) === 'Refused',
    );
    expect(await env.ok(['describe', 'foobar', 'dns'])).toMatch(
      /Warning\s+Refused\s+.*does not serve type "udp"/,
    );
  });

  it('deletes a FooBar once the registry no longer holds it', async () => {
    op.registry.failNext('unregister', 'default/foobar-sample', 1);
    await env.ok(['delete', 'foobar', 'foobar-sample', '--timeout=30s']);
    expect(op.registry.get('default/foobar-sample')).toBeUndefined();
    expect(op.registry.callsOf('default/foobar-sample').slice(-2)).toEqual([
      'unregister:unavailable',
      'unregister:ok',
    ]);
    expect((await env.run(['get', 'foobartask', 'foobar-sample'])).code).toBe(1);
    expect(op.lines.filter((l) => l.msg.startsWith('forbidden: '))).toEqual([]);
  });
});
