/**
 * The Kubernetes CEL libraries that CRD validation rules can call (kube 1.32 base
 * environment): the cel-go strings extension, kube's lists, regex, URL, quantity, IP/CIDR,
 * sets and format libraries. Registered onto a cel-js `Environment`.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { type Environment, Optional } from '@marcbachmann/cel-js';
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
} from '../../api/validation.js';
import { isDate, isDateTime, stringFormatChecker } from '../formats.js';
import { goRegexp } from '../regex.js';

/** Thrown by library functions; the message is cel-go's. */
export class CelLibraryError extends Error {}

function re(pattern: string): RegExp {
  const r = goRegexp(pattern);
  if (!(r instanceof RegExp)) throw new CelLibraryError(r.message);
  return r;
}

const cmp = (a: unknown, b: unknown): number => {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  throw new CelLibraryError('no such overload');
};

// ---------------------------------------------------------------------------------------------
// Quantity
// ---------------------------------------------------------------------------------------------

const SUFFIX: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
  Ei: 1024 ** 6,
};

/** A Kubernetes resource quantity in CEL (`quantity("10Gi")`). Values are held as float64. */
export class Quantity {
  constructor(
    readonly value: number,
    readonly text: string,
  ) {}
  static parse(s: string): Quantity | undefined {
    const m =
      /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/.exec(s);
    if (!m) return undefined;
    const base = Number(m[1]);
    const value = m[2] ? Number(`${m[1]}${m[2]}`) : base * (SUFFIX[m[3] ?? ''] ?? 1);
    return new Quantity(value, s);
  }
}

