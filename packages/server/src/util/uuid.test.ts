import { describe, expect, it } from 'vitest';
import { randomUuid } from './uuid.js';

describe('randomUuid', () => {
  it('gives distinct version 4 UUIDs, lower-case, across several batches', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const id = randomUuid();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(1000);
  });
});
