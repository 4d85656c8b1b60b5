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