function quantityOf(s: string): Quantity {
  const q = Quantity.parse(s);
  if (!q)
    throw new CelLibraryError(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
  return q;
}

// ---------------------------------------------------------------------------------------------
// URL
// ---------------------------------------------------------------------------------------------

/** A parsed URL in CEL (`url("https://example.com/x")`). */
export class CelURL {
  constructor(readonly url: URL) {}
}

function parseURL(s: string): CelURL | undefined {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) && !s.startsWith('/')) return undefined;
  try {
    return new CelURL(new URL(s, s.startsWith('/') ? 'relative:///' : undefined));
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// IP / CIDR
// ---------------------------------------------------------------------------------------------

/** An IP address in CEL (`ip("10.0.0.1")`). */
export class CelIP {
  constructor(readonly text: string) {}
}
/** A CIDR in CEL (`cidr("10.0.0.0/8")`). */
export class CelCIDR {
  constructor(
    readonly ip: string,
    readonly prefix: number,
  ) {}
}

const isIP = (s: string): boolean => (isIPv4(s) && !/(^|\.)0\d/.test(s)) || (isIPv6(s) && !s.includes('%'));

function ipToBigInt(s: string): bigint {
  if (isIPv4(s)) return s.split('.').reduce((a, p) => (a << 8n) | BigInt(Number(p)), 0n);
  const [head = '', tail = ''] = s.split('::');
  const parse = (x: string) =>
    (x ? x.split(':') : []).flatMap((g) => (g.includes('.') ? ipv4Groups(g) : [g]));
  const h = parse(head);
  const t = parse(tail);
  const groups = s.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return groups.reduce((a, g) => (a << 16n) | BigInt(Number.parseInt(g || '0', 16)), 0n);
}
function ipv4Groups(v4: string): string[] {
  const n = v4.split('.').map(Number);
  return [(((n[0] ?? 0) << 8) | (n[1] ?? 0)).toString(16), (((n[2] ?? 0) << 8) | (n[3] ?? 0)).toString(16)];
}

function parseCIDR(s: string): CelCIDR | undefined {
  const i = s.indexOf('/');
  if (i < 0) return undefined;
  const ip = s.slice(0, i);
  const bits = s.slice(i + 1);
  if (!isIP(ip) || !/^\d{1,3}$/.test(bits)) return undefined;
  const n = Number(bits);
  if (n > (isIPv4(ip) ? 32 : 128)) return undefined;
  return new CelCIDR(ip, n);
}

function cidrContains(c: CelCIDR, ip: string): boolean {
  const v4 = isIPv4(c.ip);
  if (v4 !== isIPv4(ip)) return false;
  const width = v4 ? 32n : 128n;
  const shift = width - BigInt(c.prefix);
  return ipToBigInt(c.ip) >> shift === ipToBigInt(ip) >> shift;
}

// ---------------------------------------------------------------------------------------------
// format library
// ---------------------------------------------------------------------------------------------

/** The `sets` namespace constant. */
export class SetsNamespace {}
/** The `format` namespace constant. */
export class FormatNamespace {}
/** A named format (`format.dns1123Label()`). */
export class CelFormat {
  constructor(readonly check: (s: string) => string[]) {}
}

const formatChecks: Record<string, (s: string) => string[]> = {
  dns1123Label: isDNS1123Label,
  dns1123Subdomain: isDNS1123Subdomain,
  dns1035Label: isDNS1035Label,
  qualifiedName: isQualifiedName,
  labelValue: isValidLabelValue,
  dns1123LabelPrefix: (s) => isDNS1123Label(s.endsWith('-') ? `${s.slice(0, -1)}a` : s),
  dns1123SubdomainPrefix: (s) => isDNS1123Subdomain(s.endsWith('-') ? `${s.slice(0, -1)}a` : s),
  dns1035LabelPrefix: (s) => isDNS1035Label(s.endsWith('-') ? `${s.slice(0, -1)}a` : s),
  uri: (s) => (stringFormatChecker('uri')?.(s) ? [] : ['invalid URI']),
  uuid: (s) => (stringFormatChecker('uuid')?.(s) ? [] : ['does not match the UUID format']),
  byte: (s) => (stringFormatChecker('byte')?.(s) ? [] : ['invalid base64']),
  date: (s) => (isDate(s) ? [] : ['an RFC3339 date (2006-01-02) is required']),
  datetime: (s) => (isDateTime(s) ? [] : ['an RFC3339 date-time (2006-01-02T15:04:05Z) is required']),
};

// ---------------------------------------------------------------------------------------------
// registration
// ---------------------------------------------------------------------------------------------

const LIST_ELEM_TYPES = [
  'int',
  'uint',
  'double',
  'string',
  'bool',
  'google.protobuf.Timestamp',
  'google.protobuf.Duration',
];

/**
 * Registers kube's CEL libraries on an environment. Call before any `clone()`.
 */
export function registerKubernetesLibraries(env: Environment): Environment {
  // --- strings extension (cel-go ext.Strings) beyond what cel-js ships
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) =>
    s.split(a).join(b),
  );
  env.registerFunction(
    'string.replace(string, string, int): string',
    (s: string, a: string, b: string, n: bigint) => {
      let count = Number(n);
      if (count < 0) return s.split(a).join(b);
      let out = '';
      let rest = s;
      while (count > 0) {
        const i = rest.indexOf(a);
        if (i < 0) break;
        out += rest.slice(0, i) + b;
        rest = rest.slice(i + a.length || 1);
        if (a.length === 0) out += rest.slice(0, 0);
        count--;
      }
      return out + rest;
    },
  );
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
    const cps = [...s];
    const n = Number(i);
    if (n < 0 || n > cps.length) throw new CelLibraryError(`index out of range: ${n}`);
    return cps[n] ?? '';
  });
  env.registerFunction('string.reverse(): string', (s: string) => [...s].reverse().join(''));
  env.registerFunction('string.format(list<dyn>): string', (s: string, args: unknown[]) =>
    celFormat(s, args),
  );

  // --- lists library
  for (const t of LIST_ELEM_TYPES) {
    env.registerFunction(`list<${t}>.isSorted(): bool`, (l: unknown[]) =>
      l.every((x, i) => i === 0 || cmp(l[i - 1], x) <= 0),
    );
    env.registerFunction(`list<${t}>.min(): ${t}`, (l: unknown[]) => {
      if (l.length === 0) throw new CelLibraryError('min called on empty list');
      return l.reduce((a, b) => (cmp(b, a) < 0 ? b : a));
    });
    env.registerFunction(`list<${t}>.max(): ${t}`, (l: unknown[]) => {
      if (l.length === 0) throw new CelLibraryError('max called on empty list');
      return l.reduce((a, b) => (cmp(b, a) > 0 ? b : a));
    });
  }
  env.registerFunction('list<int>.sum(): int', (l: bigint[]) => l.reduce((a, b) => a + b, 0n));
  env.registerFunction('list<double>.sum(): double', (l: number[]) => l.reduce((a, b) => a + b, 0));
  env.registerFunction('list<uint>.sum(): uint', (l: unknown[]) =>
    l.reduce((a: bigint, b) => a + BigInt(b as bigint), 0n),
  );
  env.registerFunction('list<dyn>.indexOf(dyn): int', (l: unknown[], v: unknown) =>
    BigInt(l.findIndex((x) => celEquals(x, v))),
  );
  env.registerFunction('list<dyn>.lastIndexOf(dyn): int', (l: unknown[], v: unknown) => {
    for (let i = l.length - 1; i >= 0; i--) if (celEquals(l[i], v)) return BigInt(i);
    return -1n;
  });

  // --- regex library
  env.registerFunction('string.find(string): string', (s: string, p: string) => re(p).exec(s)?.[0] ?? '');
  env.registerFunction('string.findAll(string): list<string>', (s: string, p: string) =>
    [...s.matchAll(new RegExp(re(p).source, `${re(p).flags}g`))].map((m) => m[0]),
  );
  env.registerFunction('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) => {
    const all = [...s.matchAll(new RegExp(re(p).source, `${re(p).flags}g`))].map((m) => m[0]);
    return n < 0n ? all : all.slice(0, Number(n));
  });

  // --- URL library
  env.registerType('URL', CelURL);
  env.registerFunction('isURL(string): bool', (s: string) => parseURL(s) !== undefined);
  env.registerFunction('url(string): URL', (s: string) => {
    const u = parseURL(s);
    if (!u)
      throw new CelLibraryError(`URL parse error during conversion from string: parse "${s}": invalid URI`);
    return u;
  });
  env.registerFunction('URL.getScheme(): string', (u: CelURL) =>
    u.url.protocol === 'relative:' ? '' : u.url.protocol.slice(0, -1),
  );
  env.registerFunction('URL.getHost(): string', (u: CelURL) =>
    u.url.protocol === 'relative:' ? '' : u.url.host,
  );
  env.registerFunction('URL.getHostname(): string', (u: CelURL) =>
    u.url.protocol === 'relative:' ? '' : u.url.hostname.replace(/^\[(.*)\]$/, '$1'),
  );
  env.registerFunction('URL.getPort(): string', (u: CelURL) => u.url.port);
  env.registerFunction('URL.getEscapedPath(): string', (u: CelURL) => u.url.pathname);
  env.registerFunction('URL.getQuery(): map<string, list<string>>', (u: CelURL) => {
    const out: Record<string, string[]> = {};
    for (const [k, v] of u.url.searchParams) {
      const list = out[k] ?? [];
      list.push(v);
      out[k] = list;
    }
    return out;
  });

  // --- quantity library
  env.registerType('Quantity', Quantity);
  env.registerFunction('isQuantity(string): bool', (s: string) => Quantity.parse(s) !== undefined);
  env.registerFunction('quantity(string): Quantity', quantityOf);
  env.registerFunction(
    'Quantity.isInteger(): bool',
    (q: Quantity) => Number.isInteger(q.value) && Math.abs(q.value) <= 2 ** 63,
  );
  env.registerFunction('Quantity.asInteger(): int', (q: Quantity) => {
    if (!Number.isInteger(q.value) || Math.abs(q.value) > 2 ** 63)
      throw new CelLibraryError('cannot convert value to integer');
    return BigInt(q.value);
  });
  env.registerFunction('Quantity.asApproximateFloat(): double', (q: Quantity) => q.value);
  env.registerFunction('Quantity.sign(): int', (q: Quantity) => BigInt(Math.sign(q.value)));
  env.registerFunction(
    'Quantity.add(Quantity): Quantity',
    (a: Quantity, b: Quantity) => new Quantity(a.value + b.value, ''),
  );
  env.registerFunction(
    'Quantity.add(int): Quantity',
    (a: Quantity, b: bigint) => new Quantity(a.value + Number(b), ''),
  );
  env.registerFunction(
    'Quantity.sub(Quantity): Quantity',
    (a: Quantity, b: Quantity) => new Quantity(a.value - b.value, ''),
  );
  env.registerFunction(
    'Quantity.sub(int): Quantity',
    (a: Quantity, b: bigint) => new Quantity(a.value - Number(b), ''),
  );
  env.registerFunction(
    'Quantity.isGreaterThan(Quantity): bool',
    (a: Quantity, b: Quantity) => a.value > b.value,
  );
  env.registerFunction(
    'Quantity.isLessThan(Quantity): bool',
    (a: Quantity, b: Quantity) => a.value < b.value,
  );
  env.registerFunction('Quantity.compareTo(Quantity): int', (a: Quantity, b: Quantity) =>
    BigInt(Math.sign(a.value - b.value)),
  );

  // --- IP / CIDR library
  env.registerType('IP', CelIP);
  env.registerType('CIDR', CelCIDR);
  env.registerFunction('isIP(string): bool', (s: string) => isIP(s));
  env.registerFunction('ip(string): IP', (s: string) => {
    if (!isIP(s))
      throw new CelLibraryError(
        `IP Address "${s}" parse error during conversion from string: ParseAddr("${s}"): unable to parse IP`,
      );
    return new CelIP(s);
  });
  env.registerFunction('IP.family(): int', (ip: CelIP) => (isIPv4(ip.text) ? 4n : 6n));
  env.registerFunction('IP.isLoopback(): bool', (ip: CelIP) => /^127\./.test(ip.text) || ip.text === '::1');
  env.registerFunction('isCIDR(string): bool', (s: string) => parseCIDR(s) !== undefined);
  env.registerFunction('cidr(string): CIDR', (s: string) => {
    const c = parseCIDR(s);
    if (!c)
      throw new CelLibraryError(
        `network address "${s}" parse error during conversion from string: netip.ParsePrefix("${s}"): bad prefix`,
      );
    return c;
  });
  env.registerFunction(
    'CIDR.containsIP(string): bool',
    (c: CelCIDR, ip: string) => isIP(ip) && cidrContains(c, ip),
  );
  env.registerFunction('CIDR.containsIP(IP): bool', (c: CelCIDR, ip: CelIP) => cidrContains(c, ip.text));
  env.registerFunction('CIDR.prefixLength(): int', (c: CelCIDR) => BigInt(c.prefix));

  // --- sets library
  env.registerType('SetsNamespace', SetsNamespace);
  env.registerConstant('sets', 'SetsNamespace', new SetsNamespace());
  const has = (l: unknown[], x: unknown) => l.some((y) => celEquals(x, y));
  env.registerFunction(
    'SetsNamespace.contains(list<dyn>, list<dyn>): bool',
    (_n: SetsNamespace, a: unknown[], b: unknown[]) => b.every((x) => has(a, x)),
  );
  env.registerFunction(
    'SetsNamespace.equivalent(list<dyn>, list<dyn>): bool',
    (_n: SetsNamespace, a: unknown[], b: unknown[]) => b.every((x) => has(a, x)) && a.every((x) => has(b, x)),
  );
  env.registerFunction(
    'SetsNamespace.intersects(list<dyn>, list<dyn>): bool',
    (_n: SetsNamespace, a: unknown[], b: unknown[]) => b.some((x) => has(a, x)),
  );

  // --- format library
  env.registerType('FormatNamespace', FormatNamespace);
  env.registerType('Format', CelFormat);
  env.registerConstant('format', 'FormatNamespace', new FormatNamespace());
  for (const [name, check] of Object.entries(formatChecks)) {
    env.registerFunction(`FormatNamespace.${name}(): Format`, () => new CelFormat(check));
  }
  env.registerFunction(
    'FormatNamespace.named(string): optional<Format>',
    (_ns: FormatNamespace, name: string) => {
      const check = formatChecks[name];
      return check ? Optional.of(new CelFormat(check)) : Optional.none();
    },
  );
  env.registerFunction('Format.validate(string): optional<list<string>>', (f: CelFormat, s: string) => {
    const errs = f.check(s);
    return errs.length > 0 ? Optional.of(errs) : Optional.none();
  });
  return env;
}

