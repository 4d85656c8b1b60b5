/**
 * A strict reader of the small, regular subset of YAML that machines write kubeconfigs in
 * (kubectl's `config set-*` and `view --raw`, our server's admin kubeconfig, kind, cloud CLIs):
 * block mappings and sequences by indentation, plain keys, one-line scalars. It exists so that a
 * process reading such a file at start need not load and run the full YAML library (see
 * kubeconfig.ts for the figures).
 *
 * Its one promise: for any text, it either returns exactly what `yaml`'s `parse` returns (YAML
 * 1.2 core schema, unique keys: the same values, null where yaml gives null, the same key order)
 * or declines with {@link DECLINE}, and then the caller parses with `yaml` as before, which gives
 * the same result or the same error as ever. So anything it is not sure of — a tab, a `#` after
 * content, an anchor, a tag, a flow collection with content, an escape, a scalar over two lines,
 * a duplicate key, a number it does not read exactly — is declined, never guessed.
 */

/** What {@link parseSimpleYaml} returns for a text outside its subset. */
export const DECLINE: unique symbol = Symbol('decline');

type Value = string | number | boolean | null | Value[] | { [key: string]: Value };

interface Line {
  indent: number;
  /** The line without its indentation; never empty, never with trailing spaces. */
  text: string;
}

/** Thrown inside the parser to leave it from any depth; never escapes {@link parseSimpleYaml}. */
class Declined {}
const declined = new Declined();
const decline = (): never => {
  throw declined;
};

