/**
 * `Warning` response headers as k8s.io/apiserver's warning recorder writes them:
 * `299 - "text"`, with `"` and `\` escaped and every other character as is (UTF-8 on the wire).
 */

/** Past this many characters of warnings in a response, each warning is cut to {@link ITEM_RUNES}. */
const TOTAL_RUNES = 4 * 1024;
const ITEM_RUNES = 256;

/** Go's unicode.IsControl: C0, DEL and C1. Such texts are dropped (NewWarningHeader refuses them). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The header value of one warning, or undefined when the apiserver would drop it (empty, or
 * holding control characters). Node writes header values as Latin-1: the text's UTF-8 bytes are
 * given as one Latin-1 character each, so that any text goes out as UTF-8 and setting the
 * header can never throw.
 */
export function warningHeader(text: string): string | undefined {
  if (text === '' || CONTROL.test(text)) return undefined;
  // A lone surrogate is not valid UTF-8; Go's decoder would have made it U+FFFD.
  const quoted = `299 - "${text.replace(LONE_SURROGATE, '\ufffd').replace(/["\\]/g, '\\$&')}"`;
  return Buffer.from(quoted, 'utf8').toString('latin1');
}

/**
 * The `Warning` header values of a response's warnings, as the recorder adds them one by one:
 * deduplicated; once they pass {@link TOTAL_RUNES} characters, all are cut to {@link ITEM_RUNES}
 * and those after the limit are dropped.
 */
export function warningHeaders(texts: readonly string[]): string[] {
  const recorded = new Set<string>();
  const ordered: string[] = [];
  let out: string[] = [];
  let written = 0;
  let truncating = false;
  const cut = (text: string): [string, number] => {
    const runes = [...text];
    return truncating && runes.length > ITEM_RUNES
      ? [runes.slice(0, ITEM_RUNES).join(''), ITEM_RUNES]
      : [text, runes.length];
  };
  for (const text of texts) {
    if (text === '') continue;
    if (truncating && written >= TOTAL_RUNES) break;
    if (recorded.has(text)) continue;
    recorded.add(text);
    ordered.push(text);
    const [t, n] = cut(text);
    const header = warningHeader(t);
    if (header === undefined) continue;
    if (written + n <= TOTAL_RUNES || truncating) {
      written += n;
      out.push(header);
      continue;
    }
    truncating = true;
    written = 0;
    out = [];
    for (const w of ordered) {
      const [wt, wn] = cut(w);
      const h = warningHeader(wt);
      if (h === undefined) continue;
      written += wn;
      out.push(h);
    }
  }
  return out;
}
