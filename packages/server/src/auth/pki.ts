/**
 * The cluster's certificates: the CA, the API server's serving certificate, users' client
 * certificates and signed certificate requests. They come from `kubeloop/pki`, which the SDK's
 * webhook server shares.
 */
export {
  type CertificateUsage,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
  type KeyPair,
  readCertificateRequest,
  signCertificateRequest,
} from 'kubeloop/pki';
