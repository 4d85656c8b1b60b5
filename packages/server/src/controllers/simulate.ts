/**
 * Annotation that makes the simulated kubelet misbehave with a pod on purpose:
 * - `fail`: the containers exit with code 1 and the pod is `Failed`;
 * - `succeed`: the containers exit with code 0 and the pod is `Succeeded`;
 * - `crashloop`: the pod is `Running`, its containers restart forever (`CrashLoopBackOff`);
 * - `never-ready`: the pod is `Running` and never Ready.
 *
 * Its own module so that exporting it from `@kubeloop/server` does not load the controllers.
 */
export const SIMULATE_ANNOTATION = 'kubeloop.dev/simulate';

/** A pod's simulated CPU usage (`250m`), the pod's total, as `kubectl top` and the HPA see it. */
export const SIMULATE_CPU_ANNOTATION = 'kubeloop.dev/simulate-cpu';
/** A pod's simulated memory usage (`64Mi`). */
export const SIMULATE_MEMORY_ANNOTATION = 'kubeloop.dev/simulate-memory';
