/**
 * The registry entry of `Pod` (core/v1 `pods`): its resource type and
 * defaults, validation, printer columns, field selectors, storage hooks.
 */
import { ApiError, type StatusCause } from 'kubeloop/api';
import { parseIPSloppy } from '../../util/cidr.js';
import { isObject, meta, timestamp } from '../../util/object.js';
import {
  ageColumn,
  col,
  type KindBehaviour,
  nameColumn,
  type PostSubresource,
  type StorageHooks,
} from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { podStatusStrategy } from '../shared/status-strategy.js';
import {
  dig,
  duplicate,
  GoValue,
  humanDuration,
  int,
  invalid,
  isDNS1123Subdomain,
  isObj,
  type Obj,
  objAt,
  objs,
  parseTime,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { validateEphemeralContainersUpdate, validateNoEphemeralOnCreate } from './pod-ephemeral.js';
import { validatePodSpec, validatePodUpdate } from './podspec.js';
import { defaultPod } from './podspec-defaults.js';
import { age, nameOf } from './shared.js';

// ---------------------------------------------------------------------------------------------
// Pods
const isRestartableInit = (c: Obj | undefined): boolean => c?.restartPolicy === 'Always';
const hasCondition = (status: Obj, type: string): boolean =>
  objs(status.conditions).some((c) => c.type === type && c.status === 'True');
/** The aggregate READY, STATUS and RESTARTS of printers.go `printPod`. */

export function podSummary(pod: Obj, now: Date): { ready: string; reason: string; restarts: string } {
  const spec = isObj(pod.spec) ? pod.spec : {};
  const status = isObj(pod.status) ? pod.status : {};
  let restarts = 0;
  let restartableInitRestarts = 0;
  let total = objs(spec.containers).length;
  let ready = 0;
  let lastRestart = 0;
  let lastRestartableInitRestart = 0;
  const phase = str(status.phase);
  let reason = str(status.reason) || phase;
  for (const c of objs(status.conditions)) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }
  const inits = new Map<string, Obj>();
  for (const c of objs(spec.initContainers)) {
    inits.set(str(c.name), c);
    if (isRestartableInit(c)) total++;
  }
  const finishedAt = (c: Obj): number => parseTime(dig(c, 'lastState', 'terminated', 'finishedAt')) ?? 0;
  let initializing = false;
  const initStatuses = objs(status.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i]!;
    restarts += int(c.restartCount);
    lastRestart = Math.max(lastRestart, finishedAt(c));
    const restartable = isRestartableInit(inits.get(str(c.name)));
    if (restartable) {
      restartableInitRestarts += int(c.restartCount);
      lastRestartableInitRestart = Math.max(lastRestartableInitRestart, finishedAt(c));
    }
    const terminated = objAt(c.state, 'terminated');
    const waiting = objAt(c.state, 'waiting');
    if (terminated && int(terminated.exitCode) === 0) continue;
    if (restartable && c.started === true) {
      if (c.ready === true) ready++;
      continue;
    }
    if (terminated) {
      if (!str(terminated.reason)) {
        reason =
          int(terminated.signal) !== 0
            ? `Init:Signal:${int(terminated.signal)}`
            : `Init:ExitCode:${int(terminated.exitCode)}`;
      } else reason = `Init:${str(terminated.reason)}`;
    } else if (waiting && str(waiting.reason) && waiting.reason !== 'PodInitializing') {
      reason = `Init:${str(waiting.reason)}`;
    } else {
      reason = `Init:${i}/${objs(spec.initContainers).length}`;
    }
    initializing = true;
    break;
  }
  if (!initializing || hasCondition(status, 'Initialized')) {
    restarts = restartableInitRestarts;
    lastRestart = lastRestartableInitRestart;
    let hasRunning = false;
    const statuses = objs(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!;
      restarts += int(c.restartCount);
      lastRestart = Math.max(lastRestart, finishedAt(c));
      const terminated = objAt(c.state, 'terminated');
      const waiting = objAt(c.state, 'waiting');
      if (waiting && str(waiting.reason)) reason = str(waiting.reason);
      else if (terminated && str(terminated.reason)) reason = str(terminated.reason);
      else if (terminated) {
        reason =
          int(terminated.signal) !== 0
            ? `Signal:${int(terminated.signal)}`
            : `ExitCode:${int(terminated.exitCode)}`;
      } else if (c.ready === true && objAt(c.state, 'running')) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = hasCondition(status, 'Ready') ? 'Running' : 'NotReady';
  }
  const deleting = str(dig(pod, 'metadata', 'deletionTimestamp')) !== '';
  if (deleting && status.reason === 'NodeLost') reason = 'Unknown';
  else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';
  let restartsStr = String(restarts);
  if (restarts !== 0 && lastRestart !== 0)
    restartsStr = `${restarts} (${humanDuration(now.getTime() - lastRestart)} ago)`;
  return { ready: `${ready}/${total}`, reason, restarts: restartsStr };
}
/** The pod's first IP (the v1 → internal conversion lets `podIP` win over `podIPs`). */
const podIP = (pod: Obj): string =>
  str(dig(pod, 'status', 'podIP')) || str(objs(dig(pod, 'status', 'podIPs'))[0]?.ip);
