/**
 * `Warning` response headers (RFC 7234 §5.5) as kube-apiserver sends them:
 * `299 - "deprecated field spec.x"`. Only code 299 carries API warnings, as in client-go.
 */

/** Extracts the texts of the 299 warnings of one or more `Warning` header values. */
export function parseWarningHeaders(values: string | readonly string[] | undefined): string[] {
  if (values === undefined) return [];
  const out: string[] = [];
  for (const value of typeof values === 'string' ? [values] : values) {
    let i = 0;
    while (i < value.length) {
      // warn-code SP warn-agent SP quoted-string [SP quoted-date]
      const m = /^\s*,?\s*(\d{3}) +(\S+) +"/.exec(value.slice(i));
      if (!m) break;
      i += m[0].length;
      let text = '';
      let closed = false;
      while (i < value.length) {
        const c = value[i]!;
        if (c === '\\' && i + 1 < value.length) {
          text += value[i + 1];
          i += 2;
          continue;
        }
        i++;
        if (c === '"') {
          closed = true;
          break;
        }
        text += c;
      }
      if (!closed) break;
      // Skip an optional quoted date.
      const date = /^ +"[^"]*"/.exec(value.slice(i));
      if (date) i += date[0].length;
      if (m[1] === '299') out.push(text);
    }
  }
  return out;
}
