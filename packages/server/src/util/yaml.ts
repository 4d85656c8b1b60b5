/**
 * The `yaml` package, loaded on first use: it takes ~80 ms to load, and most requests (kubectl
 * sends JSON) never need it, so the server does not pay for it before it is ready.
 * {@link preloadYaml} loads it in the background once the server is serving.
 */
import { createRequire } from 'node:module';

type YamlModule = typeof import('yaml');

let loaded: YamlModule | undefined;

function yaml(): YamlModule {
  loaded ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return loaded;
}

/** `yaml.parse`. */
export const parseYaml: YamlModule['parse'] = ((...args: Parameters<YamlModule['parse']>) =>
  yaml().parse(...args)) as YamlModule['parse'];

/** `yaml.stringify`. */
export const toYaml: YamlModule['stringify'] = ((...args: Parameters<YamlModule['stringify']>) =>
  yaml().stringify(...args)) as YamlModule['stringify'];

/** Loads `yaml` now, unless it is already loaded. */
export function preloadYaml(): void {
  yaml();
}

/**
 * The deepest nesting of collections a YAML request body may have. go-yaml stops at 10,000;
 * the `yaml` package composes documents recursively, ~1.3 KB of stack per level, and overflows
 * Node's stack at ~750 levels; an overflow inside V8's regular-expression compiler kills the
 * process. Documents are refused well before that. A YAML body written as JSON (what client-go
 * sends, apply configurations included) is parsed as JSON and held to the JSON limit instead
 * (`parseJsonShapedYaml` in http/body.ts).
 */
export const MAX_YAML_DEPTH = 500;

/** Input the server refuses to parse; its message is go-yaml's wording for the problem. */
export class YamlLimitError extends Error {}

type ParseOptions = NonNullable<Parameters<YamlModule['parseDocument']>[1]> & { maxAliasCount?: number };

/**
 * `yaml.parse` for request bodies, with the limits go-yaml has: nesting deeper than `maxDepth`
 * is refused before the document is composed (see {@link MAX_YAML_DEPTH}), an anchor whose
 * value holds an alias to itself is refused (`anchor 'a' value contains itself`; the `yaml`
 * package would build a cyclic value), and too many aliases (`maxAliasCount`, "billion laughs")
 * are refused. Throws {@link YamlLimitError} for these and the parser's errors otherwise.
 */
export function parseYamlBounded(text: string, options: ParseOptions, maxDepth = MAX_YAML_DEPTH): unknown {
  const y = yaml();
  if (yamlDepthExceeds(y, text, maxDepth))
    throw new YamlLimitError(`yaml: exceeded max depth of ${maxDepth}`);
  const doc = y.parseDocument(text, options);
  if (doc.errors.length > 0) throw doc.errors[0];
  let selfAlias: string | undefined;
  y.visit(doc, {
    Alias(_key, node, path) {
      const target = node.resolve(doc);
      if (target && (path as readonly unknown[]).includes(target)) {
        selfAlias = node.source;
        return y.visit.BREAK;
      }
      return undefined;
    },
  });
  if (selfAlias !== undefined) throw new YamlLimitError(`yaml: anchor '${selfAlias}' value contains itself`);
  try {
    return doc.toJS({ maxAliasCount: options.maxAliasCount ?? 100 });
  } catch (err) {
    if (err instanceof ReferenceError && /alias/i.test(err.message))
      throw new YamlLimitError('yaml: document contains excessive aliasing');
    throw err;
  }
}

/**
 * Whether the collections of a YAML text nest deeper than `limit`, read from the lexer's tokens
 * (linear, no recursion) and stopping as soon as the limit is passed: flow collections by their
 * brackets, block collections by the columns of their entries (`-` items, and keys before `:`).
 */
function yamlDepthExceeds(y: YamlModule, text: string, limit: number): boolean {
  // Each level takes at least one character: short texts cannot be deep.
  if (text.length <= limit) return false;
  /** Open block collections: the column of their entries, and whether they are sequences. */
  const block: { col: number; seq: boolean }[] = [];
  let flow = 0;
  let col = 0;
  let lineStart = true;
  /** Column of the first token of the node being read on this line (a key, if `:` follows). */
  let nodeCol = -1;
  // An entry at column c closes the collections indented deeper, and a key closes a sequence
  // at its own column (`a:` / `- x` / `b: y`); an item at a key's column is that key's value.
  const enter = (c: number, seq: boolean) => {
    while (block.length > 0) {
      const top = block[block.length - 1]!;
      if (top.col > c || (top.col === c && top.seq && !seq)) block.pop();
      else break;
    }
    const top = block[block.length - 1];
    if (!top || top.col !== c || top.seq !== seq) block.push({ col: c, seq });
  };
  for (const token of new y.Lexer().lex(text)) {
    const first = token.charCodeAt(0);
    if (token === '\n' || token === '\r\n') {
      col = 0;
      lineStart = true;
      nodeCol = -1;
      continue;
    }
    // Control tokens of the lexer (document and scalar markers) take no room.
    if (token.length === 1 && first < 0x20) continue;
    const nl = token.lastIndexOf('\n');
    if (nl >= 0) {
      // A scalar over several lines (block, quoted or plain): the next token starts where it ends.
      col = token.length - nl - 1;
      lineStart = col === 0;
      nodeCol = -1;
      continue;
    }
    const at = col;
    col += token.length;
    if (lineStart && (first === 0x20 || first === 0x09) && token.trim() === '') continue;
    if (first === 0x23 /* # */) continue;
    lineStart = false;
    if (token === '[' || token === '{') flow++;
    else if (token === ']' || token === '}') flow = Math.max(0, flow - 1);
    if (flow === 0 && (token === '-' || token === '?')) {
      enter(at, token === '-');
      nodeCol = -1;
    } else if (flow === 0 && token === ':') {
      if (nodeCol >= 0) enter(nodeCol, false);
      nodeCol = -1;
    } else if (nodeCol < 0 && token.trim() !== '') nodeCol = at;
    if (block.length + flow > limit) return true;
  }
  return false;
}

/**
 * The duplicate map keys of a YAML text, as go-yaml's strict decoding reports them
 * (`yaml: unmarshal errors:\n  line 7: key "data" already set in map`, one line per duplicate, in
 * document order); undefined when there are none. kube-apiserver's YAML serializer runs this
 * strict pass only under `fieldValidation=Strict|Warn`, since its plain decoding keeps the last
 * value silently. The text is expected to have parsed already (bounded) with duplicates allowed.
 */
export function yamlDuplicateKeys(text: string): string | undefined {
  const y = yaml();
  const lines = new y.LineCounter();
  const doc = y.parseDocument(text, { uniqueKeys: false, lineCounter: lines });
  const found: string[] = [];
  y.visit(doc, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const item of map.items) {
        const key = y.isScalar(item.key) ? item.key.value : item.key;
        if (!seen.has(key)) {
          seen.add(key);
          continue;
        }
        const at = y.isNode(item.key) && item.key.range ? lines.linePos(item.key.range[0]).line : 0;
        found.push(
          `line ${at}: key ${typeof key === 'string' ? JSON.stringify(key) : String(key)} already set in map`,
        );
      }
      return undefined;
    },
  });
  return found.length === 0 ? undefined : `yaml: unmarshal errors:\n  ${found.join('\n  ')}`;
}
