/** The chain passes a write only to the plugins that act on it, in the chain's order. */
import { describe, expect, it } from 'vitest';
import type { ResourceType } from '../registry/types.js';
import { AdmissionChain, type AdmissionOperation, type AdmissionPlugin } from './chain.js';
import { actsOn, isCore } from './plugin-kinds.js';

const type = (group: string, resource: string) => ({ group, resource }) as ResourceType;
const pods = type('', 'pods');
const configmaps = type('', 'configmaps');

describe('AdmissionChain', () => {
  it('skips the plugins whose kinds leave a write out, decided per type and operation', async () => {
    const calls: string[] = [];
    const record =
      (name: string): AdmissionPlugin =>
      (op, t) => {
        calls.push(`${name} ${op} ${t.resource}`);
      };
    const chain = new AdmissionChain(
      [
        record('all'),
        actsOn((_op, t) => isCore(t, 'pods'), record('pods')),
        actsOn((op) => op === 'UPDATE', record('updates')),
      ],
      [record('last')],
    );
    const admit = async (op: AdmissionOperation, t: ResourceType) => {
      await chain.mutate(op, t, {}, undefined);
      await chain.validate(op, t, {}, undefined);
    };
    await admit('CREATE', configmaps);
    await admit('CREATE', pods);
    await admit('UPDATE', configmaps);
    await admit('CREATE', configmaps);
    chain.addValidating(actsOn((_op, t) => t.resource === 'configmaps', record('added')));
    await admit('CREATE', configmaps);
    await admit('CREATE', pods);
    expect(calls).toEqual([
      'all CREATE configmaps',
      'last CREATE configmaps',
      'all CREATE pods',
      'pods CREATE pods',
      'last CREATE pods',
      'all UPDATE configmaps',
      'updates UPDATE configmaps',
      'last UPDATE configmaps',
      'all CREATE configmaps',
      'last CREATE configmaps',
      'all CREATE configmaps',
      'added CREATE configmaps',
      'last CREATE configmaps',
      'all CREATE pods',
      'pods CREATE pods',
      'last CREATE pods',
    ]);
  });

  it('leaves a plugin called directly to its own checks', () => {
    let n = 0;
    const plugin = actsOn(
      () => false,
      () => {
        n++;
      },
    );
    plugin();
    expect(n).toBe(1);
    expect(plugin.handles('CREATE', pods)).toBe(false);
  });
});
