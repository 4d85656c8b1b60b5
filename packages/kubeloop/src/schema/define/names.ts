/**
 * The names Kubernetes derives from a kind when a CRD does not spell them out.
 */

const IRREGULAR: Record<string, string> = {
  person: 'people',
  child: 'children',
  index: 'indices',
  matrix: 'matrices',
  vertex: 'vertices',
  endpoints: 'endpoints',
};

/**
 * The lowercase plural of a kind, as kubebuilder (flect) derives it for the common cases:
 * `Foo` → `foos`, `Policy` → `policies`, `Ingress` → `ingresses`, `Index` → `indices`.
 * Irregular words beyond these are spelled out with `plural`.
 */
export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  for (const [word, plural] of Object.entries(IRREGULAR))
    if (lower.endsWith(word)) return lower.slice(0, lower.length - word.length) + plural;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}
