/**
 * The IP address checks of core and discovery validation (`validation.IsValidIP`,
 * `IsValidIPv4Address`, `IsValidIPv6Address`, `ValidateNonSpecialIP`), worded as kube words them.
 */
import type { StatusCause } from 'kubeloop/api';
import { type Cidr, cidrContains, parseCidrSloppy, parseIPSloppy } from '../../util/cidr.js';
import { invalid } from './util.js';

/** `IsValidIP`'s message: an address of either family, sloppily parsed. */
export const INVALID_IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

/** `IsValidIP`: [] for an address, else kube's cause. */
export function validateIP(raw: string, path: string): StatusCause[] {
  return parseIPSloppy(raw) ? [] : [invalid(path, raw, INVALID_IP)];
}

/** `IsValidIPv4Address` / `IsValidIPv6Address`: an address of that family. */
export function validateIPOfFamily(raw: string, path: string, v6: boolean): StatusCause[] {
  const ip = parseIPSloppy(raw);
  return ip && ip.v6 === v6 ? [] : [invalid(path, raw, `must be a valid IPv${v6 ? 6 : 4} address`)];
}

const SPECIAL: [ranges: string[], what: string][] = [
  [['127.0.0.0/8', '::1/128'], 'may not be in the loopback range (127.0.0.0/8, ::1/128)'],
  [['169.254.0.0/16', 'fe80::/10'], 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'],
  [['224.0.0.0/24', 'ff02::/16'], 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'],
];

/**
 * `ValidateNonSpecialIP`: an address that is not unspecified, loopback, link-local or link-local
 * multicast (one that does not parse is "must be a valid IP address").
 *
 * `endpoint`: the address of an Endpoints or EndpointSlice entry, where the local plane takes
 * loopback addresses on purpose: they are how a Service reaches a process on this machine (a
 * webhook server, a process-backed pod), which a cluster's nodes do by their pod network.
 */
export function validateNonSpecialIP(raw: string, path: string, endpoint = false): StatusCause[] {
  const ip = parseIPSloppy(raw);
  if (!ip) return [invalid(path, raw, 'must be a valid IP address')];
  if (ip.ip === 0n) return [invalid(path, raw, 'may not be unspecified (0.0.0.0)')];
  for (const [ranges, what] of endpoint ? SPECIAL.slice(1) : SPECIAL)
    if (ranges.some((r) => cidrContains(parseCidrSloppy(r) as Cidr, ip))) return [invalid(path, raw, what)];
  return [];
}
