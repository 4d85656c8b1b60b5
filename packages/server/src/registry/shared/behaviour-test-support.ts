/**
 * Helpers of the registry's behaviour tests: a kind's behaviour by key, a write as the server
 * runs it (defaults, then validation), and a fixed clock for printer columns.
 */
import { builtinBehaviours } from '../builtin-kinds.js';
import type { KindBehaviour } from './behaviour.js';

type Obj = Record<string, unknown>;

// What the kinds' checks load before their first write (the server awaits it on every write).
await Promise.all(Object.values(builtinBehaviours).map((k) => k.load?.()));

/** The behaviour of `group/resource` (`''` group: `/pods`); throws for an unknown key. */
export const b = (key: string): KindBehaviour => {
  const found = builtinBehaviours[key];
  if (!found) throw new Error(`no behaviour for ${key}`);
  return found;
};

/** The tests' "now", for ages in printer columns. */
export const now = new Date('2024-05-01T12:00:00Z');

/** A creationTimestamp `ago` seconds before {@link now}. */
export const created = (ago: number) =>
  new Date(now.getTime() - ago * 1000).toISOString().replace('.000Z', 'Z');

/** Defaults then validation, as the server runs them on a write. */
export function write(
  key: string,
  obj: Obj,
  old?: Obj,
): { obj: Obj; causes: { field?: string; message?: string }[] } {
  const copy = structuredClone(obj);
  b(key).defaults?.(copy);
  return { obj: copy, causes: b(key).validate?.(copy, old) ?? [] };
}

/** Causes as `field: message` lines. */
export const fieldsOf = (causes: { field?: string; message?: string }[]) =>
  causes.map((c) => `${c.field}: ${c.message}`);

/** A kind's column names, `*` marking the wide-only ones. */
export const columnNames = (key: string) => b(key).columns.map((c) => (c.priority ? `${c.name}*` : c.name));
