/**
 * events.k8s.io/v1 Events. The API server stores them as core events, so the printer and the
 * legacy validation work on the core view of the object.
 */
import type { StatusCause } from 'kubeloop/api';
import { type CoreEventView, eventColumns, eventRow, legacyValidateEvent } from '../core/event.js';
import type { KindBehaviour } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import {
  dig,
  immutable,
  int,
  invalid,
  isObj,
  type Obj,
  objAt,
  parseTime,
  required,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';

/** The core/v1 view of an events.k8s.io/v1 Event (the v1 ↔ internal conversion). */
export function eventsV1View(obj: Obj): CoreEventView {
  return {
    name: str(dig(obj, 'metadata', 'name')),
    namespace: str(dig(obj, 'metadata', 'namespace')),
    involvedObject: objAt(obj, 'regarding') ?? {},
    reason: str(obj.reason),
    message: str(obj.note),
    source: objAt(obj, 'deprecatedSource') ?? {},
    firstTimestamp: obj.deprecatedFirstTimestamp,
    lastTimestamp: obj.deprecatedLastTimestamp,
    count: int(obj.deprecatedCount),
    type: str(obj.type),
    eventTime: obj.eventTime,
    series: objAt(obj, 'series'),
    reportingController: str(obj.reportingController),
    reportingInstance: str(obj.reportingInstance),
    action: str(obj.action),
  };
}

/** Fields of the internal Event an update may not change, with the events.k8s.io/v1 field they come from. */
const IMMUTABLE: [internal: string, v1: string][] = [
  ['involvedObject', 'regarding'],
  ['reason', 'reason'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['type', 'type'],
  ['eventTime', 'eventTime'],
  ['action', 'action'],
  ['related', 'related'],
  ['reportingController', 'reportingController'],
  ['reportingInstance', 'reportingInstance'],
];

const events: KindBehaviour = {
  // Stored as core Events, with their strategy's policy: no dependents to collect.
  storage: { garbageCollectionPolicy: 'Unsupported' },
  defaults(obj) {
    // Go serializes these structs and zero timestamps even when empty.
    if (!isObj(obj.regarding)) obj.regarding = {};
    if (!isObj(obj.deprecatedSource)) obj.deprecatedSource = {};
    for (const k of ['deprecatedFirstTimestamp', 'deprecatedLastTimestamp'])
      if (obj[k] === undefined) obj[k] = null;
  },
  validate(obj, old) {
    const e = eventsV1View(obj);
    const out: StatusCause[] = legacyValidateEvent(e, 'reportingController');
    const series = e.series;
    if (series) {
      if (int(series.count) < 2) out.push(invalid('series.count', '', 'should be at least 2'));
      if (parseTime(series.lastObservedTime) === undefined) out.push(required('series.lastObservedTime'));
    }
    if (old) {
      for (const [internal, v1] of IMMUTABLE) out.push(...immutable(internal, obj[v1], old[v1]));
      return out;
    }
    if (parseTime(e.eventTime) === undefined) out.push(required('eventTime'));
    if (e.type !== 'Normal' && e.type !== 'Warning')
      out.push(invalid('type', '', `has invalid value: ${e.type}`));
    if (parseTime(e.firstTimestamp) !== undefined)
      out.push(invalid('deprecatedFirstTimestamp', '', 'needs to be unset'));
    if (parseTime(e.lastTimestamp) !== undefined)
      out.push(invalid('deprecatedLastTimestamp', '', 'needs to be unset'));
    if (e.count !== 0) out.push(invalid('deprecatedCount', '', 'needs to be unset'));
    if (str(e.source.component) || str(e.source.host))
      out.push(invalid('deprecatedSource', '', 'needs to be unset'));
    return out;
  },
  columns: eventColumns(),
  row: (obj, now) => eventRow(eventsV1View(obj), now),
  fieldSelectors: {
    'regarding.kind': (o) => str(dig(o, 'regarding', 'kind')),
    'regarding.namespace': (o) => str(dig(o, 'regarding', 'namespace')),
    'regarding.name': (o) => str(dig(o, 'regarding', 'name')),
    'regarding.uid': (o) => str(dig(o, 'regarding', 'uid')),
    'regarding.apiVersion': (o) => str(dig(o, 'regarding', 'apiVersion')),
    'regarding.resourceVersion': (o) => str(dig(o, 'regarding', 'resourceVersion')),
    'regarding.fieldPath': (o) => str(dig(o, 'regarding', 'fieldPath')),
    reason: (o) => str(o.reason),
    reportingController: (o) => str(o.reportingController),
    type: (o) => str(o.type),
  },
};

/** Keeps `value` unless it is Go's zero value of an `omitempty` field. */
const omitEmpty = (out: Obj, key: string, value: unknown): void => {
  if (value === undefined || value === null || value === '' || value === 0) return;
  out[key] = value;
};

/**
 * An events.k8s.io/v1 Event in its stored form, a core/v1 Event (kube-apiserver keeps both APIs
 * in one storage, so `kubectl get events` and `kubectl describe` see events written through
 * either): `regarding` → `involvedObject`, `note` → `message`, `deprecated*` → their core
 * names, `reportingController` → `reportingComponent`. Go's serialization of the core type
 * decides which empty fields appear.
 */
export function eventsV1ToCore(obj: Obj): Obj {
  const out: Obj = { apiVersion: 'v1', kind: 'Event', metadata: obj.metadata };
  out.involvedObject = isObj(obj.regarding) ? obj.regarding : {};
  omitEmpty(out, 'reason', obj.reason);
  omitEmpty(out, 'message', obj.note);
  out.source = isObj(obj.deprecatedSource) ? obj.deprecatedSource : {};
  out.firstTimestamp = obj.deprecatedFirstTimestamp ?? null;
  out.lastTimestamp = obj.deprecatedLastTimestamp ?? null;
  omitEmpty(out, 'count', obj.deprecatedCount);
  omitEmpty(out, 'type', obj.type);
  out.eventTime = obj.eventTime ?? null;
  omitEmpty(out, 'series', obj.series);
  omitEmpty(out, 'action', obj.action);
  omitEmpty(out, 'related', obj.related);
  out.reportingComponent = obj.reportingController ?? '';
  out.reportingInstance = obj.reportingInstance ?? '';
  return out;
}

/** A stored (core/v1) Event as events.k8s.io/v1 serves it; the inverse of {@link eventsV1ToCore}. */
export function coreToEventsV1(obj: Obj): Obj {
  const out: Obj = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: obj.metadata };
  out.eventTime = obj.eventTime ?? null;
  omitEmpty(out, 'series', obj.series);
  omitEmpty(out, 'reportingController', obj.reportingComponent);
  omitEmpty(out, 'reportingInstance', obj.reportingInstance);
  omitEmpty(out, 'action', obj.action);
  omitEmpty(out, 'reason', obj.reason);
  out.regarding = isObj(obj.involvedObject) ? obj.involvedObject : {};
  omitEmpty(out, 'related', obj.related);
  omitEmpty(out, 'note', obj.message);
  omitEmpty(out, 'type', obj.type);
  out.deprecatedSource = isObj(obj.source) ? obj.source : {};
  out.deprecatedFirstTimestamp = obj.firstTimestamp ?? null;
  out.deprecatedLastTimestamp = obj.lastTimestamp ?? null;
  omitEmpty(out, 'deprecatedCount', obj.count);
  return out;
}

/** `Event` (events.k8s.io/v1 `events`): how the registry serves, validates and prints it. */
export const eventsV1EventKind: ResourceType = defineKind({
  behaviour: events,
  group: 'events.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.events.v1',
  resource: 'events',
  kind: 'Event',
  shortNames: ['ev'],
  // One collection with core/v1 events, as in kube-apiserver.
  storedAs: { group: '', resource: 'events', toStored: eventsV1ToCore, fromStored: coreToEventsV1 },
});
