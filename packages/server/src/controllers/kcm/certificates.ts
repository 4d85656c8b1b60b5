/**
 * The CSR signing controller of kube-controller-manager (`pkg/controller/certificates/signer`):
 * an approved CertificateSigningRequest for `kubernetes.io/kube-apiserver-client` or
 * `kubernetes.io/kube-apiserver-client-kubelet` gets a certificate signed by the cluster CA in
 * `status.certificate`, or a `Failed` condition when the request breaks its signer's rules.
 * `kubernetes.io/legacy-unknown` and other signers are left alone, as in 1.32.
 */
import { CertificateSigningRequest } from 'kubeloop/client';
import { type ControllerDefinition, controller } from 'kubeloop/runtime';
import { updateStatus } from '../status-write.js';

/** Signs a PEM request for `usages` until `notAfter`; the cluster CA's, handed in by the control plane. */
export type SignFn = (requestPem: string, usages: readonly string[], notAfter: Date) => string;

const CLIENT = 'kubernetes.io/kube-apiserver-client';
const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
/** kube-controller-manager's `--cluster-signing-duration` default. */
const MAX_TTL_SECONDS = 365 * 24 * 3600;

const condition = (csr: CertificateSigningRequest, type: string) =>
  (csr.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** `validAPIServerClientUsages`: client auth, optionally digital signature and key encipherment. */
function usageError(usages: readonly string[]): string | undefined {
  for (const u of usages)
    if (u !== 'client auth' && u !== 'digital signature' && u !== 'key encipherment')
      return `invalid usage for client certificate: ${u}`;
  if (!usages.includes('client auth')) return 'missing required usage for client certificate: client auth';
  return undefined;
}

/** The subject of a PEM request, read enough to check the kubelet signer's naming rule. */
function subjectNames(requestPem: string): { cn: string[]; o: string[] } {
  const text = Buffer.from(requestPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const out = { cn: [] as string[], o: [] as string[] };
  // An AttributeTypeAndValue is SEQUENCE { OID 2.5.4.3 (CN) or 2.5.4.10 (O), string }.
  for (const [oid, key] of [
    [Buffer.from([0x06, 0x03, 0x55, 0x04, 0x03]), 'cn'],
    [Buffer.from([0x06, 0x03, 0x55, 0x04, 0x0a]), 'o'],
  ] as const) {
    for (let at = text.indexOf(oid); at >= 0; at = text.indexOf(oid, at + 1)) {
      const v = at + oid.length;
      const len = text[v + 1] ?? 0;
      out[key].push(text.subarray(v + 2, v + 2 + len).toString('utf8'));
    }
  }
  return out;
}

/** The CSR signing controller (`csrsigning`). */
export function csrSigningController(sign: SignFn): ControllerDefinition<CertificateSigningRequest> {
  return controller(CertificateSigningRequest)
    .named('csrsigning')
    .reconcile(async (csr, { client }) => {
      const signer = csr.spec?.signerName;
      if (signer !== CLIENT && signer !== KUBELET_CLIENT) return;
      if (!condition(csr, 'Approved') || condition(csr, 'Denied') || condition(csr, 'Failed')) return;
      if (csr.status?.certificate) return;
      const pem = Buffer.from(csr.spec?.request ?? '', 'base64').toString('utf8');
      const usages = csr.spec?.usages ?? [];
      let failure = usageError(usages);
      if (!failure && signer === KUBELET_CLIENT) {
        // `ValidateKubeletClientCSR`: a node's identity and nothing else.
        const { cn, o } = subjectNames(pem);
        if (o.length !== 1 || o[0] !== 'system:nodes') failure = 'subject organization is not system:nodes';
        else if (cn.length !== 1 || !cn[0]?.startsWith('system:node:'))
          failure = 'subject common name does not begin with system:node:';
      }
      let certificate: string | undefined;
      if (!failure) {
        const ttl = Math.min(csr.spec?.expirationSeconds ?? MAX_TTL_SECONDS, MAX_TTL_SECONDS);
        try {
          certificate = sign(pem, usages, new Date(Date.now() + ttl * 1000));
        } catch (err) {
          failure = `unable to parse csr: ${err instanceof Error ? err.message : String(err)}`;
        }
      }
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const status = certificate
        ? { conditions: csr.status?.conditions, certificate: Buffer.from(certificate).toString('base64') }
        : {
            conditions: [
              ...(csr.status?.conditions ?? []),
              {
                type: 'Failed',
                status: 'True',
                reason: 'SignerValidationFailure',
                message: failure ?? '',
                lastUpdateTime: now,
                lastTransitionTime: now,
              },
            ],
          };
      return updateStatus(client, CertificateSigningRequest, csr, status);
    });
}
