import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ProbeKind, type ProbeSubject, ProbeWorker } from './probes.js';

/**
 * The probe worker's schedule, on a fake clock: an exec probe whose command is answered here,
 * recording when it ran (ms since the worker started).
 */
function worker(
  kind: ProbeKind,
  probe: Record<string, unknown>,
  o: { run?: { started: boolean }; kubeletStartedAgo?: number; answer?: () => number } = {},
) {
  const t0 = Date.now();
  const probedAt: number[] = [];
  const changes: boolean[] = [];
  const run = { id: 'run-1', running: true, startedAt: t0, started: o.run?.started ?? true };
  const subject: ProbeSubject = { current: () => run, neverRestarted: () => false };
  const w = new ProbeWorker(
    kind,
    { exec: { command: ['true'] }, ...probe },
    {
      podIP: '127.0.0.1',
      container: {},
      exec: async () => {
        probedAt.push(Date.now() - t0);
        return o.answer?.() ?? 0;
      },
    },
    subject,
    (_run, ok) => changes.push(ok),
    t0 - (o.kubeletStartedAgo ?? 3_600_000),
  );
  w.start();
  return { w, run, probedAt, changes };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('ProbeWorker: kube 1.32 prober timing', () => {
  it('probes on the ticks of its period, the first one past initialDelaySeconds (not at the delay itself)', async () => {
    const { w, probedAt, changes } = worker('readiness', { initialDelaySeconds: 5, periodSeconds: 10 });
    await vi.advanceTimersByTimeAsync(25_000);
    // The tick at 0 is within the delay; at 10 s and 20 s it probes. Readiness starts failed.
    expect(probedAt).toEqual([10_000, 20_000]);
    expect(changes).toEqual([false, true]);
    w.stop();
  });

  it('runs a triggered readiness probe at once, once the initial delay is over', async () => {
    const { w, probedAt } = worker('readiness', { initialDelaySeconds: 5, periodSeconds: 10 });
    await vi.advanceTimersByTimeAsync(3000);
    w.trigger(); // within the delay: skipped
    await vi.advanceTimersByTimeAsync(3000);
    w.trigger(); // at 6 s
    await vi.advanceTimersByTimeAsync(1000);
    expect(probedAt).toEqual([6000]);
    w.stop();
  });

  it('does not probe readiness before the startup probe passed, then probes when triggered', async () => {
    const { w, run, probedAt } = worker('readiness', { periodSeconds: 10 }, { run: { started: false } });
    await vi.advanceTimersByTimeAsync(1500);
    w.trigger();
    await vi.advanceTimersByTimeAsync(500);
    expect(probedAt).toEqual([]);
    run.started = true;
    w.trigger(); // the kubelet writes the status of the container just started
    await vi.advanceTimersByTimeAsync(100);
    expect(probedAt).toEqual([2000]);
    w.stop();
  });

  it('spreads its first probe over a period when the kubelet started less than a period ago', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { w, probedAt } = worker('liveness', { periodSeconds: 10 }, { kubeletStartedAgo: 1000 });
    w.trigger(); // a trigger during the spread waits for it
    await vi.advanceTimersByTimeAsync(16_000);
    expect(probedAt).toEqual([5000, 15_000]);
    w.stop();
  });

  it('holds a failed liveness worker until the next run of the container', async () => {
    const { w, run, probedAt, changes } = worker(
      'liveness',
      { periodSeconds: 1, failureThreshold: 2 },
      { answer: () => 1 },
    );
    await vi.advanceTimersByTimeAsync(4500);
    // Liveness starts succeeded; failed after two failures in a row, then held.
    expect(probedAt).toEqual([0, 1000]);
    expect(changes).toEqual([true, false]);
    run.id = 'run-2';
    run.startedAt = Date.now();
    await vi.advanceTimersByTimeAsync(1000);
    expect(probedAt).toEqual([0, 1000, 5000]);
    w.stop();
  });
});
