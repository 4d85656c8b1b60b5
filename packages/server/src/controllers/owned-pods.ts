/**
 * The field index of the manager's cache by which the workload controllers (DaemonSet,
 * StatefulSet, Job) find the pods they control: one index on the one shared Pod cache, in place
 * of the per-controller Pod informers with a `controller-uid` indexer each of them had.
 */
import type { Pod } from 'kubeloop/client';
import { controllerOf } from 'kubeloop/runtime';

/** The cache field holding a pod's controller's UID (`cache.list(Pod, { fieldSelector: { [CONTROLLER_UID_FIELD]: uid } })`). */
export const CONTROLLER_UID_FIELD = 'metadata.controllerUID';

/** The extractor of {@link CONTROLLER_UID_FIELD}: every controller that indexes it passes this one. */
export const controllerUid = (p: Pod): string | undefined => controllerOf(p)?.uid;
