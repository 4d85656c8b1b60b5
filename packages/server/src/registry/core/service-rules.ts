/**
 * Service rules beyond the basic shape (`pkg/apis/core/validation` `ValidateService`, and the
 * strategy's `dropTypeDependentFields`): external IPs, session affinity timeouts, load balancer
 * source ranges, the external traffic policy of services that are not reachable from outside,
 * and what a change of type clears.
 */
import type { StatusCause } from 'kubeloop/api';
import { parseCidrSloppy } from '../../util/cidr.js';
import { validateIP, validateNonSpecialIP } from '../shared/ip-validation.js';
import { dig, forbidden, invalid, isObj, numOr, type Obj, objs, str, strs } from '../shared/util.js';

const MAX_AFFINITY_SECONDS = 86400;

/** The annotation older clients set instead of `spec.loadBalancerSourceRanges`. */
const SOURCE_RANGES_ANNOTATION = 'service.beta.kubernetes.io/load-balancer-source-ranges';

/** Whether a Service is reachable from outside the cluster (`apiservice.ExternallyAccessible`). */
export function externallyAccessible(spec: Obj): boolean {
  const type = str(spec.type);
  return (
    type === 'LoadBalancer' ||
    type === 'NodePort' ||
    (type === 'ClusterIP' && strs(spec.externalIPs).length > 0)
  );
}

/** The rules of `ValidateService` after the ports, selector, affinity and type. */
export function validateServiceRules(obj: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const out: StatusCause[] = [];
  if (str(spec.sessionAffinity) === 'ClientIP') {
    const timeout = numOr(dig(spec, 'sessionAffinityConfig', 'clientIP', 'timeoutSeconds'));
    if (timeout !== undefined && (timeout <= 0 || timeout > MAX_AFFINITY_SECONDS))
      out.push(
        invalid(
          'spec.sessionAffinityConfig.clientIP.timeoutSeconds',
          timeout,
          `must be greater than 0 and less than ${MAX_AFFINITY_SECONDS}`,
        ),
      );
  }
  strs(spec.externalIPs).forEach((ip, i) => {
    const path = `spec.externalIPs[${i}]`;
    const bad = validateIP(ip, path);
    out.push(...(bad.length > 0 ? bad : validateNonSpecialIP(ip, path)));
  });
  const ranges = strs(spec.loadBalancerSourceRanges);
  const annotation = dig(obj, 'metadata', 'annotations', SOURCE_RANGES_ANNOTATION);
  if (ranges.length > 0 || typeof annotation === 'string') {
    const [path, value, list] =
      ranges.length > 0
        ? ['spec.LoadBalancerSourceRanges', `[${ranges.join(' ')}]`, ranges]
        : [
            `metadata.annotations[${SOURCE_RANGES_ANNOTATION}]`,
            annotation as string,
            (annotation as string).split(','),
          ];
    if (str(spec.type) !== 'LoadBalancer')
      out.push(forbidden(path, "may only be used when `type` is 'LoadBalancer'"));
    if (list.some((r) => !parseCidrSloppy(r.trim())))
      out.push(
        invalid(path, value, 'must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 '),
      );
  }
  const etp = str(spec.externalTrafficPolicy);
  if (!externallyAccessible(spec) && etp)
    out.push(
      invalid('spec.externalTrafficPolicy', etp, 'may only be set for externally-accessible services'),
    );
  return out;
}

const needsClusterIP = (spec: Obj) => str(spec.type) !== 'ExternalName';
const needsNodePort = (spec: Obj) => ['NodePort', 'LoadBalancer'].includes(str(spec.type));
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The strategy's `dropTypeDependentFields`: on an update that changes the type, the fields the
 * new type has no use for are cleared, unless the request itself changed them (the allocated
 * cluster IPs and node ports are then released).
 */
export function dropTypeDependentFields(spec: Obj, oldSpec: Obj): void {
  if (needsClusterIP(oldSpec) && !needsClusterIP(spec)) {
    if (same(spec.clusterIP, oldSpec.clusterIP) && same(spec.clusterIPs, oldSpec.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (same(spec.ipFamilies, oldSpec.ipFamilies)) delete spec.ipFamilies;
    if (same(spec.ipFamilyPolicy, oldSpec.ipFamilyPolicy)) delete spec.ipFamilyPolicy;
  }
  if (needsNodePort(oldSpec) && !needsNodePort(spec)) {
    const ports = objs(spec.ports);
    const oldPorts = objs(oldSpec.ports);
    if (ports.length === oldPorts.length && ports.every((p, i) => same(p.nodePort, oldPorts[i]!.nodePort)))
      for (const p of ports) delete p.nodePort;
  }
  const lb = str(spec.type) === 'LoadBalancer';
  if (
    !(lb && str(spec.externalTrafficPolicy) === 'Local') &&
    same(spec.healthCheckNodePort, oldSpec.healthCheckNodePort)
  )
    delete spec.healthCheckNodePort;
  if (!lb && same(spec.allocateLoadBalancerNodePorts, oldSpec.allocateLoadBalancerNodePorts))
    delete spec.allocateLoadBalancerNodePorts;
  if (!lb && same(spec.loadBalancerClass, oldSpec.loadBalancerClass)) delete spec.loadBalancerClass;
  if (!externallyAccessible(spec) && same(spec.externalTrafficPolicy, oldSpec.externalTrafficPolicy))
    delete spec.externalTrafficPolicy;
}
