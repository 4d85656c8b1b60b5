/**
 * The manager's command line (kubebuilder's flags, parsed by the SDK rather than by each
 * operator) and its shutdown on signals.
 */
import { Writable } from 'node:stream';
import { ManagerFlagsError, managerOptionsFromFlags, parseManagerFlags } from 'kubeloop/runtime';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RuntimeEnv, startRuntimeEnv, testManager } from './helpers.js';

describe('parseManagerFlags', () => {
  it("reads kubebuilder's manager flags as Go's flag package does", () => {
    expect(
      parseManagerFlags([
        '--leader-elect',
        '--metrics-bind-address=:9090',
        '--health-probe-bind-address',
        '0',
      ]),
    ).toEqual({ leaderElect: true, metricsBindAddress: ':9090', healthProbeBindAddress: false, rest: [] });
    expect(parseManagerFlags([])).toEqual({
      leaderElect: false,
      metricsBindAddress: ':8080',
      healthProbeBindAddress: ':8081',
      rest: [],
    });
    expect(parseManagerFlags(['-leader-elect=false', '-max-concurrent-reconciles=3'])).toMatchObject({
      leaderElect: false,
      maxConcurrentReconciles: 3,
    });
    expect(() => parseManagerFlags(['--nope'])).toThrow(ManagerFlagsError);
    expect(() => parseManagerFlags(['--nope'])).toThrow('unknown flag "--nope"');
    expect(() => parseManagerFlags(['--metrics-bind-address'])).toThrow('flag needs an argument');
    expect(() => parseManagerFlags(['--leader-elect=maybe'])).toThrow('invalid boolean value');
    expect(parseManagerFlags(['--zap-devel', 'x'], { allowUnknown: true }).rest).toEqual([
      '--zap-devel',
      'x',
    ]);
  });

  it('turns them into the options of a Manager', () => {
    const flags = parseManagerFlags([
      '--leader-elect',
      '--leader-election-namespace=ops',
      '--metrics-bind-address=0',
    ]);
    expect(managerOptionsFromFlags(flags, { leaderElectionId: 'foo.example.com' })).toEqual({
      metricsAddress: false,
      healthProbeAddress: ':8081',
      leaderElection: { id: 'foo.example.com', namespace: 'ops' },
    });
    expect(() => managerOptionsFromFlags(flags)).toThrow('needs a leader election id');
  });
});

describe('a signal', () => {
  let env: RuntimeEnv;
  beforeAll(async () => {
    env = await startRuntimeEnv();
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('stops the manager, logged once when Ctrl-C and a supervisor both signal it', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          lines.push(chunk.toString());
          cb();
        },
      }),
    );
    const manager = testManager(env.client, { handleSignals: true, logger });
    const done = manager.start();
    await manager.ready();
    // The terminal's SIGINT, then kubeloop dev's (or any supervisor's) SIGTERM.
    process.emit('SIGINT');
    process.emit('SIGTERM');
    await done;
    expect(lines.filter((l) => l.includes('shutting down'))).toHaveLength(1);
  });
});
