/**
 * Hostile requests for hostile.test.ts: input built to break parsers, validators and the
 * optimistic lock rather than random damage. Each request is derived from `(seed, index)` and the
 * setup's {@link HostileContext} alone, so a failure is reproduced from the printed seed.
 *
 * Every write carries the annotation `hostile/i: <index>` (a JSON patch adds it), so that the
 * test can tell from the watch whether a write that failed was stored nonetheless.
 */
import { stringify as toYaml } from 'yaml';
import { encodeProtobufObject } from '../src/protobuf/index.js';
import type { FuzzRequest } from './fuzz-gen.js';
import { Random } from './status-check.js';

type Obj = Record<string, unknown>;

/** The namespace hostile requests work in; the control objects live elsewhere. */
export const HOSTILE_NS = 'hostile';
/** Objects written only at the start and compared byte for byte at the end. */
export const CONTROL_NS = 'control';
export const MARKER = 'hostile/i';
export const MiB = 1024 * 1024;

/** What the generator knows of the setup. */
export interface HostileContext {
  /** Per pool object path, a resourceVersion it had before the setup changed it (stale). */
  staleRv: Record<string, string>;
}

/** A hostile request: a raw request plus what must hold of its answer beyond the general checks. */
export interface HostileRequest extends FuzzRequest {
  category: string;
  /** A write (the server may have stored it): its marker is checked against the watch. */
  write: boolean;
  /** A problem with the answer, or undefined when it is right. */
  expect?: (
    status: number,
    body: any,
    headers: Record<string, unknown>,
    ended: boolean,
  ) => string | undefined;
}

interface Kind {
  prefix: string;
  resource: string;
  apiVersion: string;
  kind: string;
  /** The pool objects (created by the test) that requests read, patch and replace. */
  pool: string[];
  sample(name: string): Obj;
}

const template = (app: string): Obj => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
});

export const HOSTILE_KINDS: Kind[] = [
  {
    prefix: '/api/v1',
    resource: 'configmaps',
    apiVersion: 'v1',
    kind: 'ConfigMap',
    pool: ['cm-0', 'cm-1', 'cm-2'],
    sample: (name) => ({ metadata: { name, labels: { app: 'h' }, annotations: {} }, data: { k: 'v' } }),
  },
  {
    prefix: '/api/v1',
    resource: 'secrets',
    apiVersion: 'v1',
    kind: 'Secret',
    pool: ['secret-0'],
    sample: (name) => ({
      metadata: { name, labels: { app: 'h' }, annotations: {} },
      type: 'Opaque',
      stringData: { user: 'u' },
    }),
  },
  {
    prefix: '/apis/apps/v1',
    resource: 'deployments',
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    pool: ['dep-0', 'dep-1'],
    sample: (name) => ({
      metadata: { name, labels: { app: 'h' }, annotations: {} },
      spec: { replicas: 1, selector: { matchLabels: { app: 'h' } }, template: template('h') },
    }),
  },
  {
    prefix: '/apis/fuzz.example.com/v1',
    resource: 'widgets',
    apiVersion: 'fuzz.example.com/v1',
    kind: 'Widget',
    pool: ['w-0', 'w-1'],
    sample: (name) => ({
      metadata: { name, labels: { app: 'h' }, annotations: {} },
      spec: { color: 'green', replicas: 1, extra: { free: 1 } },
    }),
  },
];

