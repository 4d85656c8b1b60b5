/**
 * The horizontal pod autoscaler of kube-controller-manager (`pkg/controller/podautoscaler`,
 * autoscaling/v2): every sync period it reads the target's scale subresource and its pods'
 * `metrics.k8s.io` usage, computes the replicas each Resource metric asks for (utilization of
 * requests or average value, with kube's tolerance of 0.1 and its handling of unready and
 * unmeasured pods), applies the stabilization windows and scaling policies of `spec.behavior`,
 * writes the scale, and reports conditions, current metrics and Events as kube does. Time comes
 * from an injectable clock: tests move it across the sync period and the windows.
 */
import { matchesLabels, milli, parseLabelSelector } from 'kubeloop/api';
import { HorizontalPodAutoscaler, type KubeObject, Pod, type ResourceDescriptor } from 'kubeloop/client';
import {
  type Clock,
  type Condition,
  type ControllerDefinition,
  controller,
  type EventRecorder,
  type ReconcileResult,
  setCondition,
} from 'kubeloop/runtime';
import { updateStatus } from '../status-write.js';

/** kube-controller-manager's `--horizontal-pod-autoscaler-sync-period`. */
const SYNC_PERIOD_MS = 15_000;
/** `--horizontal-pod-autoscaler-tolerance`. */
const TOLERANCE = 0.1;

const POD_METRICS: ResourceDescriptor<PodMetrics> = {
  group: 'metrics.k8s.io',
  version: 'v1beta1',
  kind: 'PodMetrics',
  plural: 'pods',
  namespaced: true,
};
interface PodMetrics extends KubeObject {
  containers?: { name: string; usage?: Record<string, string> }[];
}

type Hpa = HorizontalPodAutoscaler;
type Spec = NonNullable<Hpa['spec']>;
type MetricSpec = NonNullable<Spec['metrics']>[number];
type MetricStatus = NonNullable<NonNullable<Hpa['status']>['currentMetrics']>[number];
type Rules = NonNullable<NonNullable<Spec['behavior']>['scaleUp']>;

