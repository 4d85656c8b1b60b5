/**
 * The labels of sharding (after kubernetes-controller-sharding's
 * `shard.alpha.sharding.timebertt.dev/<ring>` and `drain.alpha.sharding.timebertt.dev/<ring>`):
 * the shard an object is assigned to, the request to its owner to hand it over, and the ring a
 * shard's Lease belongs to. Per controller, so that two sharded controllers of one kind split it
 * independently.
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** The prefix of every sharding label. */
export const SHARDING_PREFIX = 'sharding.kubeloop.dev';

/** On a shard's Lease: the ring (the `sharding.name` of the manager) it is a member of. */
export const RING_LABEL = `${SHARDING_PREFIX}/ring`;

/** On an object of a sharded controller's primary kind: the shard that reconciles it. */
export const shardLabel = (controller: string): string => `${SHARDING_PREFIX}/shard-${controller}`;

/**
 * On an object that must move: its owner is to stop reconciling it and acknowledge by removing
 * this label and the shard label; only then does the sharder assign the new shard.
 */
export const drainLabel = (controller: string): string => `${SHARDING_PREFIX}/drain-${controller}`;

/**
 * On a shard's Lease: the sharded controllers of the replica, as JSON
 * (`[{ controller, group, version, kind, namespace, labelSelector? }]`), so that tools
 * (`kubeloop shards`) know which kinds and labels to count without the operator's code.
 */
export const CONTROLLERS_ANNOTATION = `${SHARDING_PREFIX}/controllers`;

/** A sharded controller as its shard Lease's {@link CONTROLLERS_ANNOTATION} lists it. */
export interface ShardedControllerInfo {
  controller: string;
  group: string;
  version: string;
  kind: string;
  /** Namespace the controller watches (`''`: all). */
  namespace: string;
  /** The controller's own selector of its primary objects, as a string. */
  labelSelector?: string;
}

/** The name of the Lease a shard holds. */
export const shardLeaseName = (ring: string, shard: string): string => `${ring}-shard-${shard}`;

/** The name of the Lease of the sharder's leader election. */
export const sharderLeaseName = (ring: string): string => `${ring}-sharder`;

/**
 * A shard id that is a valid label value and Lease name part: the host name (a pod's name)
 * shortened, plus a random suffix so that a restarted process is a new member.
 */
export function defaultShardId(): string {
  const host = hostname()
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 40)
    .replace(/^-+|-+$/g, '');
  return `${host || 'shard'}-${randomUUID().slice(0, 8)}`;
}

/** Checks that a shard id can be a label value and part of a Lease name. */
export function validateShardId(id: string): void {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(id)) {
    throw new RangeError(`shard id ${JSON.stringify(id)}: lowercase alphanumerics and '-', at most 63`);
  }
}
