/**
 * Helpers of the controller and manager suite: a control plane with the Widget CRD (from the
 * runtime suite) and managers tuned for tests (quiet logs, ephemeral ports, short leases).
 */
import type { Client } from 'kubeloop/client';
import { type LeaderElectionOptions, Manager, type ManagerOptions } from 'kubeloop/runtime';
import { pino } from 'pino';
import { eventually, type RuntimeEnv, startRuntimeEnv, Widget } from '../helpers.js';

export { eventually, type RuntimeEnv, startRuntimeEnv, Widget };

/** Lease timings short enough for tests (client-go's ratios: 15 / 10 / 2). */
export const FAST_LEASE: Omit<LeaderElectionOptions, 'id'> = {
  leaseDurationMs: 1_500,
  renewDeadlineMs: 1_000,
  retryPeriodMs: 200,
};

/** A manager on `client`, quiet, with probes and metrics on one ephemeral port, no signal handlers. */
export function testManager(client: Client, options: ManagerOptions = {}): Manager {
  return new Manager({
    client,
    logger: pino({ level: process.env.KUBELOOP_TEST_LOG ?? 'silent' }),
    healthProbeAddress: '127.0.0.1:0',
    metricsAddress: '127.0.0.1:0',
    handleSignals: false,
    gracefulShutdownTimeoutMs: 5_000,
    ...options,
  });
}

/** Starts a manager and waits until its caches synced; `done` settles when it stops. */
export async function run(manager: Manager): Promise<{ done: Promise<void> }> {
  const done = manager.start();
  done.catch(() => undefined);
  await manager.ready();
  return { done };
}

/** Fetches a manager endpoint (`/metrics`, `/readyz`). */
export async function fetchText(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

/** The value of a sample of the Prometheus text format, or undefined. */
export function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (ok) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}