const ready = (p: Pod) => (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const metaTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Options of {@link horizontalPodAutoscalerController}. */
export interface HpaControllerOptions {
  /** `now()` in epoch ms; the queue's clock too, so the sync period follows it. */
  clock: Clock;
  /** Events, reported by `horizontal-pod-autoscaler`. */
  events: EventRecorder;
}

/** A metric's proposal: replicas, the status to report, and how to name it in a rescale reason. */
interface Proposal {
  replicas: number;
  status: MetricStatus;
  name: string;
}

/** kube's `GetResourceReplicas`/`GetRawResourceReplicas`: the replica calculator. */
function calculate(
  current: number,
  pods: Pod[],
  usage: Map<string, number>,
  resource: string,
  target: { utilization?: number; averageValue?: number },
): { replicas: number; utilization?: number; average: number } | { error: string } {
  const requests = new Map<string, number>();
  const counted = new Map<string, number>();
  const missing: string[] = [];
  const unready: string[] = [];
  for (const p of pods) {
    const name = p.metadata?.name ?? '';
    if (p.metadata?.deletionTimestamp || p.status?.phase === 'Failed') continue;
    if (target.utilization !== undefined) {
      let sum = 0;
      for (const c of p.spec?.containers ?? []) {
        const r = milli(c.resources?.requests?.[resource]);
        if (r === undefined)
          return { error: `missing request for ${resource} in container ${c.name} of Pod ${name}` };
        sum += r;
      }
      requests.set(name, sum);
    }
    const u = usage.get(name);
    if (u === undefined) missing.push(name);
    else if (resource === 'cpu' && (p.status?.phase === 'Pending' || !ready(p))) unready.push(name);
    else counted.set(name, u);
  }
  if (counted.size === 0)
    return { error: `did not receive metrics for targeted pods (pods might be unready)` };
  const ratioOf = (m: Map<string, number>): { ratio: number; utilization?: number; average: number } => {
    let used = 0;
    let requested = 0;
    for (const [n, u] of m) {
      used += u;
      requested += requests.get(n) ?? 0;
    }
    const average = used / m.size;
    if (target.utilization !== undefined) {
      const utilization = Math.trunc((used * 100) / requested);
      return { ratio: utilization / target.utilization, utilization, average };
    }
    return { ratio: used / ((target.averageValue ?? 1) * m.size), average };
  };
  const first = ratioOf(counted);
  const scaleUpWithUnready = unready.length > 0 && first.ratio > 1;
  if (!scaleUpWithUnready && missing.length === 0) {
    if (Math.abs(1 - first.ratio) <= TOLERANCE) return { replicas: current, ...first };
    return { replicas: Math.ceil(first.ratio * counted.size), ...first };
  }
  const filled = new Map(counted);
  // Unmeasured pods count as using all they request when scaling down, nothing when scaling up.
  for (const n of missing)
    filled.set(
      n,
      first.ratio < 1
        ? target.utilization !== undefined
          ? (requests.get(n) ?? 0)
          : (target.averageValue ?? 0)
        : 0,
    );
  if (scaleUpWithUnready) for (const n of unready) filled.set(n, 0);
  const next = ratioOf(filled);
  if (
    Math.abs(1 - next.ratio) <= TOLERANCE ||
    (first.ratio < 1 && next.ratio > 1) ||
    (first.ratio > 1 && next.ratio < 1)
  )
    return { replicas: current, ...first };
  const replicas = Math.ceil(next.ratio * filled.size);
  if ((next.ratio < 1 && replicas > current) || (next.ratio > 1 && replicas < current))
    return { replicas: current, ...first };
  return { replicas, ...first };
}

/** The default rules of `spec.behavior` (kube's `GenerateHPAScaleUpRules`/`ScaleDownRules`). */
function rules(
  r: Rules | undefined,
  up: boolean,
): Required<Pick<Rules, 'stabilizationWindowSeconds' | 'selectPolicy' | 'policies'>> {
  return {
    stabilizationWindowSeconds: r?.stabilizationWindowSeconds ?? (up ? 0 : 300),
    selectPolicy: r?.selectPolicy ?? 'Max',
    policies:
      r?.policies ??
      (up
        ? [
            { type: 'Pods', value: 4, periodSeconds: 15 },
            { type: 'Percent', value: 100, periodSeconds: 15 },
          ]
        : [{ type: 'Percent', value: 100, periodSeconds: 15 }]),
  };
}

/** The horizontal pod autoscaler controller (`horizontal-pod-autoscaler`). */
export function horizontalPodAutoscalerController(o: HpaControllerOptions): ControllerDefinition<Hpa> {
  const { clock } = o;
  /** Recent recommendations and scale events, per HPA uid (kube keeps them in memory too). */
  const recommendations = new Map<string, { at: number; replicas: number }[]>();
  const scaleEvents = new Map<string, { at: number; change: number }[]>();
  return controller(HorizontalPodAutoscaler)
    .named('horizontal-pod-autoscaler')
    .withOptions({ clock })
    .onGone(() => undefined)
    .reconcile(async (hpa, { client, cache }): Promise<ReconcileResult> => {
      const now = clock.now();
      const ns = hpa.metadata?.namespace ?? '';
      const _name = hpa.metadata?.name ?? '';
      const uid = hpa.metadata?.uid ?? '';
      const spec = hpa.spec ?? ({} as Spec);
      const regarding: KubeObject = {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: hpa.metadata ?? {},
      };
      const event = (type: 'Normal' | 'Warning', reason: string, note: string) =>
        o.events.event(regarding, type, reason, note);
      let conditions = (hpa.status?.conditions ?? []) as Condition[];
      let rateLimited = false;
      const cond = (type: string, status: 'True' | 'False', reason: string, message: string) => {
        conditions = setCondition(conditions, { type, status, reason, message }, new Date(now));
        if (reason === 'ScaleUpLimit' || reason === 'ScaleDownLimit') rateLimited = true;
      };
      const write = async (extra: Partial<NonNullable<Hpa['status']>>) => {
        const status = {
          currentReplicas: hpa.status?.currentReplicas ?? 0,
          desiredReplicas: hpa.status?.desiredReplicas ?? 0,
          ...(hpa.status?.lastScaleTime && { lastScaleTime: hpa.status.lastScaleTime }),
          ...(hpa.status?.currentMetrics && { currentMetrics: hpa.status.currentMetrics }),
          ...extra,
          conditions,
          observedGeneration: hpa.metadata?.generation ?? 0,
        };
        // A stale HPA (409) is written again at its next sync.
        await updateStatus(client, HorizontalPodAutoscaler, hpa, status, { replace: true });
      };
      const again = { requeueAfter: Math.max(0, SYNC_PERIOD_MS - (clock.now() - now)) };

      const ref = spec.scaleTargetRef;
      const [group, version] = ref.apiVersion?.includes('/')
        ? ref.apiVersion.split('/')
        : ['', ref.apiVersion ?? 'v1'];
      const targetKind: ResourceDescriptor = { group: group ?? '', version: version ?? 'v1', kind: ref.kind };
      let scale: Awaited<ReturnType<ReturnType<typeof client.api>['getScale']>>;
      try {
        scale = await client.api(targetKind, ns).getScale(ref.name);
      } catch (err) {
        const message = `the HPA controller was unable to get the target's current scale: ${err instanceof Error ? err.message : String(err)}`;
        event('Warning', 'FailedGetScale', message);
        cond('AbleToScale', 'False', 'FailedGetScale', message);
        await write({});
        return again;
      }
      const current = scale.spec?.replicas ?? 0;
      const min = spec.minReplicas ?? 1;
      const max = spec.maxReplicas;
      cond(
        'AbleToScale',
        'True',
        'SucceededGetScale',
        "the HPA controller was able to get the target's current scale",
      );

      let desired: number;
      let reason = '';
      let metricsStatus: MetricStatus[] | undefined;
      if (current === 0 && min !== 0) {
        desired = 0;
        cond(
          'ScalingActive',
          'False',
          'ScalingDisabled',
          'scaling is disabled since the replica count of the target is zero',
        );
      } else if (current > max) {
        desired = max;
        reason = 'Current number of replicas above Spec.MaxReplicas';
      } else if (current < min) {
        desired = min;
        reason = 'Current number of replicas below Spec.MinReplicas';
      } else {
        const selector = parseLabelSelector(scale.status?.selector ?? '');
        const pods = (await cache.list(Pod, { namespace: ns })).filter((p) =>
          matchesLabels(selector, p.metadata?.labels),
        );
        let podMetrics: PodMetrics[] = [];
        try {
          podMetrics = (await client.api(POD_METRICS, ns).list()).items;
        } catch {
          podMetrics = [];
        }
        const metrics: MetricSpec[] = spec.metrics?.length
          ? spec.metrics
          : [
              {
                type: 'Resource',
                resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
              },
            ];
        const proposals: Proposal[] = [];
        let failure: { reason: string; message: string } | undefined;
        for (const m of metrics) {
          if (m.type !== 'Resource' || !m.resource) {
            failure = {
              reason: `FailedGet${m.type}Metric`,
              message: `the HPA controller does not simulate ${m.type} metrics`,
            };
            continue;
          }
          const resource = m.resource.name;
          const usage = new Map<string, number>();
          for (const pm of podMetrics) {
            let sum = 0;
            for (const c of pm.containers ?? []) sum += milli(c.usage?.[resource]) ?? 0;
            usage.set(pm.metadata?.name ?? '', sum);
          }
          const t = m.resource.target;
          const utilization = t.type === 'Utilization' ? (t.averageUtilization ?? 80) : undefined;
          const averageValue = t.type === 'AverageValue' ? milli(t.averageValue) : undefined;
          const r = calculate(current, pods, usage, resource, {
            ...(utilization !== undefined && { utilization }),
            ...(averageValue !== undefined && { averageValue }),
          });
          if ('error' in r) {
            failure = {
              reason: 'FailedGetResourceMetric',
              message: `the HPA was unable to compute the replica count: failed to get ${resource} utilization: ${r.error}`,
            };
            event('Warning', 'FailedGetResourceMetric', `failed to get ${resource} utilization: ${r.error}`);
            continue;
          }
          const avg = resource === 'cpu' ? `${Math.round(r.average)}m` : String(Math.round(r.average / 1000));
          proposals.push({
            replicas: r.replicas,
            name:
              utilization !== undefined
                ? `${resource} resource utilization (percentage of request)`
                : `${resource} resource`,
            status: {
              type: 'Resource',
              resource: {
                name: resource,
                current: {
                  averageValue: avg,
                  ...(r.utilization !== undefined && { averageUtilization: r.utilization }),
                },
              },
            },
          });
        }
        if (proposals.length === 0) {
          const f = failure ?? { reason: 'FailedGetResourceMetric', message: 'no metrics' };
          event(
            'Warning',
            'FailedComputeMetricsReplicas',
            `invalid metrics (${metrics.length} invalid out of ${metrics.length}), first error is: ${f.message}`,
          );
          cond('ScalingActive', 'False', f.reason, f.message);
          await write({ currentReplicas: scale.status?.replicas ?? current });
          return again;
        }
        const best = proposals.reduce((a, b) => (b.replicas > a.replicas ? b : a));
        metricsStatus = proposals.map((p) => p.status);
        desired = best.replicas;
        reason = desired > current ? `${best.name} above target` : 'All metrics below target';
        cond(
          'ScalingActive',
          'True',
          'ValidMetricFound',
          `the HPA was able to successfully calculate a replica count from ${best.name}`,
        );

        // Stabilization (`stabilizeRecommendationWithBehaviors`), then the policies' rate limits.
        const up = rules(spec.behavior?.scaleUp, true);
        const down = rules(spec.behavior?.scaleDown, false);
        const recent = (recommendations.get(uid) ?? []).filter(
          (r) =>
            now - r.at <=
            Math.max(up.stabilizationWindowSeconds ?? 0, down.stabilizationWindowSeconds ?? 0) * 1000,
        );
        recent.push({ at: now, replicas: desired });
        recommendations.set(uid, recent);
        let upRec = desired;
        let downRec = desired;
        for (const r of recent) {
          if (now - r.at <= (up.stabilizationWindowSeconds ?? 0) * 1000) upRec = Math.min(upRec, r.replicas);
          if (now - r.at <= (down.stabilizationWindowSeconds ?? 0) * 1000)
            downRec = Math.max(downRec, r.replicas);
        }
        let stabilized = current;
        if (stabilized < upRec) stabilized = upRec;
        if (stabilized > downRec) stabilized = downRec;
        if (stabilized !== desired)
          cond(
            'AbleToScale',
            'True',
            stabilized > desired ? 'ScaleDownStabilized' : 'ScaleUpStabilized',
            stabilized > desired
              ? 'recent recommendations were higher than current one, applying the highest recent recommendation'
              : 'recent recommendations were lower than current one, applying the lowest recent recommendation',
          );
        else cond('AbleToScale', 'True', 'ReadyForNewScale', 'recommended size matches current size');
        desired = stabilized;
        const events = (scaleEvents.get(uid) ?? []).filter((e) => now - e.at <= 30 * 60_000);
        const changedWithin = (seconds: number, sign: 1 | -1) =>
          events
            .filter((e) => now - e.at <= seconds * 1000 && Math.sign(e.change) === sign)
            .reduce((n, e) => n + Math.abs(e.change), 0);
        if (desired > current) {
          const limits = (up.policies ?? []).map((p) => {
            const base = current - changedWithin(p.periodSeconds, 1);
            return p.type === 'Pods' ? base + p.value : Math.ceil(base * (1 + p.value / 100));
          });
          const limit =
            up.selectPolicy === 'Disabled'
              ? current
              : up.selectPolicy === 'Min'
                ? Math.min(...limits)
                : Math.max(...limits);
          if (desired > limit) {
            desired = Math.max(current, limit);
            cond(
              'ScalingLimited',
              'True',
              'ScaleUpLimit',
              'the desired replica count is increasing faster than the maximum scale rate',
            );
          }
        } else if (desired < current) {
          const limits = (down.policies ?? []).map((p) => {
            const base = current + changedWithin(p.periodSeconds, -1);
            return p.type === 'Pods' ? base - p.value : Math.floor(base * (1 - p.value / 100));
          });
          const limit =
            down.selectPolicy === 'Disabled'
              ? current
              : down.selectPolicy === 'Min'
                ? Math.max(...limits)
                : Math.min(...limits);
          if (desired < limit) {
            desired = Math.min(current, limit);
            cond(
              'ScalingLimited',
              'True',
              'ScaleDownLimit',
              'the desired replica count is decreasing faster than the maximum scale rate',
            );
          }
        }
      }
      if (desired > max) {
        desired = max;
        cond(
          'ScalingLimited',
          'True',
          'TooManyReplicas',
          'the desired replica count is more than the maximum replica count',
        );
      } else if (desired < min && !(current === 0 && min !== 0)) {
        desired = min;
        cond(
          'ScalingLimited',
          'True',
          'TooFewReplicas',
          'the desired replica count is less than the minimum replica count',
        );
      } else if (!rateLimited)
        cond(
          'ScalingLimited',
          'False',
          'DesiredWithinRange',
          'the desired count is within the acceptable range',
        );

      let lastScaleTime = hpa.status?.lastScaleTime;
      if (desired !== current) {
        try {
          // An update of the Scale read above, as kube's HPA writes it (its role grants `*/scale` update).
          await client
            .api(targetKind, ns)
            .updateScale(ref.name, { ...scale, spec: { ...scale.spec, replicas: desired } });
        } catch (err) {
          const message = `the HPA controller was unable to update the target scale: ${err instanceof Error ? err.message : String(err)}`;
          event('Warning', 'FailedRescale', `New size: ${desired}; reason: ${reason}; error: ${message}`);
          cond('AbleToScale', 'False', 'FailedUpdateScale', message);
          await write({});
          throw err;
        }
        const list = scaleEvents.get(uid) ?? [];
        list.push({ at: now, change: desired - current });
        scaleEvents.set(uid, list);
        event('Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
        cond(
          'AbleToScale',
          'True',
          'SucceededRescale',
          `the HPA controller was able to update the target scale to ${desired}`,
        );
        lastScaleTime = metaTime(now);
      }
      await write({
        currentReplicas: scale.status?.replicas ?? current,
        desiredReplicas: desired,
        ...(metricsStatus && { currentMetrics: metricsStatus }),
        ...(lastScaleTime && { lastScaleTime }),
      });
      return again;
    });
}
