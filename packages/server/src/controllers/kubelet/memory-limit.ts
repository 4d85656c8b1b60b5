/**
 * A container's memory limit, enforced on its processes as a cgroup would be, approximately: the
 * resident memory of the container's main process and its descendants is read from /proc every
 * half second; past `resources.limits.memory`, the processes are killed (SIGKILL) and the
 * container reported `OOMKilled` with exit code 137, as the kernel's OOM killer in a container's
 * memory cgroup would have it. A spike shorter than the sampling period goes unseen, and page
 * cache is not counted (a cgroup counts it).
 */
import { readFileSync } from 'node:fs';
import { parseQuantity } from 'kubeloop/api';

/** How often the processes' memory is read. */
export const MEMORY_SAMPLE_MS = 500;

/** The container's memory limit in bytes (undefined: none). */
export function memoryLimit(spec: { resources?: { limits?: Record<string, unknown> } }): number | undefined {
  const q = parseQuantity(spec.resources?.limits?.memory);
  if (!q) return undefined;
  const bytes = Number(q.num) / Number(q.den);
  return bytes > 0 ? bytes : undefined;
}

/** The resident memory (bytes) of a process and its descendants, as /proc says now. */
export function treeRss(pid: number): number {
  let total = 0;
  const seen = new Set<number>();
  const visit = (p: number) => {
    if (seen.has(p)) return;
    seen.add(p);
    try {
      total += Number(readFileSync(`/proc/${p}/statm`, 'utf8').split(' ')[1]) * 4096;
      const children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim();
      for (const c of children ? children.split(/\s+/) : []) visit(Number(c));
    } catch {
      // Gone meanwhile.
    }
  };
  visit(pid);
  return total;
}
