/**
 * The webhook server's defaults that the flags need too, in a module of their own: an operator
 * reads its webhook flags at start (`kubeloop/webhook/flags`) even when it serves no webhooks,
 * and then loads none of the server's modules (certificates, PKI, handlers: ~1 MB of heap).
 */

/** controller-runtime's default certificate directory. */
export const DEFAULT_CERT_DIR = `/tmp/k8s-webhook-server/serving-certs`;
