/**
 * The controllers of kube-controller-manager written as a user's operator would write them:
 * each one a `controller(...)` definition of `kubeloop/runtime`, run together by one
 * {@link Manager} (one shared cache, read-your-writes), each reporting Events under its kube
 * name. The older built-in controllers beside this folder run their own informers and queues.
 */

import { hostname } from 'node:os';
import {
  type Client,
  isAlreadyExists,
  type KubeObject,
  type ResourceDescriptor,
  StorageClass,
} from 'kubeloop/client';
import { type Clock, type ControllerDefinition, EventRecorder, Manager, realClock } from 'kubeloop/runtime';
import { pino } from 'pino';
import { csrSigningController, type SignFn } from './certificates.js';
import { cronJobController } from './cronjob.js';
import { disruptionController } from './disruption.js';
import { horizontalPodAutoscalerController } from './podautoscaler.js';
import { resourceQuotaController } from './resourcequota.js';
import { claimBinderController, STANDARD_STORAGE_CLASS, volumeReclaimController } from './volume.js';

type Log = (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/**
 * The wall clock of the time-driven controllers (CronJob schedules, HPA stabilization windows):
 * `now()` is milliseconds since the epoch. Tests pass a `FakeClock` started at an epoch time.
 */
export const wallClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimer: (fn: () => void, ms: number) => realClock.setTimer(fn, ms),
});

const API_SERVICE: ResourceDescriptor = {
  group: 'apiregistration.k8s.io',
  version: 'v1',
  kind: 'APIService',
  plural: 'apiservices',
  namespaced: false,
};

/** The APIService metrics-server registers for `metrics.k8s.io/v1beta1`, which the API server serves. */
const METRICS_API_SERVICE: KubeObject = {
  apiVersion: 'apiregistration.k8s.io/v1',
  kind: 'APIService',
  metadata: { name: 'v1beta1.metrics.k8s.io', labels: { 'k8s-app': 'metrics-server' } },
  spec: {
    service: { name: 'metrics-server', namespace: 'kube-system', port: 443 },
    group: 'metrics.k8s.io',
    version: 'v1beta1',
    insecureSkipTLSVerify: true,
    groupPriorityMinimum: 100,
    versionPriority: 100,
  },
} as KubeObject;

/** What {@link KubeControllerManager} needs beside the client. */
export interface KubeControllerManagerOptions {
  log: Log;
  /** The wall clock (default {@link wallClock}). */
  clock?: Clock | undefined;
  /** Signs certificate requests with the cluster CA; without it, no CSR is signed. */
  sign?: SignFn | undefined;
}

/** The `kubeloop/runtime` controllers of kube-controller-manager under one {@link Manager}. */
export class KubeControllerManager {
  private readonly manager: Manager;
  private running: Promise<void> | undefined;
  private readonly client: Client;
  /** Recorders of the controllers that report Events under their own name, as kube's do. */
  private readonly recorders: EventRecorder[] = [];
  private readonly log: Log;
  /** The cluster objects made at start, awaited by stop so that no request outlives the server. */
  private setup: Promise<void> = Promise.resolve();

  constructor(client: Client, options: KubeControllerManagerOptions) {
    const log = options.log;
    this.log = log;
    // The manager logs with pino: its warnings and errors go to the control plane's log.
    const logger = pino(
      { level: 'warn', base: null, timestamp: false },
      {
        write(line: string) {
          try {
            const { level, msg, ...fields } = JSON.parse(line) as Record<string, unknown>;
            log(Number(level) >= 50 ? 'error' : 'warn', String(msg), fields);
          } catch {
            log('warn', line);
          }
        },
      },
    );
    this.manager = new Manager({
      client,
      logger,
      name: 'kube-controller-manager',
      healthProbeAddress: false,
      metricsAddress: false,
      handleSignals: false,
      gracefulShutdownTimeoutMs: 0,
    });
    const clock = options.clock ?? wallClock;
    const recorder = (reportingController: string) => {
      const r = new EventRecorder(client, {
        reportingController,
        reportingInstance: `${reportingController}-${hostname()}`,
        log: logger,
      });
      this.recorders.push(r);
      return r;
    };
    const volumes = {
      events: recorder('persistentvolume-controller'),
      provisionerEvents: recorder(STANDARD_STORAGE_CLASS.provisioner ?? ''),
    };
    this.client = client;
    const definitions = [
      disruptionController(),
      resourceQuotaController(),
      horizontalPodAutoscalerController({ clock, events: recorder('horizontal-pod-autoscaler') }),
      claimBinderController(volumes),
      volumeReclaimController(volumes),
      cronJobController({ clock, events: recorder('cronjob-controller') }),
      ...(options.sign ? [csrSigningController(options.sign)] : []),
    ] as unknown as ControllerDefinition<never>[];
    for (const d of definitions) this.manager.add(d);
  }

  start(): void {
    // metrics-server registers its group (in place of the Local APIService the API server made
    // for the group it serves), and the aggregator reports it Available.
    const registering = this.registerMetricsApiService().catch((err: unknown) =>
      this.log('warn', 'metrics APIService not registered', { err: String(err) }),
    );
    // The default StorageClass, as kind and minikube install one (an existing one is kept as it is).
    const storageClass = this.client
      .api(StorageClass)
      .create(STANDARD_STORAGE_CLASS)
      .then(
        () => undefined,
        (err: unknown) => {
          if (!isAlreadyExists(err))
            this.log('warn', 'default StorageClass not created', { err: String(err) });
        },
      );
    this.setup = Promise.all([registering, storageClass]).then(() => undefined);
    this.running = this.manager
      .start()
      .catch((err: unknown) => this.log('error', 'kube-controller-manager stopped', { err: String(err) }));
  }

  private async registerMetricsApiService(): Promise<void> {
    const apiServices = this.client.api(API_SERVICE);
    const name = METRICS_API_SERVICE.metadata?.name ?? '';
    try {
      await apiServices.create(METRICS_API_SERVICE);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await apiServices.get(name);
      if (existing.metadata?.labels?.['kube-aggregator.kubernetes.io/automanaged'] === undefined) return;
      await apiServices.update({
        ...METRICS_API_SERVICE,
        metadata: {
          ...METRICS_API_SERVICE.metadata,
          resourceVersion: existing.metadata?.resourceVersion ?? '',
        },
      });
    }
    await apiServices.patchStatus(name, {
      status: {
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'Passed',
            message: 'all checks passed',
            lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
          },
        ],
      },
    } as KubeObject);
  }

  waitForSync(): Promise<void> {
    return this.manager.ready();
  }

  async stop(): Promise<void> {
    await this.setup;
    await this.manager.stop();
    await this.running;
    await Promise.all(this.recorders.map((r) => r.stop(false)));
  }
}
