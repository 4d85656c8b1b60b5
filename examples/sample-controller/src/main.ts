/**
 * The operator's entry point: `node dist/main.js [--leader-elect] [--metrics-bind-address=:8080]
 * [--health-probe-bind-address=:8081] [--max-concurrent-reconciles=N]` (kubebuilder's flags, read by
 * `kubeloop/runtime`) and the webhook server's `[--webhook-port=9443] [--webhook-host=127.0.0.1]
 * [--webhook-cert-path=DIR]` (`kubeloop/webhook`; `ENABLE_WEBHOOKS=false` runs without them),
 * against the in-cluster config or `KUBECONFIG`. The operator is in start.ts.
 */
import v8 from 'node:v8';
import { capYoungGeneration } from 'kubeloop/young-generation';

// This process is the operator's alone: keep V8's young generation at 4 MB instead of the 32 MB
// that loading the modules and filling the informer caches grow it to and never give back
// (~12 MB less RSS, same CPU). Capped before the operator's modules load, not at the manager's
// start: an import graph is loaded before any of its code runs, and the loading alone grows it
// to 16 MB.
capYoungGeneration(4);
// With a small young generation more short-lived objects reach the old one; collect it when it
// has grown by half instead of V8's default of up to 4× (1,000 Foos: RSS ~102 -> ~90 MB, no CPU
// difference measurable on the bench).
v8.setFlagsFromString('--heap-growing-percent=50');
await import('./start.js');
