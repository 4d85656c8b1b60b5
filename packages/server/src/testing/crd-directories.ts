/** envtest's `CRDDirectoryPaths`: the CRD manifests of a project's folders, installed into a test env. */
import { existsSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ControlPlane } from '../control-plane.js';
import { establish, httpClient, type Json } from './http.js';

/** Every manifest file under `path` (a file, or a folder read recursively), sorted. */
async function manifestFiles(path: string): Promise<string[]> {
  if (statSync(path).isFile()) return [path];
  const files: string[] = [];
  for (const entry of (await readdir(path, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) files.push(...(await manifestFiles(full)));
    else if (/\.(ya?ml|json)$/.test(entry.name) && !/^kustomization\.ya?ml$/.test(entry.name))
      files.push(full);
  }
  return files;
}

/** The CustomResourceDefinitions of the manifests under `paths`; other documents are skipped. */
export async function readCrdDirectories(paths: readonly string[], errorIfMissing = true): Promise<Json[]> {
  // yaml is loaded here, on use: the server itself starts without it (idle memory).
  const { parseAllDocuments } = await import('yaml');
  const crds: Json[] = [];
  for (const p of paths) {
    const path = resolve(p);
    if (!existsSync(path)) {
      if (errorIfMissing) throw new Error(`CRD path ${path} does not exist (crdDirectoryPaths)`);
      continue;
    }
    for (const file of await manifestFiles(path)) {
      const text = await readFile(file, 'utf8');
      const docs: unknown[] = file.endsWith('.json')
        ? [JSON.parse(text)]
        : parseAllDocuments(text).map((d) => d.toJS());
      for (const doc of docs.flatMap((d) =>
        d && typeof d === 'object' && (d as Json).kind === 'List' ? ((d as Json).items as unknown[]) : [d],
      )) {
        if (doc && typeof doc === 'object' && (doc as Json).kind === 'CustomResourceDefinition')
          crds.push(doc as Json);
      }
    }
  }
  return crds;
}

/** Creates the CRDs of `paths` and waits until each is Established and its kind served. */
export async function installCrdDirectories(
  cp: Pick<ControlPlane, 'url' | 'clientConfig'>,
  paths: readonly string[],
  errorIfMissing = true,
): Promise<Json[]> {
  const crds = await readCrdDirectories(paths, errorIfMissing);
  const http = httpClient(cp);
  try {
    return await Promise.all(crds.map((crd) => establish(http, crd)));
  } finally {
    http.close();
  }
}
