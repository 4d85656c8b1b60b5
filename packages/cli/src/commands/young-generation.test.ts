import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const module = fileURLToPath(new URL('../../dist/commands/young-generation.js', import.meta.url));

/**
 * In a process of its own (the hold changes a V8 flag of the whole process): keeps `count`
 * objects alive, as a start does, and prints the young generation's size in MB before and after.
 */
const script = (hold: boolean) => `
  import v8 from 'node:v8';
  import { holdYoungGeneration } from ${JSON.stringify(module)};
  const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 2 ** 20;
  const before = young();
  let release;
  if (${hold}) release = holdYoungGeneration();
  const kept = [];
  for (let i = 0; i < 400_000; i++) kept.push({ i, name: 'object-' + i, labels: { app: 'x' + (i % 7) } });
  const held = young();
  let settle;
  release?.(new Promise((r) => { settle = r; }));
  settle?.();
  await new Promise((r) => setTimeout(r, 10));
  for (let i = 0; i < 400_000; i++) kept.push({ i, name: 'more-' + i });
  console.log(JSON.stringify({ before, held, after: young(), kept: kept.length }));
`;

async function run(hold: boolean): Promise<{ before: number; held: number; after: number }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script(hold)]);
  return JSON.parse(stdout);
}

describe('holdYoungGeneration', () => {
  it('keeps the young generation at its size while survivors pile up, and lets it grow once released', async () => {
    const [held, free] = await Promise.all([run(true), run(false)]);
    // Without the hold, V8 doubles the young generation as the survivors pile up (1 → 32 MB)…
    expect(free.held).toBeGreaterThanOrEqual(free.before * 8);
    // …held, it stays at its first size or the one after (V8 sets that on its own path),
    expect(held.held).toBeLessThanOrEqual(held.before * 2);
    // and grows again once released.
    expect(held.after).toBeGreaterThan(held.held);
  });
});
