/**
 * The Home end to end, driven by the real kubectl as the README walks through it: the operator
 * installed with `kubectl apply -k config/default` (its CRD, generated RBAC, webhook
 * configurations and Service, cert-manager Certificate), the configurations pointed at the
 * webhook server as `kubeloop dev` points them, the operator run under its ServiceAccount; the
 * sample applied and defaulted, the validator's refusals and warnings as kubectl prints them,
 * a locked Home that `kubectl delete` cannot delete.
 */
import { join } from 'node:path';
import { type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import { toYaml } from 'kubeloop/manifests';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  certManagerCrds,
  eventually,
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
  await env.ok(['wait', '--for=condition=Established', 'crd/homes.ajd.my.domain']);
  // As deployed, the configurations name the webhook Service; here the server runs locally.
  webhooks = await startWebhooks({
    mutatingName: 'home-mutating-webhook-configuration',
    validatingName: 'home-validating-webhook-configuration',
  });
  await env.ok(['replace', '-f', '-'], { input: toYaml(webhooks.configurations) });
  op = await startOperator(env.cp);
});
afterAll(async () => {
  await op?.stop();
  await webhooks?.stop();
  await env?.stop();
});

const get = (args: string[], path: string) => env.ok(['get', ...args, '-o', `jsonpath=${path}`]);
const apply = (yaml: string) => env.run(['apply', '-f', '-'], { input: yaml });

describe('Home with kubectl', () => {
  it('is what the generated RBAC lets its ServiceAccount do, and no more', async () => {
    const can = async (verb: string, resource: string) =>
      (
        await env.run(['auth', 'can-i', verb, resource, '--all-namespaces', `--as=${OPERATOR_USER}`])
      ).stdout.trim();
    expect(await can('create', 'configmaps')).toBe('yes');
    expect(await can('patch', 'homes.ajd.my.domain/status')).toBe('yes');
    expect(await can('create', 'homes.ajd.my.domain')).toBe('no');
    expect(await can('list', 'secrets')).toBe('no');
  });

  it('defaults the sample (the owner is who applied it) and keeps a ConfigMap of its rooms', async () => {
    const me = await env.ok(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    await env.ok(['apply', '-f', join(root, 'config/samples/ajd_v1_home.yaml')]);
    expect(await get(['home', 'home-sample'], '{.spec.owner} {.spec.floors} {.spec.rooms[*].floor}')).toBe(
      `${me} 2 0 0 1`,
    );
    await eventually(async () => (await get(['home', 'home-sample'], '{.status.rooms}')) === '3');
    expect(await get(['configmap', 'home-sample-rooms'], '{.data.kitchen} / {.data.bedroom}')).toBe(
      'floor=0 area=12 / floor=1 area=15',
    );
    const table = (await env.ok(['get', 'homes'])).split('\n');
    expect(table[0]).toMatch(/^NAME\s+OWNER\s+FLOORS\s+ROOMS\s+AREA\s+AGE$/);
    expect(table[1]).toMatch(new RegExp(`^home-sample\\s+${me}\\s+2\\s+3\\s+57\\s+`));
  });

  it('refuses a room named twice and a change of owner, and warns of a room without an area', async () => {
    const dup = await apply(
      'apiVersion: ajd.my.domain/v1\nkind: Home\nmetadata:\n  name: dup\nspec:\n  rooms: [{name: kitchen}, {name: kitchen}]\n',
    );
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('spec.rooms[1].name: Duplicate value: "kitchen"');
    const owner = await env.run([
      'patch',
      'home',
      'home-sample',
      '--type=merge',
      '-p',
      '{"spec":{"owner":"mallory"}}',
    ]);
    expect(owner.code).toBe(1);
    expect(owner.stderr).toContain('spec.owner: Invalid value: "mallory": field is immutable');
    const hall = await apply(
      'apiVersion: ajd.my.domain/v1\nkind: Home\nmetadata:\n  name: hut\nspec:\n  rooms: [{name: hall}]\n',
    );
    expect(hall.code).toBe(0);
    expect(hall.stderr).toContain('Warning: room "hall" has no area: status.area leaves it out');
  });

  it('cannot delete a locked Home; unlocked, deletes it with its ConfigMap', async () => {
    await env.ok(['patch', 'home', 'home-sample', '--type=merge', '-p', '{"spec":{"locked":true}}']);
    const locked = await env.run(['delete', 'home', 'home-sample']);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toContain(
      'spec.locked: Forbidden: a locked Home cannot be deleted: unlock it first',
    );
    await env.ok(['patch', 'home', 'home-sample', '--type=merge', '-p', '{"spec":{"locked":false}}']);
    await env.ok(['delete', 'home', 'home-sample']);
    await eventually(async () => (await env.run(['get', 'configmap', 'home-sample-rooms'])).code === 1);
    expect(op.lines.filter((l) => l.msg.startsWith('forbidden: '))).toEqual([]);
  });
});