/** The URL of an object (or of the collection, without a name). */
export function objectPath(k: Kind, ns: string, name?: string): string {
  return `${k.prefix}/namespaces/${ns}/${k.resource}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

/** Around the YAML (500) and JSON (1,000) limits, and far past them. */
const DEPTHS = [8, 64, 497, 499, 500, 501, 512, 992, 995, 997, 999, 1000, 1001, 2000, 3000, 5000];
const BAD_NAMES = [
  'ünïcode',
  '名前',
  'emoji-😀',
  'a\u202eb',
  'Ωmega',
  'UPPER',
  'MixedCase',
  'x'.repeat(64),
  'x'.repeat(254),
  'x'.repeat(10_000),
  'a..b',
  'trailing.',
  '-lead',
  'sp ace',
  'tab\tname',
  'nul\u0000',
  'crlf\r\nX-Injected: 1',
  'slash/name',
  '..',
  '.',
  '%2e%2e',
];
const LABEL_SELECTORS = [
  `app in (${Array.from({ length: 5000 }, (_, i) => `v${i}`).join(',')})`,
  `${'('.repeat(500)}app${')'.repeat(500)}`,
  'ключ=значение',
  'app=ünï',
  `${'a,'.repeat(5000)}a`,
  'app==h,,app',
  'app!=',
  'a/b/c=d',
  `${'x'.repeat(300)}=v`,
  `app=${'v'.repeat(64)}`,
  'app notin',
  'app in (a b)',
  '!app=h',
  'app=h\u0000',
  'app>5',
  'app in (h),!app',
  '%',
];
const FIELD_SELECTORS = [
  'metadata.name=名前',
  `metadata.name in (${'a,'.repeat(1000)}b)`,
  'metadata.name==a==b',
  'spec.replicas=1',
  'data.k=v',
  `metadata.name=${'x'.repeat(10_000)}`,
  'metadata.namespace!=,metadata.name!=',
  '(metadata.name=a)',
  'metadata.name=a\\,b',
  'metadata.name=\\',
  'status.phase=Running',
  'metadata.ünï=1',
  'metadata.name',
];
const BAD_RVS = [
  'abc',
  '-1',
  '1.5',
  '99999999999999999999',
  '18446744073709551616',
  '9223372036854775807',
  '0x10',
  ' 1',
  '１',
  '1e3',
  '',
];
const NON_ASCII_KEYS = [
  'ключ',
  '名前',
  '😀',
  'é',
  'Ω',
  'a\u202eb',
  '\u00ff',
  'ﬁ',
  '\u2028',
  'ñ.example.com/k',
];
const UNKNOWN_METHODS = [
  'PROPFIND',
  'PROPPATCH',
  'PURGE',
  'LINK',
  'UNLINK',
  'MKCOL',
  'REPORT',
  'SEARCH',
  'LOCK',
  'UNLOCK',
  'COPY',
  'MOVE',
  'TRACE',
  'SUBSCRIBE',
  'MERGE',
  'NOTIFY',
  'QUERY',
  'ACL',
  'BIND',
  'CHECKOUT',
];
const HUGE_TIMEOUTS = [
  '99999999999999999999',
  '9223372036854775807',
  '9223372036854775808',
  '2147483648',
  '4294967296',
  '1e9',
  '1e400',
  '-5',
  '1.5',
  'Infinity',
  'NaN',
  '0x7fffffff',
];

/** `depth` levels of arrays or objects around a leaf, as text (no recursion anywhere). */
function deepJson(depth: number, shape: 'array' | 'object' | 'mixed'): string {
  if (shape === 'array') return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
  if (shape === 'object') return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    if (i % 2) {
      open += '[';
      close = `]${close}`;
    } else {
      open += '{"b":';
      close = `}${close}`;
    }
  }
  return `${open}1${close}`;
}

/** A JSON object text with `hole` (raw JSON text) at `path`. */
function withRaw(obj: Obj, path: string[], hole: string): string {
  const HOLE = '"@@HOLE@@"';
  const copy = structuredClone(obj);
  let cur: Obj = copy;
  for (const k of path.slice(0, -1)) {
    if (cur[k] === null || typeof cur[k] !== 'object') cur[k] = {};
    cur = cur[k] as Obj;
  }
  cur[path[path.length - 1]!] = '@@HOLE@@';
  return JSON.stringify(copy).replace(HOLE, hole);
}

function marked(k: Kind, name: string, index: number): Obj {
  const o: Obj = { apiVersion: k.apiVersion, kind: k.kind, ...k.sample(name) };
  (o.metadata as Obj).annotations = { [MARKER]: String(index) };
  return o;
}

const protobufCache = new Map<number, Buffer>();

/** A CRD whose schema nests `depth` levels of properties, in protobuf (built once per depth). */
function deepProtobufCrd(depth: number, index: number): Buffer {
  let buf = protobufCache.get(depth);
  if (!buf) {
    let schema: Obj = { type: 'string' };
    for (let i = 0; i < depth; i++) schema = { type: 'object', properties: { p: schema } };
    buf = encodeProtobufObject({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `deeps.d${depth}.example.com`, annotations: { [MARKER]: 'protobuf' } },
      spec: {
        group: `d${depth}.example.com`,
        scope: 'Namespaced',
        names: { plural: 'deeps', singular: 'deep', kind: 'Deep', listKind: 'DeepList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      },
    });
    protobufCache.set(depth, buf);
  }
  void index;
  return buf;
}

const Status = (code: number, reason: string) => (status: number, body: any) =>
  status === code && body?.reason === reason
    ? undefined
    : `expected ${code} ${reason}, got ${status} ${String(body?.reason)}: ${String(body?.message).slice(0, 300)}`;

/** The `index`-th hostile request of the run with `seed`. */
export function hostileRequest(seed: number, index: number, ctx: HostileContext): HostileRequest {
  const r = new Random(seed ^ 0x5eed, index);
  const k = r.pick(HOSTILE_KINDS);
  const ns = r.chance(0.8) ? HOSTILE_NS : 'default';
  const poolName = r.pick(k.pool);
  const fresh = `hz-${index}`;
  const headers: Record<string, string> = { Accept: 'application/json' };
  let method = 'GET';
  let path = objectPath(k, ns);
  let body: Buffer | undefined;
  let watch = false;
  let write = false;
  let category: string;
  let expect: HostileRequest['expect'];
  const fv = () => `fieldValidation=${r.pick(['Strict', 'Warn', 'Ignore'])}`;
  const roll = r.int(1000);

  if (roll < 220) {
    // Deep nesting in every content type.
    category = 'deep';
    const depth = r.pick(DEPTHS);
    const deep = deepJson(depth, r.pick(['array', 'object', 'mixed'] as const));
    const where = r.pick([
      ['spec', 'extra', 'deep'],
      ['data', 'k'],
      ['deep'],
      ['metadata', 'annotations', 'x'],
    ]);
    const form = r.int(8);
    write = true;
    if (form === 0) {
      method = 'POST';
      headers['Content-Type'] = 'application/json';
      body = Buffer.from(withRaw(marked(k, fresh, index), where, deep));
    } else if (form === 1) {
      // YAML flow collections nest like JSON (JSON is YAML). A leading comment makes the same
      // text YAML that is not JSON, held to the YAML composer's limit instead of the JSON one.
      method = 'POST';
      headers['Content-Type'] = 'application/yaml';
      body = Buffer.from(
        `${r.chance(0.5) ? '# yaml\n' : ''}${withRaw(marked(k, fresh, index), where, deep)}`,
      );
    } else if (form === 2) {
      method = 'POST';
      path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
      headers['Content-Type'] = 'application/vnd.kubernetes.protobuf';
      body = deepProtobufCrd(r.pick([20, 99, 100, 101, 200, 1000]), index);
      write = false;
    } else if (form === 3 || form === 4 || form === 5) {
      method = 'PATCH';
      path = objectPath(k, ns, r.chance(0.8) ? poolName : fresh);
      headers['Content-Type'] = [
        'application/merge-patch+json',
        'application/strategic-merge-patch+json',
        'application/apply-patch+yaml',
      ][form - 3]!;
      if (form === 5) path += '?fieldManager=hostile&force=true';
      const patch: Obj =
        form === 5 ? marked(k, poolName, index) : { metadata: { annotations: { [MARKER]: String(index) } } };
      body = Buffer.from(`${form === 5 && r.chance(0.5) ? '# yaml\n' : ''}${withRaw(patch, where, deep)}`);
    } else if (form === 6) {
      method = 'PATCH';
      path = objectPath(k, ns, poolName);
      headers['Content-Type'] = 'application/json-patch+json';
      const target = r.chance(0.5)
        ? `/${where.join('/')}`
        : `/spec/extra${'/a'.repeat(Math.min(depth, 3000))}`;
      body = Buffer.from(
        `[{"op":"add","path":"/metadata/annotations/hostile~1i","value":"${index}"},{"op":"add","path":"${target}","value":${deep}}]`,
      );
    } else {
      method = 'PUT';
      path = objectPath(k, ns, poolName);
      headers['Content-Type'] = r.pick(['application/json', 'application/yaml']);
      body = Buffer.from(withRaw(marked(k, poolName, index), where, deep));
    }
  } else if (roll < 224) {
    // Bodies near and over the 3 MiB limit (few: a 3 MiB YAML body alone takes seconds to parse).
    category = 'huge';
    const size = r.pick([3 * MiB - 300, 3 * MiB - 1, 3 * MiB, 3 * MiB + 1, 3 * MiB + 4096, 5 * MiB]);
    const type = r.pick(['application/json', 'application/yaml', 'application/merge-patch+json']);
    method = type === 'application/merge-patch+json' ? 'PATCH' : 'POST';
    if (method === 'PATCH') path = objectPath(k, ns, poolName);
    headers['Content-Type'] = type;
    write = true;
    const obj =
      method === 'PATCH'
        ? { metadata: { annotations: { [MARKER]: String(index) } } }
        : marked(k, fresh, index);
    const shell = withRaw(
      obj,
      r.pick([
        ['data', 'big'],
        ['metadata', 'annotations', 'big'],
        ['spec', 'big'],
        // Kept by a custom resource (free-form): past etcd's 1.5 MiB limit once stored.
        ['spec', 'extra', 'big'],
      ]),
      '""',
    );
    const pad = Math.max(0, size - Buffer.byteLength(shell));
    body = Buffer.from(shell.replace('""', `"${'x'.repeat(pad)}"`));
    if (body.length > 3 * MiB) expect = Status(413, 'RequestEntityTooLarge');
  } else if (roll < 340) {
    // Bad names, in the URL and in the body.
    category = 'names';
    const bad = r.pick(BAD_NAMES);
    const form = r.int(4);
    if (form === 0) {
      method = 'POST';
      headers['Content-Type'] = 'application/json';
      body = Buffer.from(JSON.stringify(marked(k, bad, index)));
      write = true;
      // Names of these kinds are DNS subdomains: anything else is refused.
      const valid =
        bad.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(bad);
      expect = (status) =>
        status === 422 || status === 400 || (valid && (status === 201 || status === 409))
          ? undefined
          : `expected 422 for the name ${JSON.stringify(bad).slice(0, 80)}, got ${status}`;
    } else {
      method = r.pick(['GET', 'PUT', 'PATCH', 'DELETE']);
      path = objectPath(k, ns, bad);
      if (method === 'PUT' || method === 'PATCH') {
        write = true;
        headers['Content-Type'] = method === 'PUT' ? 'application/json' : 'application/merge-patch+json';
        body = Buffer.from(
          JSON.stringify(
            method === 'PUT'
              ? marked(k, bad, index)
              : { metadata: { annotations: { [MARKER]: String(index) } } },
          ),
        );
      }
    }
  } else if (roll < 430) {
    // Bad label and field selectors on lists and watches.
    category = 'selectors';
    const q: string[] = [];
    if (r.chance(0.6)) q.push(`labelSelector=${encodeURIComponent(r.pick(LABEL_SELECTORS))}`);
    if (r.chance(0.6) || q.length === 0)
      q.push(`fieldSelector=${encodeURIComponent(r.pick(FIELD_SELECTORS))}`);
    watch = r.chance(0.3);
    if (watch) q.push('watch=true', 'timeoutSeconds=1');
    path = `${objectPath(k, ns)}?${q.join('&')}`;
    expect = (status, b) =>
      status === 200 || (status === 400 && b?.reason === 'BadRequest')
        ? undefined
        : `a selector is either served or a 400 BadRequest, got ${status} ${String(b?.reason)}`;
  } else if (roll < 550) {
    // Bad, stale and huge resourceVersions.
    category = 'resourceVersion';
    const form = r.int(5);
    const stale = ctx.staleRv[`${k.resource}/${poolName}`] ?? '1';
    if (form === 0) {
      const q = [`resourceVersion=${encodeURIComponent(r.pick([...BAD_RVS, stale, '0']))}`];
      if (r.chance(0.5)) q.push(`resourceVersionMatch=${r.pick(['Exact', 'NotOlderThan'])}`);
      if (r.chance(0.3)) q.push('limit=1');
      const named = r.chance(0.3);
      const watchParam = r.chance(0.3);
      if (watchParam) q.push('watch=1', 'timeoutSeconds=1');
      // kube-apiserver reads ?watch only on collections: a named GET with it is a plain get.
      watch = watchParam && !named;
      path = `${objectPath(k, ns, named ? poolName : undefined)}?${q.join('&')}`;
    } else if (form === 1 || form === 2) {
      // A patch that names a stale resourceVersion is refused by the optimistic lock.
      method = 'PATCH';
      path = objectPath(k, HOSTILE_NS, poolName);
      headers['Content-Type'] =
        form === 1 || k.prefix.includes('example.com')
          ? 'application/merge-patch+json'
          : 'application/strategic-merge-patch+json';
      body = Buffer.from(
        JSON.stringify({ metadata: { resourceVersion: stale, annotations: { [MARKER]: String(index) } } }),
      );
      write = true;
      expect = Status(409, 'Conflict');
    } else if (form === 3) {
      method = 'PATCH';
      path = objectPath(k, HOSTILE_NS, poolName);
      headers['Content-Type'] = 'application/merge-patch+json';
      body = Buffer.from(
        JSON.stringify({
          metadata: { resourceVersion: r.pick(BAD_RVS), annotations: { [MARKER]: String(index) } },
        }),
      );
      write = true;
    } else {
      method = 'PUT';
      path = objectPath(k, HOSTILE_NS, poolName);
      headers['Content-Type'] = 'application/json';
      const o = marked(k, poolName, index);
      (o.metadata as Obj).resourceVersion = r.chance(0.5) ? stale : r.pick(BAD_RVS);
      body = Buffer.from(JSON.stringify(o));
      write = true;
      if ((o.metadata as Obj).resourceVersion === stale) expect = Status(409, 'Conflict');
    }
  } else if (roll < 650) {
    // Field names outside ASCII: unknown fields, labels, data keys, under each fieldValidation.
    category = 'non-ascii-fields';
    const key = r.pick(NON_ASCII_KEYS);
    const o = marked(k, fresh, index);
    const place = r.int(4);
    if (place === 0) o[key] = 'x';
    else if (place === 1) o.spec = { ...((o.spec as Obj) ?? {}), [key]: { [key]: 1 } };
    else if (place === 2) ((o.metadata as Obj).labels as Obj)[key] = 'v';
    else o.data = { [key]: 'v' };
    write = true;
    const form = r.int(3);
    if (form === 0) {
      method = 'POST';
      path = `${objectPath(k, ns)}?${fv()}`;
      headers['Content-Type'] = r.pick(['application/json', 'application/yaml']);
      body = Buffer.from(headers['Content-Type'] === 'application/json' ? JSON.stringify(o) : toYaml(o));
    } else if (form === 1) {
      method = 'PATCH';
      path = `${objectPath(k, ns, poolName)}?${fv()}`;
      headers['Content-Type'] = r.pick([
        'application/merge-patch+json',
        'application/strategic-merge-patch+json',
      ]);
      delete o.apiVersion;
      delete o.kind;
      (o.metadata as Obj).name = poolName;
      body = Buffer.from(JSON.stringify(o));
    } else {
      method = 'PATCH';
      path = `${objectPath(k, ns, poolName)}?${fv()}&fieldManager=hostile&force=true`;
      headers['Content-Type'] = 'application/apply-patch+yaml';
      (o.metadata as Obj).name = poolName;
      body = Buffer.from(toYaml(o));
    }
  } else if (roll < 730) {
    // Unknown and duplicate fields under each fieldValidation.
    category = 'unknown-fields';
    const validation = r.pick(['Strict', 'Warn', 'Ignore', '']);
    const o = marked(k, fresh, index);
    o.unknownTop = 1;
    (o.metadata as Obj).unknownMeta = { a: 1 };
    let text = JSON.stringify(o);
    const dup = r.chance(0.4);
    if (dup) text = text.replace('"metadata":', '"metadata":{"name":"dup"},"metadata":');
    method = 'POST';
    path = `${objectPath(k, ns)}${validation ? `?fieldValidation=${validation}` : ''}`;
    headers['Content-Type'] = 'application/json';
    body = Buffer.from(text);
    write = true;
    if (validation === 'Strict' && !k.prefix.includes('example.com')) expect = Status(400, 'BadRequest');
    else
      expect = (status, _b, h) => {
        if (status >= 500) return `got ${status}`;
        if (status === 201 && validation !== 'Ignore' && !h.warning)
          return 'unknown fields were accepted without a Warning header';
        return undefined;
      };
  } else if (roll < 790) {
    // YAML that refers to itself, or explodes.
    category = 'yaml-anchors';
    const name = fresh;
    const docs = [
      `apiVersion: ${k.apiVersion}\nkind: ${k.kind}\nmetadata: &m\n  name: ${name}\n  annotations: {"${MARKER}": "${index}"}\n  self: *m\n`,
      `apiVersion: ${k.apiVersion}\nkind: ${k.kind}\nmetadata:\n  name: ${name}\n  annotations: {"${MARKER}": "${index}"}\ndata: &d\n  k: *d\n`,
      `apiVersion: ${k.apiVersion}\nkind: ${k.kind}\nmetadata:\n  name: ${name}\n  annotations: {"${MARKER}": "${index}"}\nspec: &s [*s]\n`,
      `apiVersion: ${k.apiVersion}\nkind: ${k.kind}\nmetadata:\n  name: ${name}\n  annotations: {"${MARKER}": "${index}"}\nx: &a [*a, *a]\n`,
      `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\napiVersion: ${k.apiVersion}\nkind: ${k.kind}\nmetadata:\n  name: ${name}\n  annotations: {"${MARKER}": "${index}"}\n`,
      `base: &b\n  name: ${name}\n  annotations: {"${MARKER}": "${index}"}\napiVersion: ${k.apiVersion}\nkind: ${k.kind}\nmetadata:\n  <<: *b\n  <<: *b\n`,
      `apiVersion: ${k.apiVersion}\nkind: ${k.kind}\nmetadata:\n  name: ${name}\n  annotations: {"${MARKER}": "${index}"}\ndata: !!binary aGVsbG8=\n`,
      `apiVersion: ${k.apiVersion}\nkind: ${k.kind}\nmetadata:\n  name: ${name}\n  annotations: {"${MARKER}": "${index}"}\ndata: !custom {k: v}\n`,
    ];
    const doc = r.pick(docs);
    write = true;
    if (r.chance(0.5)) {
      method = 'POST';
      headers['Content-Type'] = 'application/yaml';
    } else {
      method = 'PATCH';
      path = `${objectPath(k, ns, name)}?fieldManager=hostile`;
      headers['Content-Type'] = 'application/apply-patch+yaml';
    }
    body = Buffer.from(doc);
  } else if (roll < 850) {
    // Methods kube-apiserver does not serve.
    category = 'methods';
    method = r.pick(UNKNOWN_METHODS);
    path = r.pick([
      objectPath(k, ns),
      objectPath(k, ns, poolName),
      '/api/v1',
      '/apis',
      '/healthz',
      '/openapi/v2',
    ]);
    if (r.chance(0.5)) {
      headers['Content-Type'] = 'application/json';
      body = Buffer.from(JSON.stringify(marked(k, poolName, index)));
    }
    write = true;
    // The API's own paths answer other methods with 405; handlers outside it (/healthz,
    // /openapi/v2) serve any method in kube-apiserver too.
    if (path.startsWith('/api'))
      expect = (status) =>
        status >= 400 && status < 500 ? undefined : `an unknown method answered ${status}`;
  } else if (roll < 900) {
    // Huge and malformed timeouts.
    category = 'timeouts';
    const t = r.pick(HUGE_TIMEOUTS);
    if (r.chance(0.6)) {
      watch = true;
      path = `${objectPath(k, ns)}?watch=true&timeoutSeconds=${encodeURIComponent(t)}`;
      // Decades are a valid timeout: such a watch stays open (it must not wrap around to 1 ms).
      if (t === '2147483648' || t === '4294967296')
        expect = (status, _b, _h, ended) =>
          status === 200 && ended ? `a watch with timeoutSeconds=${t} ended at once` : undefined;
      // Past int64: not a number kube-apiserver can read.
      if (t === '99999999999999999999' || t === '9223372036854775808' || t === '1e400')
        expect = Status(400, 'BadRequest');
    } else if (r.chance(0.5)) {
      path = `${objectPath(k, ns)}?timeoutSeconds=${encodeURIComponent(t)}&limit=2`;
    } else {
      method = 'POST';
      path = `${objectPath(k, ns)}?timeout=${encodeURIComponent(r.pick([`${t}s`, '1h', '99999999999h', 'abc', '-1s']))}`;
      headers['Content-Type'] = 'application/json';
      body = Buffer.from(JSON.stringify(marked(k, fresh, index)));
      write = true;
    }
  } else {
    // Ordinary reads and deletes of what the run made, so later requests meet existing objects.
    category = 'plain';
    const target = `hz-${r.int(index + 1)}`;
    method = r.pick(['GET', 'DELETE', 'GET']);
    path = objectPath(k, ns, r.chance(0.5) ? target : poolName);
    if (method === 'DELETE') path = objectPath(k, ns, target);
  }

  const describe = `[${category}] ${method} ${path.slice(0, 300)} [${headers['Content-Type'] ?? '-'}]${
    body ? ` body(${body.length})=${body.subarray(0, 200).toString('utf8')}` : ''
  }`;
  path = path.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
  return {
    method,
    path,
    headers,
    ...(body && { body }),
    watch,
    describe,
    category,
    write,
    ...(expect && { expect }),
  };
}
