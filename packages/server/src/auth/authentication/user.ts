/** An authenticated caller, as kube-apiserver's `user.Info`. */
export interface UserInfo {
  username: string;
  groups: string[];
  /** Set for service accounts: their object's uid. */
  uid?: string;
  /** Extra attributes (a bound token's pod and credential id). */
  extra?: Record<string, string[]>;
}
