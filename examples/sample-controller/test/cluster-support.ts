/**
 * config/default for the local control plane, which has no cert-manager: what cert-manager would
 * do is done here — the Secret it would issue for the webhook Service is made with a local CA —
 * and its Issuer and Certificate are left out, with the webhook configurations (these tests
 * exercise the operator's pods, not its webhooks; `kubeloop dev` and e2e.test.ts do). Printed as
 * kustomize prints (sequences not indented), which the tests' text edits expect.
 */
import { createCertificateAuthority, issueServingCertificate } from 'kubeloop/pki';
import { parseAllDocuments, stringify } from 'yaml';

const LEFT_OUT = new Set([
  'Issuer',
  'Certificate',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
]);

/** `rendered` (`kubectl kustomize config/default`) without cert-manager, with its Secret. */
export function withoutCertManager(rendered: string, namespace: string): string {
  const objects = parseAllDocuments(rendered)
    .map((d) => d.toJS() as { kind?: string } | null)
    .filter((o) => o && !LEFT_OUT.has(o.kind ?? ''));
  const ca = createCertificateAuthority('sample-webhook-ca');
  const service = `sample-controller-webhook-service.${namespace}.svc`;
  const serving = issueServingCertificate(ca, [service, `${service}.cluster.local`], service);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  objects.push({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'webhook-server-cert', namespace },
    type: 'kubernetes.io/tls',
    data: { 'ca.crt': b64(ca.cert), 'tls.crt': b64(serving.cert), 'tls.key': b64(serving.key) },
  } as { kind: string });
  return objects.map((o) => stringify(o, { lineWidth: 0, indentSeq: false })).join('---\n');
}
