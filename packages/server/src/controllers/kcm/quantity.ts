/**
 * Just enough of `resource.Quantity` for sums and ratios of CPU and memory: a quantity as a
 * number of milli-units, and back to the canonical text Kubernetes prints (`250m`, `2`, `192Mi`).
 */

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The milli-units of a quantity (`250m` → 250, `1Ki` → 1 024 000); undefined when malformed. */
export function milli(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  if (typeof q === 'number') return q * 1000;
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))([a-zA-Z]*|[eE][+-]?\d+)$/.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const suffix = m[2] ?? '';
  const scale = Object.hasOwn(BINARY, suffix)
    ? BINARY[suffix]
    : Object.hasOwn(DECIMAL, suffix)
      ? DECIMAL[suffix]
      : /^[eE]/.test(suffix)
        ? 10 ** Number(suffix.slice(1))
        : undefined;
  // Quantities round up to the milli-unit, as `MilliValue()` does.
  return scale === undefined ? undefined : Math.ceil(n * scale * 1000 - 1e-6);
}

/** Whether a quantity's text uses a binary suffix (its sums print binary too, as Kubernetes keeps the format). */
export const isBinary = (q: string | number | undefined): boolean =>
  typeof q === 'string' && /[KMGTPE]i$/.test(q.trim());

/** The canonical text of `millis` milli-units, binary (`Mi`) or decimal (`m`, `k`, `M`). */
export function formatMilli(millis: number, binary = false): string {
  if (millis % 1000 !== 0) return `${millis}m`;
  const units = millis / 1000;
  if (units === 0) return '0';
  if (binary) {
    for (const s of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'])
      if (units % (BINARY[s] ?? 1) === 0) return `${units / (BINARY[s] ?? 1)}${s}`;
    return String(units);
  }
  for (const s of ['E', 'P', 'T', 'G', 'M', 'k'])
    if (units % (DECIMAL[s] ?? 1) === 0) return `${units / (DECIMAL[s] ?? 1)}${s}`;
  return String(units);
}
