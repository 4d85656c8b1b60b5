/**
 * The files of `kubeloop create webhook` (kubebuilder's `internal/webhook/<version>/<kind>_webhook.go`
 * and its test): one `src/webhooks/<kind>.ts` per kind with its defaulter, validator and
 * conversion from `kubeloop/webhook`, its test, and `src/webhooks.ts` listing every webhook of
 * the project for `main.ts` (the webhook server) and `manifests.ts` (the configurations).
 * Each piece is a block that a later `create webhook` of another type adds to the same file.
 */
import { importPath } from './api-templates.js';
import { withArticle } from './names.js';

/** The webhook type being scaffolded. */
export type WebhookType = 'defaulting' | 'validation' | 'conversion';

/** A kind getting webhooks. */
export interface WebhookOptions {
  /** `group.domain`. */
  group: string;
  version: string;
  kind: string;
  /** The declaration's module, relative to `src/` without extension (`api/cache/v1/memcached`). */
  apiModule: string;
  /** The webhooks' module, relative to `src/` without extension (`webhooks/memcached`). */
  module: string;
  /** The prefix of the exported names (`memcached`, or `memcachedV2` for a second version). */
  ident: string;
  /** The object's variable name in handlers (`memcached`). */
  value: string;
  /** Whether the declaration still has the example field `spec.foo` of `create api`: the skeletons use it as their example. */
  fooExample: boolean;
  /** The hub version and the spokes (`--conversion`). */
  hub?: string;
  spokes?: readonly string[];
  /**
   * With `--conversion`: the module declaring every version of the kind (one `defineResource({
   * versions })`), when it is not `apiModule`; the conversion imports it as `<Kind>Versions`.
   */
  declarationModule?: string;
}

/** The declaration the conversion is of: `<Kind>`, or `<Kind>Versions` from another module. */
export function conversionRef(o: WebhookOptions): string {
  return o.declarationModule && o.declarationModule !== o.apiModule ? `${o.kind}Versions` : o.kind;
}

/** The import of the conversion's declaration, when it is not the kind's version file. */
export function conversionImport(o: WebhookOptions): string | undefined {
  if (conversionRef(o) === o.kind) return undefined;
  return `import { ${o.kind} as ${conversionRef(o)} } from '${importPath(o.module, o.declarationModule ?? '')}';`;
}

/** The exported name of a webhook type. */
export function webhookName(o: Pick<WebhookOptions, 'ident'>, type: WebhookType): string {
  const suffix = { defaulting: 'Defaulter', validation: 'Validator', conversion: 'Conversion' }[type];
  return `${o.ident}${suffix}`;
}

/** The names each block imports from `kubeloop/webhook`. */
export function webhookImports(type: WebhookType): string[] {
  if (type === 'defaulting') return ['defaulter'];
  if (type === 'validation') return ['fieldErrors', 'type ValidationResult', 'validator'];
  return ['conversion'];
}

