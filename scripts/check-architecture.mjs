#!/usr/bin/env node
// The shape the architecture asks for, checked in CI beside the linter (which checks import
// cycles and what the built-in controllers may import): no source module over 600 lines, so that
// each one keeps one job. Tests and generated code (a `// Code generated … DO NOT EDIT.` first
// line, as Go marks it) are exempt.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const MAX_LINES = 600;
const root = new URL('..', import.meta.url).pathname;
const roots = ['packages', 'examples', 'bench'];
const skip = new Set(['node_modules', 'dist', 'test', 'testdata', 'wasm', 'coverage']);

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    if (skip.has(name) || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !/\.(test|d)\.[mc]?[tj]s$/.test(name)) yield path;
  }
}

const tooLong = [];
for (const top of roots) {
  for (const file of sources(join(root, top))) {
    const text = readFileSync(file, 'utf8');
    if (/^\/\/ Code generated .* DO NOT EDIT\./.test(text)) continue;
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_LINES) tooLong.push(`${relative(root, file)}: ${lines} lines`);
  }
}
if (tooLong.length > 0) {
  console.error(
    `modules over ${MAX_LINES} lines (split them by what each part does):\n  ${tooLong.join('\n  ')}`,
  );
  process.exit(1);
}
console.log(`architecture: every source module is at most ${MAX_LINES} lines`);