/** CEL equality of runtime values (int and double compare numerically). */
export function celEquals(a: unknown, b: unknown): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number'))
    return Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => celEquals(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ak = Object.keys(a);
    return (
      ak.length === Object.keys(b).length &&
      ak.every((k) => celEquals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  }
  return a === b;
}

// cel-go ext.Strings `format`: %s %d %f %e %b %o %x %X %%.
function celFormat(fmt: string, args: unknown[]): string {
  let i = 0;
  return fmt.replace(/%(\.\d+)?([sdfeboxX%])/g, (_m, prec: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    const a = args[i++];
    const p = prec ? Number(prec.slice(1)) : undefined;
    switch (verb) {
      case 's':
        return typeof a === 'string' ? a : celToString(a);
      case 'd':
        return String(typeof a === 'number' ? Math.trunc(a) : a);
      case 'f':
        return Number(a).toFixed(p ?? 6);
      case 'e':
        return Number(a)
          .toExponential(p ?? 6)
          .replace(/e([+-])(\d)$/, 'e$10$2');
      case 'b':
        return BigInt(a as bigint).toString(2);
      case 'o':
        return BigInt(a as bigint).toString(8);
      case 'x':
        return typeof a === 'string' ? Buffer.from(a).toString('hex') : BigInt(a as bigint).toString(16);
      case 'X':
        return (
          typeof a === 'string' ? Buffer.from(a).toString('hex') : BigInt(a as bigint).toString(16)
        ).toUpperCase();
      default:
        return '';
    }
  });
}

function celToString(a: unknown): string {
  if (a === null || a === undefined) return 'null';
  if (Array.isArray(a)) return `[${a.map(celToString).join(', ')}]`;
  if (a instanceof Date) return a.toISOString().replace('.000Z', 'Z');
  if (typeof a === 'object') {
    return `{${Object.entries(a as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${celToString(v)}`)
      .join(', ')}}`;
  }
  return String(a);
}
