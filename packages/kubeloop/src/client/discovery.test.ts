import { describe, expect, it } from 'vitest';
import { Discovery } from './discovery.js';

/** An APIResourceList of `widgets` (kind Widget) under `plural`, as the server would serve it. */
const list = (plural: string) => ({
  kind: 'APIResourceList',
  groupVersion: 'example.com/v1',
  resources: [{ name: plural, singularName: 'widget', namespaced: true, kind: 'Widget', verbs: ['get'] }],
});

const widget = { group: 'example.com', version: 'v1', kind: 'Widget' };

describe('Discovery.known', () => {
  it('knows a kind once its group/version is loaded, and forgets it when invalidated or fetched again', async () => {
    let plural = 'widgets';
    let fail = false;
    const d = new Discovery(async () => {
      if (fail) throw new Error('unreachable');
      return list(plural);
    });
    expect(d.known(widget)).toBeUndefined();
    expect((await d.resolve(widget)).plural).toBe('widgets');
    expect(d.known(widget)?.plural).toBe('widgets');
    expect(d.known({ ...widget, kind: 'Gadget' })).toBeUndefined();

    d.invalidate({ group: 'example.com', version: 'v1' });
    expect(d.known(widget)).toBeUndefined();
    plural = 'widgetz';
    expect((await d.resolve(widget)).plural).toBe('widgetz');
    expect(d.known(widget)?.plural).toBe('widgetz');

    // A refresh that fails leaves nothing known (resolve would ask again).
    fail = true;
    await expect(d.resources('example.com', 'v1', true)).rejects.toThrow('unreachable');
    expect(d.known(widget)).toBeUndefined();

    fail = false;
    await d.resources('example.com', 'v1');
    d.invalidate();
    expect(d.known(widget)).toBeUndefined();
  });
});
