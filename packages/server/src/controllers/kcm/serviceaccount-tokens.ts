/**
 * The tokens controller of kube-controller-manager (`pkg/controller/serviceaccount/tokens_controller.go`):
 * a Secret of type `kubernetes.io/service-account-token` that names a ServiceAccount in its
 * `kubernetes.io/service-account.name` annotation gets a long-lived token of that account
 * (`token`), the cluster CA (`ca.crt`), its namespace (`namespace`) and the account's uid
 * annotation. A Secret whose ServiceAccount does not exist, or no longer has the uid the Secret
 * recorded (deleted, or deleted and recreated), is deleted, so its token stops authenticating
 * with it (the API server also refuses a token whose Secret or account is gone).
 */
import { isConflict, isNotFound, type Secret, Secret as SecretKind, ServiceAccount } from 'kubeloop/client';
import { type ControllerDefinition, controller } from 'kubeloop/runtime';

/** Issues the legacy token of a Secret for a ServiceAccount; the server's signer, handed in by the control plane. */
export type IssueLegacyTokenFn = (
  serviceAccount: { namespace: string; name: string; uid: string },
  secretName: string,
) => Promise<string>;

const TOKEN_TYPE = 'kubernetes.io/service-account-token';
const NAME_KEY = 'kubernetes.io/service-account.name';
const UID_KEY = 'kubernetes.io/service-account.uid';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const isTokenSecret = (s: Secret): boolean => s.type === TOKEN_TYPE;

/** The tokens controller (`serviceaccount-token`), signing with `issue` and publishing `rootCA`. */
export function serviceAccountTokensController(
  issue: IssueLegacyTokenFn,
  rootCA: string,
): ControllerDefinition<Secret> {
  return (
    controller(SecretKind)
      .named('serviceaccount-token')
      .withPredicates({
        create: isTokenSecret,
        update: (_, s) => isTokenSecret(s),
        delete: () => false,
      })
      // A ServiceAccount that goes (or comes back with another uid) takes its tokens with it.
      .watches(ServiceAccount, (sa, cache) => {
        const ns = sa.metadata?.namespace ?? '';
        return cache
          .list(SecretKind, { namespace: ns })
          .filter((s) => isTokenSecret(s) && s.metadata?.annotations?.[NAME_KEY] === sa.metadata?.name)
          .map((s) => ({ namespace: ns, name: s.metadata?.name ?? '' }));
      })
      .reconcile(async (secret, { client }) => {
        if (!isTokenSecret(secret) || secret.metadata?.deletionTimestamp) return;
        const ns = secret.metadata?.namespace ?? '';
        const name = secret.metadata?.name ?? '';
        const annotations = secret.metadata?.annotations ?? {};
        const saName = annotations[NAME_KEY] ?? '';
        const saUid = annotations[UID_KEY] ?? '';
        // Asked of the server, not the cache: a ServiceAccount created just before its Secret
        // may not be in the cache yet, and the Secret must not be deleted for that.
        let sa: ServiceAccount | undefined;
        try {
          sa = await client.api(ServiceAccount, ns).get(saName);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        if (!sa || (saUid !== '' && sa.metadata?.uid !== saUid)) {
          try {
            await client
              .api(SecretKind, ns)
              .delete(name, { preconditions: { uid: secret.metadata?.uid ?? '' } });
          } catch (err) {
            if (!isNotFound(err) && !isConflict(err)) throw err;
          }
          return;
        }
        const data = secret.data ?? {};
        const needsCA = data['ca.crt'] !== b64(rootCA);
        const needsNamespace = data.namespace !== b64(ns);
        const needsToken = !data.token;
        if (!needsCA && !needsNamespace && !needsToken && saUid !== '') return;
        const uid = sa.metadata?.uid ?? '';
        const token = needsToken ? await issue({ namespace: ns, name: saName, uid }, name) : undefined;
        await client.api(SecretKind, ns).update({
          ...secret,
          metadata: {
            ...secret.metadata,
            annotations: { ...annotations, [NAME_KEY]: saName, [UID_KEY]: uid },
          },
          data: {
            ...data,
            'ca.crt': b64(rootCA),
            namespace: b64(ns),
            ...(token !== undefined && { token: b64(token) }),
          },
        });
      })
  );
}
