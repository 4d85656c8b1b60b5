/** The bearer token of a request, read as k8s.io/apiserver's `bearertoken` authenticator reads it. */

/** The warning the apiserver adds when a space comes between `Bearer` and the token. */
export const TOKEN_WITH_SPACE_WARNING =
  'the provided Authorization header contains extra space before the bearer token, and is ignored';

/**
 * The token of an `Authorization` header: trimmed, split on single spaces into at most three
 * parts, the scheme `bearer` in any case, the token the second part. `Bearer  T` (two spaces) has
 * an empty second part: no token, and `spaceBeforeToken` is set (the apiserver warns about it).
 */
export function bearerToken(authorization: string | undefined): {
  token?: string;
  spaceBeforeToken?: boolean;
} {
  // What nearly every request sends, `Bearer <token>`: read without trimming, lower-casing and
  // slicing twice. The token's ends are printable ASCII other than a space, so nothing would be
  // trimmed, and it holds no space: the general reading below gives the same token.
  if (authorization !== undefined && authorization.length > 7 && authorization.startsWith('Bearer ')) {
    const first = authorization.charCodeAt(7);
    const last = authorization.charCodeAt(authorization.length - 1);
    if (first > 0x20 && first < 0x7f && last > 0x20 && last < 0x7f && authorization.indexOf(' ', 8) < 0)
      return { token: authorization.slice(7) };
  }
  // Go's strings.TrimSpace trims ASCII and Unicode white space; String#trim nearly the same.
  const auth = (authorization ?? '').trim();
  if (auth === '') return {};
  const first = auth.indexOf(' ');
  if (first < 0 || auth.slice(0, first).toLowerCase() !== 'bearer') return {};
  const second = auth.indexOf(' ', first + 1);
  const token = second < 0 ? auth.slice(first + 1) : auth.slice(first + 1, second);
  if (token === '') return second >= 0 ? { spaceBeforeToken: true } : {};
  return { token };
}
