import type { RequestInfo } from './request-info.js';

/** Which requests a fault applies to; every given field must match. */
export interface FaultMatch {
  verb?: string;
  resource?: string;
  group?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** A substring of, or a pattern for, the URL path. */
  path?: string | RegExp;
}

/** What happens to a matching request. */
export type FaultAction =
  /** Answer with this HTTP status and a `Status` body (e.g. 410, 429, 500, 503). */
  | { status: number; reason?: string; message?: string; retryAfterSeconds?: number }
  /** Hold the request this long, then serve it normally. */
  | { delayMs: number }
  /** Destroy the connection without an answer. */
  | { drop: true };

export interface FaultRule {
  match?: FaultMatch;
  action: FaultAction;
  /** How many requests it applies to before it expires (default: unlimited). */
  times?: number;
}

interface ActiveRule extends FaultRule {
  remaining: number;
}

/**
 * Fault injection for tests of clients against the real server: answer chosen requests with
 * errors, delay them, drop connections, or cut every open watch stream.
 *
 * @example
 * ```ts
 * const env = await startTestEnv();
 * env.faults.inject({ match: { verb: 'list', resource: 'configmaps' }, action: { status: 500 }, times: 2 });
 * env.faults.dropWatches();
 * ```
 */
export class Faults {
  private rules: ActiveRule[] = [];
  private readonly watches = new Set<{ info: RequestInfo; close: () => void }>();

  /** Adds a rule; returns a function that removes it. */
  inject(rule: FaultRule): () => void {
    const active: ActiveRule = { ...rule, remaining: rule.times ?? Number.POSITIVE_INFINITY };
    this.rules.push(active);
    return () => {
      this.rules = this.rules.filter((r) => r !== active);
    };
  }

  /** Removes every rule. */
  clear(): void {
    this.rules = [];
  }

  /** Ends every open watch stream matching `match` (all when omitted), as a dropped connection would. Returns how many. */
  dropWatches(match?: FaultMatch): number {
    let n = 0;
    for (const w of [...this.watches]) {
      if (!match || matches(match, w.info)) {
        w.close();
        n++;
      }
    }
    return n;
  }

  /** Number of open watch streams. */
  get openWatches(): number {
    return this.watches.size;
  }

  /** @internal The server registers each watch stream so that it can be dropped. */
  trackWatch(info: RequestInfo, close: () => void): () => void {
    const entry = { info, close };
    this.watches.add(entry);
    return () => this.watches.delete(entry);
  }

  /** @internal Whether any rule is left: without one, no request needs checking (nor its exemption). */
  get armed(): boolean {
    return this.rules.length > 0;
  }

  /** @internal The first rule matching this request, consumed once. */
  take(info: RequestInfo): FaultAction | undefined {
    for (const rule of this.rules) {
      if (rule.remaining <= 0) continue;
      if (rule.match && !matches(rule.match, info)) continue;
      rule.remaining--;
      if (rule.remaining <= 0) this.rules = this.rules.filter((r) => r !== rule);
      return rule.action;
    }
    return undefined;
  }
}

function matches(m: FaultMatch, info: RequestInfo): boolean {
  if (m.verb !== undefined && m.verb !== info.verb) return false;
  if (m.resource !== undefined && m.resource !== info.resource) return false;
  if (m.group !== undefined && m.group !== info.group) return false;
  if (m.namespace !== undefined && m.namespace !== info.namespace) return false;
  if (m.name !== undefined && m.name !== info.name) return false;
  if (m.subresource !== undefined && m.subresource !== info.subresource) return false;
  if (m.path !== undefined) {
    if (typeof m.path === 'string' ? !info.path.includes(m.path) : !m.path.test(info.path)) return false;
  }
  return true;
}
