import { describe, expect, it } from 'vitest';
import type { Client } from '../../client/client.js';
import type { KubeObject } from '../../client/types.js';
import { WriteTracker } from './read-your-writes.js';
import { trackingClient } from './tracking-client.js';

const PODS = { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const ref = { group: '', kind: 'Pod', namespace: 'ns', name: 'web' };

const pod = (rv: string, meta: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'ns', resourceVersion: rv, ...meta },
});

/** A client whose `delete` answers `answer`, as the API server would. */
function clientAnswering(answer: KubeObject): Client {
  return {
    api: () => ({ descriptor: PODS, namespace: 'ns', delete: async () => answer }),
  } as unknown as Client;
}

describe('trackingClient on deletes', () => {
  it('expects a pod deleted with a grace period to stay, terminating, until its kubelet removes it', async () => {
    const tracker = new WriteTracker();
    const terminating = pod('7', {
      deletionTimestamp: '2026-01-01T00:00:30Z',
      deletionGracePeriodSeconds: 30,
    });
    await trackingClient(clientAnswering(terminating), tracker).api(PODS, 'ns').delete('web');
    // The cache holding the terminating pod meets the expectation: a reader is not held up
    // until the kubelet finishes (nor, without a kubelet, until the read-your-writes timeout).
    expect(tracker.met(ref, pod('6'))).toBe(false);
    expect(tracker.met(ref, terminating)).toBe(true);
  });

  it('expects an object gone once a delete removed it (no grace period, or gracePeriodSeconds 0)', async () => {
    for (const [answer, options] of [
      [pod('7', { deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 }), undefined],
      [
        pod('7', { deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 }),
        { gracePeriodSeconds: 0 },
      ],
    ] as const) {
      const tracker = new WriteTracker();
      await trackingClient(clientAnswering(answer), tracker).api(PODS, 'ns').delete('web', options);
      expect(tracker.met(ref, answer)).toBe(false);
      expect(tracker.met(ref, undefined)).toBe(true);
    }
  });
});
