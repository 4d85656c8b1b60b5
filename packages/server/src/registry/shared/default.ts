/** The apiserver's default table convertor, for kinds printers.go has no printer for. */

import { col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { docs } from '../shared/descriptions.js';
import { dig, parseTime, str } from '../shared/util.js';

/**
 * `rest.NewDefaultTableConvertor`: `Name` and `Created At` (RFC 3339 in UTC), which is what
 * `kubectl get` shows for Roles, ClusterRoles and CustomResourceDefinitions.
 */
export function createdAtBehaviour(): KindBehaviour {
  return {
    columns: [nameColumn(), col('Created At', 'date', docs.meta.creationTimestamp)],
    row(obj) {
      const t = parseTime(dig(obj, 'metadata', 'creationTimestamp'));
      return [str(dig(obj, 'metadata', 'name')), t === undefined ? '0001-01-01T00:00:00Z' : rfc3339(t)];
    },
  };
}

/** RFC 3339 with second precision in UTC, as Go's `time.RFC3339` prints a `metav1.Time`. */
function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
