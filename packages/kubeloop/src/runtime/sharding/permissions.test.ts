import { describe, expect, it } from 'vitest';
import { ConfigMap } from '../../client/builtin-kinds.js';
import { derivePolicyRules } from '../../manifests/rbac.js';
import { controller } from '../controller/builder.js';
import { Manager } from '../manager/manager.js';
import { defaultShardId, validateShardId } from './labels.js';

describe('the RBAC of a sharded manager', () => {
  const def = controller(ConfigMap).reconcile(() => undefined);

  it('grants the shard Leases (list, watch, delete beyond leader election) and patch of the primary kind', () => {
    const m = new Manager({ sharding: { name: 'cms' }, handleSignals: false }).add(def);
    const rules = derivePolicyRules(m.permissions);
    const leases = rules.leaderElection.find((r) => r.resources?.includes('leases'));
    expect(leases?.verbs).toEqual(['get', 'list', 'watch', 'create', 'update', 'delete']);
    const cms = rules.cluster.find((r) => r.resources?.includes('configmaps'));
    expect(cms?.verbs).toContain('patch');
  });

  it('grants no more than leader election without sharding', () => {
    const m = new Manager({ leaderElection: { id: 'cms' }, handleSignals: false }).add(def);
    const leases = derivePolicyRules(m.permissions).leaderElection.find((r) =>
      r.resources?.includes('leases'),
    );
    expect(leases?.verbs).toEqual(['get', 'create', 'update']);
  });

  it('refuses sharding together with leader election', () => {
    expect(() => new Manager({ sharding: { name: 'x' }, leaderElection: { id: 'x' } })).toThrow(/sharding/);
  });

  it('takes only shard ids that are label values, and makes such ids by default', () => {
    expect(() => validateShardId('Not_Valid')).toThrow(RangeError);
    expect(() => validateShardId(defaultShardId())).not.toThrow();
  });
});
