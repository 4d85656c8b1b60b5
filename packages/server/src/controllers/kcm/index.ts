/**
 * The controllers of kube-controller-manager written as a user's operator would write them:
 * each one a `controller(...)` definition of `kubeloop/runtime`, run by the built-in controllers'
 * one `Manager` (one shared cache, read-your-writes), each reporting Events under its kube name.
 */

import { hostname } from 'node:os';
import {
  type Client,
  isAlreadyExists,
  type KubeObject,
  type ResourceDescriptor,
  StorageClass,
} from 'kubeloop/client';
import {
  type Clock,
  type ControllerDefinition,
  EventRecorder,
  type Runnable,
  type RunnableContext,
  realClock,
  untilAborted,
} from 'kubeloop/runtime';
import type { Logger } from 'pino';
import { csrSigningController, type SignFn } from './certificates.js';
import { cronJobController } from './cronjob.js';
import { disruptionController } from './disruption.js';
import { horizontalPodAutoscalerController } from './podautoscaler.js';
import { resourceQuotaController } from './resourcequota.js';
import { pvcProtectionController, pvProtectionController } from './storage-protection.js';
import { claimBinderController, STANDARD_STORAGE_CLASS, volumeReclaimController } from './volume.js';

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

/** What {@link kubeControllerManager} needs. */
export interface KubeControllerManagerOptions {
  /** Where the recorders log the Events they could not record. */
  logger: Logger;
  /** The wall clock (default {@link wallClock}). */
  clock?: Clock | undefined;
  /** Signs certificate requests with the cluster CA; without it, no CSR is signed. */
  sign?: SignFn | undefined;
  /**
   * The client that installs the cluster's add-ons (metrics-server's APIService, the default
   * StorageClass) as an administrator would (default: `client`).
   */
  installer?: Client;
}

/**
 * The `kubeloop/runtime` controllers of kube-controller-manager, and the runnable that makes the
 * cluster objects they serve (metrics-server's APIService, the default StorageClass) and stops
 * the recorders of the controllers that report Events under their own name, as kube's do.
 */
export function kubeControllerManager(
  client: Client,
  options: KubeControllerManagerOptions,
): (ControllerDefinition<never> | Runnable)[] {
  const clock = options.clock ?? wallClock;
  const recorders: EventRecorder[] = [];
  const recorder = (reportingController: string) => {
    const r = new EventRecorder(client, {
      reportingController,
      reportingInstance: `${reportingController}-${hostname()}`,
      log: options.logger,
    });
    recorders.push(r);
    return r;
  };
  const volumes = {
    events: recorder('persistentvolume-controller'),
    provisionerEvents: recorder(STANDARD_STORAGE_CLASS.provisioner ?? ''),
  };
  const definitions = [
    disruptionController(),
    resourceQuotaController(),
    horizontalPodAutoscalerController({ clock, events: recorder('horizontal-pod-autoscaler') }),
    claimBinderController(volumes),
    pvcProtectionController(),
    pvProtectionController(),
    volumeReclaimController(volumes),
    cronJobController({ clock, events: recorder('cronjob-controller') }),
    ...(options.sign ? [csrSigningController(options.sign)] : []),
  ] as unknown as ControllerDefinition<never>[];
  const setup: Runnable = {
    name: 'kube-controller-manager-setup',
    needLeaderElection: false,
    async start({ signal, log }: RunnableContext) {
      // metrics-server registers its group (in place of the Local APIService the API server made
      // for the group it serves), and the aggregator reports it Available.
      const installer = options.installer ?? client;
      const registering = registerMetricsApiService(installer).catch((err: unknown) =>
        log.warn({ err: String(err) }, 'metrics APIService not registered'),
      );
      // The default StorageClass, as kind and minikube install one (an existing one is kept as it is).
      const storageClass = installer
        .api(StorageClass)
        .create(STANDARD_STORAGE_CLASS)
        .then(
          () => undefined,
          (err: unknown) => {
            if (!isAlreadyExists(err)) log.warn({ err: String(err) }, 'default StorageClass not created');
          },
        );
      // Awaited before the stop returns, so that no request outlives the server.
      await Promise.all([registering, storageClass]);
      await untilAborted(signal);
      await Promise.all(recorders.map((r) => r.stop(false)));
    },
  };
  return [...definitions, setup];
}

async function registerMetricsApiService(client: Client): Promise<void> {
  const apiServices = client.api(API_SERVICE);
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
