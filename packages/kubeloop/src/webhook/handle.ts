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

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Answers the raw body of one AdmissionReview POST. */
export async function answerAdmission(
  webhook: AdmissionWebhook,
  body: Buffer,
  contentType: string | undefined,
  options: AnswerOptions,
): Promise<AdmissionReview> {
  if (body.length === 0) return review('', { uid: '', ...errored(400, 'request body is empty') });
  const type = (contentType ?? '').split(';')[0]?.trim();
  if (type !== 'application/json')
    return review('', {
      uid: '',
      ...errored(400, `contentType=${contentType ?? ''}, expected application/json`),
    });
  let parsed: AdmissionReview;
  try {
    parsed = JSON.parse(body.toString('utf8')) as AdmissionReview;
  } catch (err) {
    return review('', { uid: '', ...errored(400, messageOf(err)) });
  }
  const request = parsed?.request as AdmissionRequest | undefined;
  if (!request || typeof request !== 'object')
    return review(parsed?.apiVersion, { uid: '', ...errored(400, 'got an empty AdmissionRequest') });
  const uid = String(request.uid ?? '');
  // Made only when a handler asks for the signal: most never do, and an AbortController on
  // every review is a measurable share of a fast handler's cost.
  let abort: AbortController | undefined;
  let expired = false;
  const ctx: AdmissionContext = {
    request,
    uid,
    operation: request.operation,
    user: request.userInfo ?? {},
    dryRun: request.dryRun === true,
    namespace: request.namespace ?? '',
    name: request.name ?? '',
    get signal() {
      if (!abort) {
        abort = new AbortController();
        if (expired) abort.abort(new Error('context deadline exceeded'));
      }
      return abort.signal;
    },
    client: options.client,
    cache: options.cache,
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<Omit<AdmissionResponse, 'uid'>>((resolve) => {
    timer = setTimeout(() => {
      expired = true;
      abort?.abort(new Error('context deadline exceeded'));
      resolve(errored(500, 'context deadline exceeded'));
    }, options.timeoutMs);
  });
  let response: Omit<AdmissionResponse, 'uid'>;
  try {
    response = await Promise.race([
      (async () => webhook.handle(request, ctx))().catch((err: unknown) => {
        options.onPanic?.(err);
        return errored(500, `panic: ${messageOf(err)} [recovered]`);
      }),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
  // controller-runtime's Response.Complete: the uid, and a result code of 200 when none was set.
  const status = { ...(response.status ?? {}) };
  if (!status.code) status.code = 200;
  return review(parsed.apiVersion, { uid, ...response, status });
}
