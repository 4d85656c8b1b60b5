/**
 * Random (version 4) UUIDs, as `crypto.randomUUID()` makes them, for the ones every request
 * needs (each response's `Audit-Id`, each created object's `uid`).
 *
 * Why not `randomUUID()` itself: Node 20 builds each UUID by joining 20 pieces, one string per
 * join (about 550 bytes of young garbage for a 36-character string). Here the random bytes of
 * {@link BATCH} UUIDs are drawn at once, as `randomUUID()` draws its own, and spelled into one
 * ASCII buffer; each UUID is then a single string read out of it.
 */
import { randomFillSync } from 'node:crypto';

/** UUIDs drawn at a time (`randomUUID()` caches 128 too). */
const BATCH = 128;
const HEX = '0123456789abcdef';
const random = Buffer.alloc(BATCH * 16);
const text = Buffer.alloc(BATCH * 36);
let next = BATCH;

/** Draws the next batch: 16 random bytes per UUID, the version and variant bits set, in hex with dashes. */
function refill(): void {
  randomFillSync(random);
  let at = 0;
  for (let u = 0; u < BATCH; u++) {
    const from = u * 16;
    random[from + 6] = (random[from + 6]! & 0x0f) | 0x40;
    random[from + 8] = (random[from + 8]! & 0x3f) | 0x80;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[at++] = 0x2d; // '-'
      const b = random[from + i]!;
      text[at++] = HEX.charCodeAt(b >> 4);
      text[at++] = HEX.charCodeAt(b & 0x0f);
    }
  }
  next = 0;
}

/** A new random UUID (RFC 9562 version 4), lower-case, as `crypto.randomUUID()` returns it. */
export function randomUuid(): string {
  if (next === BATCH) refill();
  const at = next++ * 36;
  return text.toString('latin1', at, at + 36);
}
