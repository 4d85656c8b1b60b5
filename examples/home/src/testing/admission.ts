/**
 * Calls an admission webhook as the API server does — one AdmissionReview, through the same
 * code the webhook server runs — and gives back its answer with the patch applied.
 */
import type { KubeObject } from 'kubeloop/client';
import { type AdmissionWebhook, answerAdmission, applyJsonPatch, type Operation } from 'kubeloop/webhook';

/** A webhook's answer to one review. */
export interface Admission<T> {
  readonly allowed: boolean;
  /** The object as it would be stored (a defaulter's patch applied); undefined when refused. */
  readonly object: T | undefined;
  /** The refusal's message, as kubectl prints it. */
  readonly message: string;
  readonly warnings: readonly string[];
}

/** Sends `object` (and `oldObject` for an UPDATE) to `webhook` as an AdmissionReview. */
export async function admit<T extends KubeObject>(
  webhook: AdmissionWebhook,
  operation: Operation,
  object: T,
  oldObject?: T,
): Promise<Admission<T>> {
  const [group, version] = object.apiVersion?.includes('/')
    ? object.apiVersion.split('/')
    : ['', object.apiVersion];
  const request = {
    uid: 'test',
    kind: { group: group ?? '', version: version ?? '', kind: object.kind ?? '' },
    resource: { group: group ?? '', version: version ?? '', resource: webhook.target.plural },
    name: object.metadata?.name ?? '',
    namespace: object.metadata?.namespace ?? '',
    operation,
    userInfo: { username: 'test' },
    ...(operation === 'DELETE' ? { oldObject: object } : { object, ...(oldObject && { oldObject }) }),
  };
  const review = await answerAdmission(
    webhook,
    Buffer.from(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request })),
    'application/json',
    { timeoutMs: 10_000 },
  );
  const response = review.response;
  if (!response) throw new Error('the webhook answered no response');
  const patch = response.patch ? JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) : [];
  return {
    allowed: response.allowed,
    object: response.allowed ? applyJsonPatch(object, patch) : undefined,
    message: response.status?.message ?? '',
    warnings: response.warnings ?? [],
  };
}