/**
 * `POST pods/<name>/binding` (Kubernetes' `BindingREST`): assigns a pod that has no node yet
 * to `binding.target.name`, merges the binding's annotations and marks it `PodScheduled`.
 * This is how schedulers bind; `spec.nodeName` is otherwise immutable.
 */
const binding: PostSubresource = {
  check(body: Obj, name: string): void {
    const bm = isObject(body.metadata) ? body.metadata : {};
    if (bm.name !== name) throw ApiError.badRequest('name in URL does not match name in Binding object');
    // ValidatePodBinding's errors go back as a plain aggregate: kube's 500 without a reason.
    const target = isObject(body.target) ? body.target : {};
    const errors: string[] = [];
    if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node')
      errors.push(
        `target.kind: Unsupported value: ${JSON.stringify(target.kind)}: supported values: "Node", "<empty>"`,
      );
    if (typeof target.name !== 'string' || target.name === '') errors.push('target.name: Required value');
    if (errors.length > 0)
      throw new ApiError({ code: 500, message: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` });
  },
  apply(pod: Obj, body: Obj, name: string): Obj {
    const bm = isObject(body.metadata) ? body.metadata : {};
    const node = (body.target as Obj).name as string;
    const conflict = (why: string) => ApiError.conflict({ group: '', resource: 'pods/binding' }, name, why);
    const pm = pod.metadata as Obj;
    const spec = isObject(pod.spec) ? pod.spec : {};
    if (pm.deletionTimestamp) throw conflict(`pod ${name} is being deleted, cannot be assigned to a host`);
    if (spec.nodeName)
      throw conflict(`pod ${name} is already assigned to node ${JSON.stringify(spec.nodeName)}`);
    const next = pod;
    (next.spec as Obj).nodeName = node;
    const annotations = isObject(bm.annotations) ? bm.annotations : {};
    if (Object.keys(annotations).length > 0) {
      const nm = meta(next);
      nm.annotations = { ...(isObject(nm.annotations) ? nm.annotations : {}), ...annotations };
    }
    if (!isObject(next.status)) next.status = {};
    const status = next.status as Obj;
    const conditions = (Array.isArray(status.conditions) ? status.conditions : []) as Obj[];
    const scheduled = conditions.find((c) => c.type === 'PodScheduled');
    if (!scheduled)
      conditions.push({
        type: 'PodScheduled',
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: timestamp(),
      });
    else if (scheduled.status !== 'True')
      Object.assign(scheduled, {
        status: 'True',
        lastTransitionTime: timestamp(),
        reason: undefined,
        message: undefined,
      });
    if (scheduled) for (const k of ['reason', 'message']) if (scheduled[k] === undefined) delete scheduled[k];
    status.conditions = conditions;
    return next;
  },
};

/**
 * What a Pod's storage does beyond the generic registry's (`pkg/registry/core/pod`): its status on
 * create, graceful deletion by its kubelet, and the `binding` subresource.
 */
const podStorage: StorageHooks = {
  // A new pod starts Pending; its defaults add the QoS class (qos.GetPodQOS, after requests
  // default to limits), so one computation of it serves create and update.
  statusOnCreate(obj) {
    obj.status = { phase: 'Pending' };
  },
  /**
   * The grace period of a pod's deletion (the pod strategy's `CheckGracefulDelete`): the
   * request's, else the pod's `terminationGracePeriodSeconds` (30); 0 for a pod not scheduled,
   * already terminated, or on a node no kubelet runs (the pod garbage collector would remove it
   * from a missing node at once).
   */
  gracePeriod(pod, requested, env) {
    const spec = isObject(pod.spec) ? pod.spec : {};
    const phase = isObject(pod.status) ? pod.status.phase : undefined;
    if (typeof spec.nodeName !== 'string' || !spec.nodeName) return 0;
    if (phase === 'Succeeded' || phase === 'Failed') return 0;
    if (!env.hasKubelet(spec.nodeName)) return 0;
    if (typeof requested === 'number') return Math.max(0, requested);
    return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
  },
  postSubresources: { binding },
};

const BAD_IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

/**
 * `ValidatePodStatusUpdate`'s checks of what a status writer sends: a new nominated node name,
 * and the pod's and host's IPs (one per family at most, no duplicates; a lone `podIP`/`hostIP`
 * counts as the first of its list, as the v1 conversion makes it).
 */
function validatePodStatusUpdate(pod: Obj, old: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const status = isObj(pod.status) ? pod.status : {};
  const nominated = str(status.nominatedNodeName);
  if (nominated && nominated !== str(dig(old, 'status', 'nominatedNodeName')))
    for (const m of isDNS1123Subdomain(nominated))
      out.push(invalid('status.nominatedNodeName', nominated, m));
  for (const [list, single] of [
    ['podIPs', 'podIP'],
    ['hostIPs', 'hostIP'],
  ] as const) {
    const ips = objs(status[list]).map((p) => str(p.ip));
    if (ips.length === 0 && str(status[single])) ips.push(str(status[single]));
    const parsed = ips.map((ip) => parseIPSloppy(ip));
    parsed.forEach((p, i) => {
      if (!p) out.push(invalid(`status.${list}[${i}]`, ips[i], BAD_IP));
    });
    if (ips.length > 1) {
      if (ips.length > 2 || !parsed[0] || !parsed[1] || parsed[0].v6 === parsed[1].v6)
        out.push(
          invalid(
            `status.${list}`,
            new GoValue(
              `[]core.${list === 'podIPs' ? 'PodIP' : 'HostIP'}{${ips.map((ip) => `core.${list === 'podIPs' ? 'PodIP' : 'HostIP'}{IP:${JSON.stringify(ip)}}`).join(', ')}}`,
            ),
            'may specify no more than one IP for each IP family',
          ),
        );
      ips.forEach((ip, i) => {
        if (ips.indexOf(ip) < i)
          out.push(
            duplicate(
              `status.${list}[${i}]`,
              new GoValue(`core.${list === 'podIPs' ? 'PodIP' : 'HostIP'}{IP:${JSON.stringify(ip)}}`),
            ),
          );
      });
    }
  }
  return out;
}

const pods: KindBehaviour = {
  defaults: defaultPod,
  validate(obj, old, strategy) {
    if (old && strategy === 'status') return validatePodStatusUpdate(obj, old);
    if (old && strategy === 'ephemeralcontainers')
      return [...validatePodSpec(obj.spec, 'spec'), ...validateEphemeralContainersUpdate(obj, old)];
    if (old) return validatePodUpdate(obj, old);
    const out = [...validatePodSpec(obj.spec, 'spec'), ...validateNoEphemeralOnCreate(obj)];
    // Templates tolerate padded images (some tools fill them in later); pods do not.
    for (const list of ['initContainers', 'containers']) {
      objs(dig(obj, 'spec', list)).forEach((c, i) => {
        const image = str(c.image);
        if (image.trim() !== image) {
          out.push(
            invalid(`spec.${list}[${i}].image`, image, 'must not have leading or trailing whitespace'),
          );
        }
      });
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'string', 'The aggregate status of the containers in this pod.'),
    col(
      'Restarts',
      'string',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    ageColumn(),
    col('IP', 'string', docs.podStatus.podIP, 1),
    col('Node', 'string', docs.podSpec.nodeName, 1),
    col('Nominated Node', 'string', docs.podStatus.nominatedNodeName, 1),
    col('Readiness Gates', 'string', docs.podSpec.readinessGates, 1),
  ],
  row(obj, now) {
    const { ready, reason, restarts } = podSummary(obj, now);
    const gates = objs(dig(obj, 'spec', 'readinessGates'));
    let readinessGates = '<none>';
    if (gates.length > 0) {
      const conditions = objs(dig(obj, 'status', 'conditions'));
      const trueCount = gates.filter(
        (g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True',
      ).length;
      readinessGates = `${trueCount}/${gates.length}`;
    }
    return [
      nameOf(obj),
      ready,
      reason,
      restarts,
      age(obj, now),
      podIP(obj) || '<none>',
      str(dig(obj, 'spec', 'nodeName')) || '<none>',
      str(dig(obj, 'status', 'nominatedNodeName')) || '<none>',
      readinessGates,
    ];
  },
  fieldSelectors: {
    'spec.nodeName': (o) => str(dig(o, 'spec', 'nodeName')),
    // What old v1 clients send for spec.nodeName; the conversion renames it.
    'spec.host': (o) => str(dig(o, 'spec', 'nodeName')),
    'spec.restartPolicy': (o) => str(dig(o, 'spec', 'restartPolicy')),
    'spec.schedulerName': (o) => str(dig(o, 'spec', 'schedulerName')),
    'spec.serviceAccountName': (o) => str(dig(o, 'spec', 'serviceAccountName')),
    'spec.hostNetwork': (o) => String(dig(o, 'spec', 'hostNetwork') === true),
    'status.phase': (o) => str(dig(o, 'status', 'phase')),
    'status.podIP': podIP,
    // Accepted by the conversion but not among the pod's selectable fields: always ''.
    'status.podIPs': () => '',
    'status.nominatedNodeName': (o) => str(dig(o, 'status', 'nominatedNodeName')),
  },
  storage: podStorage,
};

/** `Pod` (core/v1 `pods`): how the registry serves, validates and prints it. */
export const podKind: ResourceType = coreKind({
  statusStrategy: podStatusStrategy,
  behaviour: pods,
  resource: 'pods',
  kind: 'Pod',
  shortNames: ['po'],
  categories: ['all'],
  subresources: { status: true, eviction: true, ephemeralContainers: true },
  returnDeletedObject: true,
});
