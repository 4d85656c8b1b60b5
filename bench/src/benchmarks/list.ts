import { median } from '../lib/stats.js';
import type { Target } from '../lib/targets.js';

/** A full list and a paginated one of the same collection. */
export interface ListResult {
  items: number;
  full: {
    /** Median request time (send to last byte), excluding decoding. */
    medianMs: number;
    /** Median time to the response headers (for kubeloop: the server has the list ready). */
    medianHeadersMs: number;
    /** Median client-side decoding time (JSON.parse, plus base64 for etcd). */
    medianParseMs: number;
    bytes: number;
    runsMs: number[];
  };
  paged: {
    limit: number;
    pages: number;
    /** Median time to read every page, one after the other, excluding decoding. */
    medianMs: number;
    runsMs: number[];
  };
}

/**
 * Lists `namespace` whole `runs` times (after `warmup` untimed lists), then page by page with
 * `limit` `pagedRuns` times. Throws if a list does not return `expected` items.
 */
export async function runList(
  target: Target,
  namespace: string,
  expected: number,
  opts: { runs: number; pagedRuns: number; limit: number; warmup: number },
): Promise<ListResult> {
  for (let i = 0; i < opts.warmup; i++) await target.list(namespace, 0, undefined);
  const runsMs: number[] = [];
  const headersMs: number[] = [];
  const parseMs: number[] = [];
  let bytes = 0;
  for (let i = 0; i < opts.runs; i++) {
    const page = await target.list(namespace, 0, undefined);
    if (page.count !== expected) throw new Error(`list returned ${page.count} items, expected ${expected}`);
    runsMs.push(page.res.totalMs);
    headersMs.push(page.res.headersMs);
    parseMs.push(page.parseMs);
    bytes = page.res.body.length;
  }
  const pagedMs: number[] = [];
  let pages = 0;
  for (let i = 0; i < opts.pagedRuns; i++) {
    let next: string | undefined;
    let count = 0;
    let ms = 0;
    pages = 0;
    do {
      const page = await target.list(namespace, opts.limit, next);
      ms += page.res.totalMs;
      count += page.count;
      pages++;
      next = page.next;
    } while (next);
    if (count !== expected) throw new Error(`paginated list returned ${count} items, expected ${expected}`);
    pagedMs.push(ms);
  }
  return {
    items: expected,
    full: {
      medianMs: median(runsMs),
      medianHeadersMs: median(headersMs),
      medianParseMs: median(parseMs),
      bytes,
      runsMs,
    },
    paged: { limit: opts.limit, pages, medianMs: median(pagedMs), runsMs: pagedMs },
  };
}
