/**
 * kubeloop/client's server-side apply against the real server: create on apply, field
 * ownership across managers, conflicts as typed errors, `force`, and apply of the status.
 */
import { ApiError, ConfigMap, type Deployment, isConflict } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientEnv, rejection, startClientEnv } from './helpers.js';

let t: ClientEnv;
beforeAll(async () => {
  t = await startClientEnv();
});
afterAll(() => t.stop());

const managers = (obj: { metadata?: { managedFields?: { manager?: string; operation?: string }[] } }) =>
  (obj.metadata?.managedFields ?? []).map((e) => `${e.manager}/${e.operation}`).sort();

describe('client.apply', () => {
  it('creates the object when it does not exist, owned by the field manager', async () => {
    const cm = await t.client.apply<ConfigMap>(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'applied', namespace: 'default' },
        data: { mode: 'fast' },
      },
      { fieldManager: 'operator' },
    );
    expect(cm.data).toEqual({ mode: 'fast' });
    expect(cm.metadata?.uid).toBeTruthy();
    expect(managers(cm)).toEqual(['operator/Apply']);
  });

  it('merges the fields of two managers and removes what one stops applying', async () => {
    const api = t.client.api(ConfigMap, 'default');
    await api.apply(
      { metadata: { name: 'applied' }, data: { mode: 'fast', extra: 'x' } },
      { fieldManager: 'operator' },
    );
    await api.apply({ metadata: { name: 'applied' }, data: { owner: 'ops' } }, { fieldManager: 'ops-tool' });
    const cm = await api.apply(
      { metadata: { name: 'applied' }, data: { mode: 'fast' } },
      { fieldManager: 'operator' },
    );
    expect(cm.data).toEqual({ mode: 'fast', owner: 'ops' });
    expect(managers(cm)).toEqual(['operator/Apply', 'ops-tool/Apply']);
  });

  it('fails with a Conflict naming the field and its manager, and succeeds with force', async () => {
    const api = t.client.api(ConfigMap, 'default');
    const err = await rejection(
      api.apply({ metadata: { name: 'applied' }, data: { owner: 'me' } }, { fieldManager: 'operator' }),
    );
    expect(err).toBeInstanceOf(ApiError);
    expect(isConflict(err)).toBe(true);
    expect((err as ApiError).message).toBe(
      'Apply failed with 1 conflict: conflict with "ops-tool": .data.owner',
    );
    expect((err as ApiError).details?.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "ops-tool"', field: '.data.owner' },
    ]);
    const cm = await api.apply(
      { metadata: { name: 'applied' }, data: { mode: 'fast', owner: 'me' } },
      { fieldManager: 'operator', force: true },
    );
    expect(cm.data?.owner).toBe('me');
  });

  it('applies the status of a Deployment through its subresource, owning only the status', async () => {
    const deployment: Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1' }] },
        },
      },
    };
    await t.client.apply(deployment, { fieldManager: 'operator' });
    const updated = await t.client.applyStatus<Deployment>(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'default' },
        status: { replicas: 1 },
      },
      { fieldManager: 'deployment-controller' },
    );
    expect(updated.status?.replicas).toBe(1);
    const entry = updated.metadata?.managedFields?.find((e) => e.manager === 'deployment-controller');
    expect(entry).toMatchObject({
      operation: 'Apply',
      subresource: 'status',
      fieldsV1: { 'f:status': { 'f:replicas': {} } },
    });
  });
});