// Printable ASCII and line feeds only: no tab, CR, BOM, control or non-ASCII character (each
// has rules of its own in YAML — line breaks, indentation, escapes — that this reader skips).
const OUTSIDE_SUBSET = /[^\n\x20-\x7e]/;
// A key: plain, starting with a letter or `_` (never a number, null, boolean or indicator).
const KEY = /^([A-Za-z_][A-Za-z0-9_.\-/]{0,127}):(?: +|$)/;
// yaml's core-schema tags (yaml/dist/schema/core, common/null.js): a plain scalar matching
// one of these is not a string.
const NULL = /^(?:~|[Nn]ull|NULL)$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const NOT_STRING = [
  /^0o[0-7]+$/,
  /^[-+]?[0-9]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
];
// The integers read here, exactly as yaml's parseInt reads them: no sign, no leading zero (no
// -0), at most 15 digits (exact as a double).
const INT = /^(?:0|[1-9][0-9]{0,14})$/;
// Characters that start something other than a plain scalar (YAML 1.2 c-indicator), and the
// sequences inside one that would end it or make it a key or a comment.
const INDICATOR = /^[-?:,[\]{}#&*!|>'"%@`]/;
const INSIDE_PLAIN = /: |:$|#/;

/** The value of a one-line scalar (the text after `key: ` or `- `), or a decline. */
function scalar(text: string): Value {
  const first = text[0];
  if (first === "'" || first === '"') {
    const inner = text.slice(1, -1);
    // One-line quoted strings without escapes: `''` in single quotes, `\` in double quotes
    // and anything after the closing quote are declined.
    if (text.length < 2 || text[text.length - 1] !== first || inner.includes(first)) decline();
    if (first === '"' && inner.includes('\\')) decline();
    return inner;
  }
  if (text === '{}') return {};
  if (text === '[]') return [];
  // `-` may start a plain scalar when a non-space follows (`--region`); `---` is left to yaml.
  if (INDICATOR.test(text) && !(first === '-' && /^-[^ ]/.test(text) && !text.startsWith('---'))) decline();
  if (INSIDE_PLAIN.test(text)) decline();
  if (NULL.test(text)) return null;
  if (BOOL.test(text)) return first === 't' || first === 'T';
  if (INT.test(text)) return Number(text);
  if (NOT_STRING.some((re) => re.test(text))) decline();
  return text;
}

class Reader {
  private at = 0;
  constructor(private readonly lines: Line[]) {}

  /** The next content line, if any. */
  private peek(): Line | undefined {
    return this.lines[this.at];
  }

  document(): Value {
    const line = this.peek();
    if (line === undefined || line.indent !== 0 || !KEY.test(line.text)) decline();
    const doc = this.mapping(0);
    if (this.at !== this.lines.length) decline();
    return doc;
  }

  /** The node that starts at the next line, which is indented by `indent`. */
  private node(indent: number): Value {
    const line = this.peek()!;
    if (isDash(line.text)) return this.sequence(indent);
    if (KEY.test(line.text)) return this.mapping(indent);
    this.at++;
    const value = scalar(line.text);
    this.endOfNode(indent);
    return value;
  }

  /** After a one-line value, the next line must not be deeper (it would continue the value). */
  private endOfNode(indent: number): void {
    const next = this.peek();
    if (next !== undefined && next.indent > indent) decline();
  }

  private mapping(indent: number): { [key: string]: Value } {
    const out: { [key: string]: Value } = {};
    for (let line = this.peek(); line !== undefined && line.indent >= indent; line = this.peek()) {
      if (line.indent > indent) decline();
      const match = KEY.exec(line.text);
      if (match === null) decline();
      const key = match![1]!;
      // A key yaml reads as null or a boolean would become "" or "true"; a duplicate is yaml's
      // error to report; `__proto__` it defines as an own property.
      if (NULL.test(key) || BOOL.test(key) || Object.hasOwn(out, key) || key === '__proto__') decline();
      const rest = line.text.slice(match![0].length);
      this.at++;
      if (rest !== '') {
        out[key] = scalar(rest);
        this.endOfNode(indent);
        continue;
      }
      const next = this.peek();
      if (next !== undefined && next.indent > indent) out[key] = this.node(next.indent);
      // A sequence may sit at its key's indentation (`clusters:\n- name: …`, as kubectl writes).
      else if (next !== undefined && next.indent === indent && isDash(next.text))
        out[key] = this.sequence(indent);
      else out[key] = null;
    }
    return out;
  }

  private sequence(indent: number): Value[] {
    const out: Value[] = [];
    for (
      let line = this.peek();
      line !== undefined && line.indent === indent && isDash(line.text);
      line = this.peek()
    ) {
      const content = line.text.slice(1).replace(/^ +/, '');
      if (content === '') {
        this.at++;
        const next = this.peek();
        out.push(next !== undefined && next.indent > indent ? this.node(next.indent) : null);
      } else {
        // `- key: value`: the item's node starts at the column of its text, and its further
        // lines align under it; so the line is read again as if it were indented so.
        this.lines[this.at] = { indent: indent + line.text.length - content.length, text: content };
        out.push(this.node(this.lines[this.at]!.indent));
      }
      const next = this.peek();
      if (next !== undefined && next.indent > indent) decline();
    }
    return out;
  }
}

const isDash = (text: string) => text === '-' || text.startsWith('- ');

/**
 * Parses `text` if it lies in the subset, else returns {@link DECLINE}; the result, when there
 * is one, deep-equals `yaml.parse(text)`.
 *
 * @example
 * ```ts
 * const doc = parseSimpleYaml('kind: Config\nclusters:\n- name: a\n');
 * const value = doc === DECLINE ? yaml.parse(text) : doc;
 * ```
 */
export function parseSimpleYaml(text: string): Value | typeof DECLINE {
  if (OUTSIDE_SUBSET.test(text)) return DECLINE;
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    const body = raw.trimStart();
    // Blank lines and whole-line comments carry nothing; trailing spaces and document markers
    // or directives (`---`, `...`, `%YAML`) are left to yaml.
    if (body === '' || body[0] === '#') continue;
    if (body.endsWith(' ') || /^(?:---|\.\.\.|%)/.test(raw)) return DECLINE;
    lines.push({ indent: raw.length - body.length, text: body });
  }
  try {
    return new Reader(lines).document();
  } catch (err) {
    if (err === declined) return DECLINE;
    throw err;
  }
}
