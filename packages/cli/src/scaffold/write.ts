/** Writing scaffolded files: never over a file the user has, and inserting at kubeloop's markers. */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Writes `files` (relative paths → content) under `root`; refuses to overwrite any unless `force`. */
export async function writeNewFiles(
  root: string,
  files: Readonly<Record<string, string>>,
  force = false,
): Promise<string[]> {
  const existing = Object.keys(files).filter((f) => existsSync(join(root, f)));
  if (existing.length > 0 && !force)
    throw new Error(`would overwrite ${existing.join(', ')} in ${root} (--force to overwrite)`);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return Object.keys(files);
}

/**
 * Inserts `line` before the marker comment `// +kubeloop:scaffold:<marker>` of a file (indented
 * as the marker), once: a line already there is not added again.
 */
export async function insertAtMarker(path: string, marker: string, line: string): Promise<void> {
  const text = await readFile(path, 'utf8');
  const tag = `// +kubeloop:scaffold:${marker}`;
  const at = text.indexOf(tag);
  if (at < 0) throw new Error(`${path} has no "${tag}" marker: add the line yourself:\n  ${line}`);
  if (text.split('\n').some((l) => l.trim() === line.trim())) return;
  const lineStart = text.lastIndexOf('\n', at) + 1;
  const indent = text.slice(lineStart, at);
  await writeFile(path, `${text.slice(0, lineStart)}${indent}${line}\n${text.slice(lineStart)}`);
}

/**
 * Inserts `block` (whole lines) before the line of the marker `// +kubeloop:scaffold:<marker>`
 * of `text`; returns `text` unchanged when `present` already occurs in it (scaffolded before).
 */
export function insertBlock(text: string, marker: string, block: string, present: string): string {
  if (text.includes(present)) return text;
  const tag = `// +kubeloop:scaffold:${marker}`;
  const at = text.indexOf(tag);
  if (at < 0) throw new Error(`no "${tag}" marker: add this yourself:\n${block}`);
  const lineStart = text.lastIndexOf('\n', at) + 1;
  return `${text.slice(0, lineStart)}${block.endsWith('\n') ? block : `${block}\n`}${text.slice(lineStart)}`;
}

/**
 * Adds `names` to the `import { … } from '<module>';` of `text` (sorted as Biome sorts them), or
 * a new import line after the last one when there is none. Names already imported stay once.
 */
export function addNamedImports(text: string, module: string, names: readonly string[]): string {
  const re = new RegExp(`import \\{([^}]*)\\} from '${module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}';`);
  const m = re.exec(text);
  const key = (s: string) => s.replace(/^type /, '').toLowerCase();
  if (m) {
    const have = m[1]!
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const all = [...new Set([...have, ...names])].sort((a, b) =>
      key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0,
    );
    if (all.length === have.length) return text;
    return text.replace(re, `import { ${all.join(', ')} } from '${module}';`);
  }
  // A package's import goes among the package imports in order (as Biome sorts them), a
  // relative one after the last import.
  const lines = text.split('\n');
  const imports = lines.flatMap((l, i) => {
    const from = /^import .* from '(.*)';$/.exec(l)?.[1];
    return from === undefined ? [] : [{ i, from }];
  });
  const after = (imports.at(-1)?.i ?? -1) + 1;
  const next = module.startsWith('.')
    ? undefined
    : imports.find((x) => !x.from.startsWith('node:') && (x.from.startsWith('.') || x.from > module));
  lines.splice(next?.i ?? after, 0, `import { ${[...names].join(', ')} } from '${module}';`);
  return lines.join('\n');
}
