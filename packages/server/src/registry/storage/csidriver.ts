/**
 * The registry entry of `CSIDriver` (storage.k8s.io/v1 `csidrivers`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { storageKind } from '../shared/define.js';
import {
  def,
  duplicate,
  ensureObj,
  FIELD_IMMUTABLE,
  GoValue,
  goQuote,
  invalid,
  isObj,
  notSupported,
  numOr,
  objs,
  semanticEqual,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, nameOf, STORAGE } from './shared.js';

// ---------------------------------------------------------------------------------------------
// CSIDrivers
const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
// kube lists these in this order, not sorted.
const LIFECYCLE_MODES = ['Persistent', 'Ephemeral'];
const MIN_TOKEN_SECONDS = 600;
/** `validateTokenRequests`: audiences once each, lifetimes from 10 minutes to 2^32 seconds. */
function validateTokenRequests(requests: unknown): StatusCause[] {
  const out: StatusCause[] = [];
  const audiences = new Set<string>();
  objs(requests).forEach((t, i) => {
    const path = `spec.tokenRequests[${i}]`;
    const audience = str(t.audience);
    if (audiences.has(audience)) {
      out.push(duplicate(`${path}.audience`, audience));
      return;
    }
    audiences.add(audience);
    const seconds = numOr(t.expirationSeconds);
    if (seconds === undefined) return;
    if (seconds < MIN_TOKEN_SECONDS)
      out.push(
        invalid(`${path}.expirationSeconds`, seconds, 'may not specify a duration less than 10 minutes'),
      );
    if (seconds > 2 ** 32)
      out.push(
        invalid(`${path}.expirationSeconds`, seconds, 'may not specify a duration larger than 2^32 seconds'),
      );
  });
  return out;
}

const csidrivers: KindBehaviour = {
  /** `SetDefaults_CSIDriver` (with SELinuxMountReadWriteOncePod, on by default in 1.32). */
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    def(spec, 'attachRequired', true);
    def(spec, 'podInfoOnMount', false);
    def(spec, 'storageCapacity', false);
    def(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
    if (strs(spec.volumeLifecycleModes).length === 0) spec.volumeLifecycleModes = ['Persistent'];
    def(spec, 'requiresRepublish', false);
    def(spec, 'seLinuxMount', false);
  },
  validate(obj, old) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const policy = spec.fsGroupPolicy;
    if (typeof policy === 'string' && !FS_GROUP_POLICIES.includes(policy))
      out.push(notSupported('spec.fsGroupPolicy', policy, FS_GROUP_POLICIES));
    out.push(...validateTokenRequests(spec.tokenRequests));
    for (const m of strs(spec.volumeLifecycleModes))
      if (!LIFECYCLE_MODES.includes(m))
        out.push(notSupported('spec.volumeLifecycleModes', m, LIFECYCLE_MODES));
    if (old) {
      // kube's path is spelled `attachedRequired`.
      const oldSpec = isObj(old.spec) ? old.spec : {};
      if (spec.attachRequired !== oldSpec.attachRequired)
        out.push(invalid('spec.attachedRequired', spec.attachRequired, FIELD_IMMUTABLE));
      if (!semanticEqual(spec.volumeLifecycleModes, oldSpec.volumeLifecycleModes)) {
        const modes = strs(spec.volumeLifecycleModes).map(goQuote).join(', ');
        out.push(
          invalid(
            'spec.volumeLifecycleModes',
            new GoValue(`[]storage.VolumeLifecycleMode{${modes}}`),
            FIELD_IMMUTABLE,
          ),
        );
      }
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('AttachRequired', 'boolean', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'attachRequired')),
    col('PodInfoOnMount', 'boolean', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'podInfoOnMount')),
    col('StorageCapacity', 'boolean', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'storageCapacity')),
    col('TokenRequests', 'string', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'tokenRequests')),
    col('RequiresRepublish', 'boolean', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'requiresRepublish')),
    col('Modes', 'string', fieldDoc(`${STORAGE}.CSIDriverSpec`, 'volumeLifecycleModes')),
    ageColumn(),
  ],
  row(obj, now) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const audiences = objs(spec.tokenRequests).map((t) => str(t.audience));
    const modes = strs(spec.volumeLifecycleModes);
    return [
      nameOf(obj),
      spec.attachRequired === true,
      spec.podInfoOnMount === true,
      spec.storageCapacity === true,
      audiences.length > 0 ? audiences.join(',') : '<unset>',
      spec.requiresRepublish === true,
      modes.length > 0 ? modes.join(',') : '<none>',
      ageOf(obj, now),
    ];
  },
};

/** `CSIDriver` (storage.k8s.io/v1 `csidrivers`): how the registry serves, validates and prints it. */
export const csiDriverKind: ResourceType = storageKind({
  behaviour: csidrivers,
  resource: 'csidrivers',
  kind: 'CSIDriver',
});
