/**
 * One AdmissionReview in, one out — answered as controller-runtime's `admission.Webhook`
 * answers: a bad request as a 400 in the response (never a broken HTTP reply), a handler that
 * throws as `allowed: false` with code 500 and `panic: <message> [recovered]`, a handler that
 * does not finish in time as a 500 with Go's `context deadline exceeded`, and the request's
 * `uid` echoed in every answer.
 */
import type { Client } from '../client/client.js';
import type { CacheReader } from '../runtime/controller/types.js';
import { type AdmissionWebhook, errored } from './admission.js';
import type { AdmissionContext, AdmissionRequest, AdmissionResponse, AdmissionReview } from './types.js';

/** What {@link answerAdmission} runs handlers with. */
export interface AnswerOptions {
  readonly timeoutMs: number;
  readonly client?: Client | undefined;
  readonly cache?: CacheReader | undefined;
  /** Called when a handler threw (the `controller_runtime_webhook_panics_total` counter). */
  readonly onPanic?: (err: unknown) => void;
}

const review = (apiVersion: string, response: AdmissionResponse): AdmissionReview => ({
  apiVersion: (apiVersion || 'admission.k8s.io/v1') as 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response,
});

/** One review's deadline in {@link DeadlineQueue}. */
interface Deadline {
  readonly at: number;
  expire: (() => void) | undefined;
}

/**
 * The handlers' deadlines, in one queue under one timer: a `setTimeout` armed and cleared per
 * review measured as about a third of the server's CPU per review (the webhook-server bench),
 * while a review almost always answers long before its deadline. The timer is armed for the
 * earliest pending deadline and re-armed when it fires; answered reviews are skipped then.
 */
class DeadlineQueue {
  private queue: Deadline[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Number.POSITIVE_INFINITY;

  /** Calls `expire` in `ms` unless the returned deadline is cancelled first. */
  add(ms: number, expire: () => void): Deadline {
    const d: Deadline = { at: performance.now() + ms, expire };
    // Usually the latest deadline (one timeout per webhook): appended, else put in order.
    let i = this.queue.length;
    while (i > this.head && (this.queue[i - 1] as Deadline).at > d.at) i--;
    if (i === this.queue.length) this.queue.push(d);
    else this.queue.splice(i, 0, d);
    if (d.at < this.armedAt) this.arm(d.at);
    return d;
  }

  /** Forgets `d` (its closure is released now; the entry is dropped when the timer passes it). */
  cancel(d: Deadline): void {
    d.expire = undefined;
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = setTimeout(() => this.fire(), Math.max(1, Math.ceil(at - performance.now())));
    // The server's sockets keep the process alive while a review is in flight.
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    const q = this.queue;
    while (this.head < q.length) {
      const d = q[this.head] as Deadline;
      if (d.expire && d.at > now) break;
      this.head++;
      const expire = d.expire;
      d.expire = undefined;
      expire?.();
    }
    if (this.head === q.length) {
      this.queue = [];
      this.head = 0;
      return;
    }
    if (this.head > 1024) {
      this.queue = q.slice(this.head);
      this.head = 0;
    }
    this.arm((this.queue[this.head] as Deadline).at);
  }
}

const deadlines = new DeadlineQueue();

/** A review's context; a class (not a literal with a getter), as one is made per review. */
class Context implements AdmissionContext {
  readonly operation: AdmissionContext['operation'];
  readonly user: AdmissionContext['user'];
  readonly dryRun: boolean;
  readonly namespace: string;
  readonly name: string;
  readonly client: AdmissionContext['client'];
  readonly cache: AdmissionContext['cache'];
  // Made only when a handler asks for the signal: most never do, and an AbortController on
  // every review is a measurable share of a fast handler's cost.
  private abort: AbortController | undefined;
  private expired = false;

  constructor(
    readonly request: AdmissionRequest,
    readonly uid: string,
    options: AnswerOptions,
  ) {
    this.operation = request.operation;
    this.user = request.userInfo ?? {};
    this.dryRun = request.dryRun === true;
    this.namespace = request.namespace ?? '';
    this.name = request.name ?? '';
    this.client = options.client;
    this.cache = options.cache;
  }

  get signal(): AbortSignal {
    if (!this.abort) {
      this.abort = new AbortController();
      if (this.expired) this.abort.abort(new Error('context deadline exceeded'));
    }
    return this.abort.signal;
  }

  /** The review's time is up. */
  expire(): void {
    this.expired = true;
    this.abort?.abort(new Error('context deadline exceeded'));
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Answers the raw body of one AdmissionReview POST. */
export function answerAdmission(
  webhook: AdmissionWebhook,
  body: Buffer,
  contentType: string | undefined,
  options: AnswerOptions,
): Promise<AdmissionReview> {
  const now = (r: AdmissionReview) => Promise.resolve(r);
  if (body.length === 0) return now(review('', { uid: '', ...errored(400, 'request body is empty') }));
  const type = (contentType ?? '').split(';')[0]?.trim();
  if (type !== 'application/json')
    return now(
      review('', { uid: '', ...errored(400, `contentType=${contentType ?? ''}, expected application/json`) }),
    );
  let parsed: AdmissionReview;
  try {
    parsed = JSON.parse(body.toString('utf8')) as AdmissionReview;
  } catch (err) {
    return now(review('', { uid: '', ...errored(400, messageOf(err)) }));
  }
  const request = parsed?.request as AdmissionRequest | undefined;
  if (!request || typeof request !== 'object')
    return now(review(parsed?.apiVersion, { uid: '', ...errored(400, 'got an empty AdmissionRequest') }));
  const uid = String(request.uid ?? '');
  const ctx = new Context(request, uid, options);
  const apiVersion = parsed.apiVersion;
  // One promise per review, settled by whichever comes first, the handler or the deadline:
  // no Promise.race and no async wrappers, since this runs on every admission request.
  return new Promise<AdmissionReview>((resolve) => {
    let settled = false;
    const finish = (response: Omit<AdmissionResponse, 'uid'>) => {
      if (settled) return;
      settled = true;
      deadlines.cancel(deadline);
      // controller-runtime's Response.Complete: the uid, and a result code of 200 when none was set.
      const status = { ...(response.status ?? {}) };
      if (!status.code) status.code = 200;
      resolve(review(apiVersion, { uid, ...response, status }));
    };
    const panicked = (err: unknown) => {
      options.onPanic?.(err);
      finish(errored(500, `panic: ${messageOf(err)} [recovered]`));
    };
    const deadline = deadlines.add(options.timeoutMs, () => {
      ctx.expire();
      finish(errored(500, 'context deadline exceeded'));
    });
    let answer: Promise<Omit<AdmissionResponse, 'uid'>>;
    try {
      answer = webhook.handle(request, ctx);
    } catch (err) {
      panicked(err);
      return;
    }
    Promise.resolve(answer).then(finish, panicked);
  });
}
