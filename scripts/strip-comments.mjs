// Removes the comments of the emitted JavaScript in dist/ (after `tsc -b`; the root `npm run build`
// runs it). Why: V8 keeps each module's source text in the heap for as long as its functions live
// (always, in an operator), and our TSDoc is ~20 % of the emitted bytes: ~0.6 MB of heap in the
// sample operator. The .d.ts files keep every comment (users read them), and the source maps stay
// exact: only comments alone on their lines or at the end of a line go, their newlines stay, so
// every remaining token keeps its line and column. `//# sourceMappingURL` and `/*! … */` stay.
// Applies to every package a process loads at run time: the SDK (an operator) and the server and
// CLI (the local control plane: ~390 modules at idle, whose comments also made 100 of them
// two-byte strings in V8 for their "—" and "→", twice the heap of the same text in one byte).
//   node scripts/strip-comments.mjs [dir …]   (default: the dist/ of packages/kubeloop, server and cli)
// Incremental: a file is read again only when tsc wrote it since the last run (dist/.stripped).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The comment ranges of `text` (a JavaScript module), from the trivia of every token. */
function commentRanges(ts, text, fileName) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const seen = new Map();
  const add = (ranges) => {
    for (const r of ranges ?? []) seen.set(r.pos, r);
  };
  const visit = (node) => {
    add(ts.getLeadingCommentRanges(text, node.pos));
    add(ts.getTrailingCommentRanges(text, node.end));
    // getChildren, not forEachChild: the trivia before a `}` or `)` belongs to a token.
    for (const child of node.getChildren(sf)) visit(child);
  };
  visit(sf);
  return [...seen.values()].sort((a, b) => a.pos - b.pos);
}

const kept = (c) => c.startsWith('//# sourceMappingURL=') || c.startsWith('/*!') || c.startsWith('#!');

/** `text` without its comments (`ts`: the typescript module), every other character at the same line and column. */
export function stripComments(ts, text, fileName = 'x.js') {
  let out = '';
  let at = 0;
  for (const r of commentRanges(ts, text, fileName)) {
    if (r.pos < at) continue;
    const comment = text.slice(r.pos, r.end);
    if (kept(comment)) continue;
    const lineStart = text.lastIndexOf('\n', r.pos - 1) + 1;
    const nl = text.indexOf('\n', r.end);
    const lineEnd = nl < 0 ? text.length : nl;
    // Only a comment with nothing after it on its line: removing it moves no code.
    if (text.slice(r.end, lineEnd).trim() !== '') continue;
    const before = text.slice(Math.max(lineStart, at), r.pos);
    const cut = r.pos - (before.length - before.trimEnd().length);
    out += text.slice(at, cut) + comment.replace(/[^\n]/g, '');
    at = lineEnd;
  }
  return out + text.slice(at);
}

function jsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

/** Strips every .js under `dir` written since the last run; returns how many it rewrote. */
export async function stripDir(dir) {
  const stamp = join(dir, '.stripped');
  let done = {};
  try {
    done = JSON.parse(readFileSync(stamp, 'utf8'));
  } catch {}
  const next = {};
  let n = 0;
  let ts;
  for (const file of jsFiles(dir)) {
    const key = relative(dir, file);
    if (done[key] === statSync(file).mtimeMs) {
      next[key] = done[key];
      continue;
    }
    // TypeScript (~0.5 s to load) only when tsc wrote something.
    ts ??= (await import('typescript')).default;
    const text = readFileSync(file, 'utf8');
    const stripped = stripComments(ts, text, file);
    if (stripped !== text) {
      writeFileSync(file, stripped);
      n++;
    }
    next[key] = statSync(file).mtimeMs;
  }
  writeFileSync(stamp, JSON.stringify(next));
  return n;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dirs = process.argv.slice(2);
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  if (dirs.length === 0)
    dirs.push(...['kubeloop', 'server', 'cli'].map((p) => join(root, 'packages', p, 'dist')));
  for (const dir of dirs) await stripDir(dir);
}