/** A new webhook file: header, imports, the blocks of `types`, and the list the project registers. */
export function webhookFileTs(o: WebhookOptions, types: readonly WebhookType[]): string {
  const names = [...new Set(types.flatMap(webhookImports))].sort(byName);
  return `/**
 * The webhooks of ${o.kind} (kubebuilder's \`internal/webhook/${o.version}/${o.kind.toLowerCase()}_webhook.go\`):
 * the API server calls them on each write of ${withArticle(o.kind)}, before storing it. \`kubeloop dev\`
 * registers them with the local control plane; \`kubeloop generate\` writes their configurations
 * (\`config/webhook\`) and the certificate they are served with (\`config/certmanager\`).
 */
import { ${names.join(', ')} } from 'kubeloop/webhook';
import { ${o.kind} } from '${importPath(o.module, o.apiModule)}';
${types.includes('conversion') && conversionImport(o) ? `${conversionImport(o)}\n` : ''}
${types.map((t) => webhookBlock(o, t)).join('\n')}
// +kubeloop:scaffold:webhook

/** Every webhook of this file (\`src/webhooks.ts\` registers them). */
export const webhooks = [
${types.map((t) => `  ${webhookName(o, t)},\n`).join('')}  // +kubeloop:scaffold:webhooks
];
`;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const byName = (a: string, b: string) => {
  const key = (s: string) => s.replace(/^type /, '').toLowerCase();
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
};

/** The declaration of one webhook type, as a block of the kind's file. */
export function webhookBlock(o: WebhookOptions, type: WebhookType): string {
  const v = o.value;
  const name = webhookName(o, type);
  if (type === 'defaulting') {
    const body = o.fooExample
      ? `  // TODO: set what ${withArticle(o.kind)} may leave out. An example on the field \`create api\` scaffolded:
  ${v}.spec.foo ??= 'bar';`
      : `  // TODO: set what ${withArticle(o.kind)} may leave out, e.g. \`${v}.spec.replicas ??= 1;\``;
    return `/**
 * Defaults ${withArticle(o.kind)} on create and update (controller-runtime's \`CustomDefaulter\`): change the
 * object in place; the API server gets the minimal JSON Patch. It runs before the schema is
 * checked, so it may fill in a field the schema requires.
 */
export const ${name} = defaulter(${o.kind}, (${v}) => {
${body}
});
`;
  }
  if (type === 'validation') {
    const rule = o.fooExample
      ? `  // TODO: the rules of ${withArticle(o.kind)} that its schema cannot state. An example on the field \`create api\` scaffolded:
  if (${v}.spec.foo === 'forbidden')
    return { errors: [fieldErrors.invalid('spec.foo', ${v}.spec.foo, 'an example rule: edit or remove it')] };
  return undefined;`
      : `  // TODO: the rules of ${withArticle(o.kind)} that its schema cannot state, e.g.
  // if (${v}.spec.replicas > 10) return { errors: [fieldErrors.invalid('spec.replicas', ${v}.spec.replicas, 'at most 10')] };
  void fieldErrors;
  return undefined;`;
    const check = `check${cap(o.ident)}`;
    return `/**
 * Validates ${withArticle(o.kind)} on create and update (controller-runtime's \`CustomValidator\`): answer
 * nothing to admit it, \`{ warnings }\` to admit it with warnings, \`{ errors }\` to refuse it with a
 * 422 that kubectl prints as it prints schema errors. Add \`delete(${v})\` to check deletions.
 */
export const ${name} = validator(${o.kind}, {
  create: (${v}) => ${check}(${v}),
  update: (_old, ${v}) => ${check}(${v}),
});

/** The rules ${name} applies. */
function ${check}(${v}: ${o.kind}): ValidationResult | undefined {
${rule}
}
`;
  }
  const spokeLines = (o.spokes ?? [])
    .map(
      (spoke) => `    ${spoke}: {
      // TODO: map the fields that differ between ${spoke} and ${o.hub}. As scaffolded, the fields are copied as they are.
      toHub: (old) => ({ metadata: old.metadata, spec: same(old.spec), status: same(old.status) }),
      fromHub: (hub) => ({ metadata: hub.metadata, spec: same(hub.spec), status: same(hub.status) }),
    },`,
    )
    .join('\n');
  return `/**
 * Converts ${withArticle(o.kind)} between its versions, hub and spoke (controller-runtime's \`conversion.Hub\`
 * and \`Convertible\`): ${o.hub} is the hub, each spoke says how to go to it and back; one spoke goes
 * to another through the hub. The API server calls it when a client reads or writes a version
 * other than the stored one. Test that nothing is lost with \`expectRoundTrip\`.
 */
export const ${name} = conversion(${conversionRef(o)}, {
  hub: '${o.hub}',
  spokes: {
${spokeLines}
  },
});

/** The fields a spoke shares with the hub, copied as they are (replace it as the versions drift apart). */
function same<T>(fields: unknown): T {
  return structuredClone(fields) as T;
}
`;
}

/** The kind's webhook test (kubebuilder's `<kind>_webhook_test.go`): each webhook answering a review. */
export function webhookTestTs(o: WebhookOptions, types: readonly WebhookType[]): string {
  const imports = new Map<string, string[]>();
  for (const t of types)
    for (const [module, names] of testImports(o, t))
      imports.set(module, [...(imports.get(module) ?? []), ...names]);
  const order = (m: string) => (m === 'vitest' ? 0 : m.startsWith('.') ? 2 : 1);
  const lines = [...imports]
    .sort(([a], [b]) => order(a) - order(b) || (a < b ? -1 : 1))
    .map(([module, names]) => `import { ${[...new Set(names)].sort(byName).join(', ')} } from '${module}';`);
  return `${lines.join('\n')}

// The sample of config/samples is what each test starts from.
describe('the ${o.kind} webhooks', () => {
${types.map((t) => testBlock(o, t)).join('\n')}  // +kubeloop:scaffold:tests
});
`;
}

/** What the test of one webhook type imports, by module. */
export function testImports(o: WebhookOptions, type: WebhookType): Array<[string, string[]]> {
  const own = `./${o.module.split('/').at(-1)}.js`;
  const sample: [string, string[]] = [importPath(o.module, o.apiModule), [`${o.value}Sample`]];
  if (type === 'conversion')
    return [
      ['vitest', ['describe', 'it']],
      ['kubeloop/webhook', ['expectRoundTrip']],
      sample,
      [own, [webhookName(o, type)]],
    ];
  return [
    ['vitest', ['describe', 'expect', 'it']],
    sample,
    [importPath(o.module, 'testing/admission'), ['admit']],
    [own, [webhookName(o, type)]],
  ];
}

/** The test of one webhook type. */
export function testBlock(o: WebhookOptions, type: WebhookType): string {
  const name = webhookName(o, type);
  const sample = `${o.value}Sample`;
  if (type === 'defaulting') {
    if (o.fooExample)
      return `  it('defaults spec.foo of ${withArticle(o.kind)} that leaves it out', async () => {
    const answer = await admit(${name}, 'CREATE', {
      ...${sample},
      spec: { ...${sample}.spec, foo: undefined },
    });
    expect(answer.allowed).toBe(true);
    expect(answer.object?.spec.foo).toBe('bar');
  });
`;
    return `  it('admits the sample, defaulted', async () => {
    const answer = await admit(${name}, 'CREATE', ${sample});
    expect(answer.allowed).toBe(true);
  });
`;
  }
  if (type === 'validation') {
    const refused = o.fooExample
      ? `
    const refused = await admit(${name}, 'CREATE', {
      ...${sample},
      spec: { ...${sample}.spec, foo: 'forbidden' },
    });
    expect(refused.allowed).toBe(false);
    expect(refused.message).toContain('spec.foo: Invalid value: "forbidden"');`
      : '';
    return `  it('admits a valid ${o.kind}${o.fooExample ? ' and refuses an invalid one with a field error' : ''}', async () => {
    expect((await admit(${name}, 'CREATE', ${sample})).allowed).toBe(true);
    expect((await admit(${name}, 'UPDATE', ${sample}, ${sample})).allowed).toBe(true);${refused}
  });
`;
  }
  return `  it('converts ${withArticle(o.kind)} to each spoke and back, losing nothing', () => {
    expectRoundTrip(${name}, [${sample}]);
  });
`;
}

/** `src/testing/admission.ts`: a webhook answering one review, as the API server would call it. */
export function admissionHelperTs(): string {
  return `/**
 * Calls an admission webhook as the API server does — one AdmissionReview, through the same
 * code the webhook server runs — and gives back its answer with the patch applied.
 */
import type { KubeObject } from 'kubeloop/client';
import { type AdmissionWebhook, answerAdmission, applyJsonPatch, type Operation } from 'kubeloop/webhook';

/** A webhook's answer to one review. */
export interface Admission<T> {
  readonly allowed: boolean;
  /** The object as it would be stored (a defaulter's patch applied); undefined when refused. */
  readonly object: T | undefined;
  /** The refusal's message, as kubectl prints it. */
  readonly message: string;
  readonly warnings: readonly string[];
}

/** Sends \`object\` (and \`oldObject\` for an UPDATE) to \`webhook\` as an AdmissionReview. */
export async function admit<T extends KubeObject>(
  webhook: AdmissionWebhook,
  operation: Operation,
  object: T,
  oldObject?: T,
): Promise<Admission<T>> {
  const [group, version] = object.apiVersion?.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
  const request = {
    uid: 'test',
    kind: { group: group ?? '', version: version ?? '', kind: object.kind ?? '' },
    resource: { group: group ?? '', version: version ?? '', resource: webhook.target.plural },
    name: object.metadata?.name ?? '',
    namespace: object.metadata?.namespace ?? '',
    operation,
    userInfo: { username: 'test' },
    ...(operation === 'DELETE' ? { oldObject: object } : { object, ...(oldObject && { oldObject }) }),
  };
  const review = await answerAdmission(
    webhook,
    Buffer.from(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request })),
    'application/json',
    { timeoutMs: 10_000 },
  );
  const response = review.response;
  if (!response) throw new Error('the webhook answered no response');
  const patch = response.patch ? JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) : [];
  return {
    allowed: response.allowed,
    object: response.allowed ? applyJsonPatch(object, patch) : undefined,
    message: response.status?.message ?? '',
    warnings: response.warnings ?? [],
  };
}
`;
}

/** `src/webhooks.ts`: every webhook of the project (\`kubeloop create webhook\` adds each kind's here). */
export function webhooksRegistryTs(): string {
  return `import type { AdmissionWebhook, ConversionWebhook } from 'kubeloop/webhook';
// +kubeloop:scaffold:imports

/**
 * Every webhook of the project: \`main.ts\` serves them, \`manifests.ts\` writes their
 * configurations (\`config/webhook\`) and marks the CRDs whose conversion they do.
 */
export const allWebhooks: Array<AdmissionWebhook | ConversionWebhook> = [
  // +kubeloop:scaffold:webhooks
];
`;
}

/**
 * `main.ts` with the webhook server: its flags read first (the rest go to the manager), the server
 * run by the manager. Undefined when `main` does not start the manager as `kubeloop init` wrote it.
 */
export function addWebhookServerToMain(main: string): string | undefined {
  const start = /^await createManager\(managerFlags\(process\.argv\.slice\(2\)(.*)\)\)\.start\(\);$/m;
  const m = start.exec(main);
  if (!m) return undefined;
  const body = `// The webhook server's flags (--webhook-port, --webhook-cert-path, …) first, the manager's from the rest;
// ENABLE_WEBHOOKS=false runs the operator without its webhooks.
const hooks = webhookFlags(process.argv.slice(2));
const manager = createManager(managerFlags(hooks.rest${m[1]}));
if (hooks.enabled) new WebhookServer(hooks.options).register(...allWebhooks).setupWithManager(manager);
await manager.start();`;
  return main.replace(start, () => body);
}

/** The lines to add to a `main.ts` that {@link addWebhookServerToMain} could not change. */
export const MAIN_WEBHOOK_LINES = `import { WebhookServer, webhookFlags } from 'kubeloop/webhook';
import { allWebhooks } from './webhooks.js';
const hooks = webhookFlags(process.argv.slice(2)); // then managerFlags(hooks.rest, …)
if (hooks.enabled) new WebhookServer(hooks.options).register(...allWebhooks).setupWithManager(manager);`;
