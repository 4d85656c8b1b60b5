/**
 * config/default for the local control plane, which has no cert-manager: `standInForCertManager`
 * does its part (the serving Secret the manager's pod mounts, the CA injected), and the webhook
 * configurations are left out — these tests exercise the operator's pods, not its webhooks
 * (`kubeloop dev` and e2e.test.ts do). Printed as kustomize prints (sequences not indented),
 * which the tests' text edits expect.
 */
import { type Manifest, standInForCertManager } from 'kubeloop/manifests';
import { parseAllDocuments, stringify } from 'yaml';

const LEFT_OUT = new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);

/** `rendered` (`kubectl kustomize config/default`) for a cluster without cert-manager. */
export function withoutCertManager(rendered: string): string {
  const objects = parseAllDocuments(rendered)
    .map((d) => d.toJS() as Manifest | null)
    .filter((o): o is Manifest => !!o);
  return standInForCertManager(objects)
    .filter((o) => !LEFT_OUT.has(o.kind))
    .map((o) => stringify(o, { lineWidth: 0, indentSeq: false }))
    .join('---\n');
}
