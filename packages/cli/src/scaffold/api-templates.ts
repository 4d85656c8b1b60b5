/** The files of a new kind (`kubeloop create api`): its declaration, controller and the controller's test. */
import { camelKind, withArticle } from './names.js';

/** A kind being scaffolded. */
export interface ApiOptions {
  /** `group.domain`. */
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /** Where the declaration lives, relative to `src/` without extension (`api/cache/v1/memcached`). */
  apiModule: string;
  /** Where the controller lives, relative to `src/` without extension (`controller/memcached`). */
  controllerModule: string;
}

/** The path of `to` relative to the folder of `from` (both relative to `src/`), as an import specifier. */
export function importPath(from: string, to: string): string {
  const a = from.split('/').slice(0, -1);
  const b = to.split('/');
  let i = 0;
  while (i < a.length && i < b.length - 1 && a[i] === b[i]) i++;
  const up = a.length - i;
  return `${up === 0 ? './' : '../'.repeat(up)}${b.slice(i).join('/')}.js`;
}

/** Another version of the kind, declared before: where its spec and status schemas are. */
export interface OtherVersion {
  version: string;
  /** Its declaration's module, relative to `src/` without extension. */
  module: string;
}

/**
 * The declaration of a version: its spec and status schemas (kubebuilder's `<Kind>Spec` and
 * `<Kind>Status`), the `defineResource` and its sample. With `others` (the kind's versions
 * declared before), the declaration is the kind's in all its versions — one CRD, stored at the
 * first — and the one `src/resources.ts` registers.
 */
export function apiTs(o: ApiOptions, others: readonly OtherVersion[] = []): string {
  const value = camelKind(o.kind);
  const suffix = (v: string) => v.charAt(0).toUpperCase() + v.slice(1);
  const columns =
    "printerColumns: [{ name: 'Observed', type: 'integer', jsonPath: '.status.observedGeneration' }]";
  const imports = others
    .map(
      (x) =>
        `import { ${o.kind}Spec as ${o.kind}Spec${suffix(x.version)}, ${o.kind}Status as ${o.kind}Status${suffix(x.version)} } from '${importPath(o.apiModule, x.module)}';\n`,
    )
    .join('');
  const schemas = `/** The desired state of ${withArticle(o.kind)} at ${o.version} (kubebuilder's \`${o.kind}Spec\`). */
export const ${o.kind}Spec = Type.Object({
  // TODO: the fields, each with its bounds and description.
  foo: Type.Optional(Type.String({ description: 'An example field of ${o.kind}; edit or remove it.' })),
});

/** The observed state of ${withArticle(o.kind)} at ${o.version}, written by the controller (kubebuilder's \`${o.kind}Status\`). */
export const ${o.kind}Status = Type.Object({
  observedGeneration: Type.Optional(
    Type.Integer({ description: 'The generation of the spec the controller last reconciled.' }),
  ),
});
`;
  const sample = `/** The example \`kubeloop generate\` writes to \`config/samples\` (and \`kubeloop dev\` applies). */
export const ${value}Sample: ${o.kind} = {
  apiVersion: '${o.group}/${o.version}',
  kind: '${o.kind}',
  metadata: { name: '${o.kind.toLowerCase()}-sample'${o.namespaced ? ", namespace: 'default'" : ''} },
  spec: { foo: 'bar' },
};
`;
  const scope = o.namespaced ? '' : "\n  scope: 'Cluster',";
  if (others.length === 0)
    return `import { defineResource, type Static, Type } from 'kubeloop';

${schemas}
/**
 * ${o.kind} (\`${o.group}/${o.version}\`). The schemas are the kind's whole validation: the API
 * server rejects an object outside them, and \`kubeloop generate\` writes the CRD from them.
 */
export const ${o.kind} = defineResource({
  group: '${o.group}',
  version: '${o.version}',
  kind: '${o.kind}',${scope}
  description: '${o.kind} is the Schema for the ${o.plural} API.',
  spec: ${o.kind}Spec,
  status: ${o.kind}Status,
  ${columns},
});

/** ${withArticle(o.kind, true)} object, as read from the API. */
export type ${o.kind} = Static<typeof ${o.kind}>;

${sample}`;
  const stored = others[0]!.version;
  const versions = [
    ...others.map(
      (x) =>
        `    ${x.version}: {\n      spec: ${o.kind}Spec${suffix(x.version)},\n      status: ${o.kind}Status${suffix(x.version)},${x.version === stored ? '\n      storage: true,' : ''}\n      ${columns},\n    },`,
    ),
    `    ${o.version}: {\n      spec: ${o.kind}Spec,\n      status: ${o.kind}Status,\n      ${columns},\n    },`,
  ].join('\n');
  return `import { defineResource, type Static, Type } from 'kubeloop';
${imports}
${schemas}
/**
 * ${o.kind} (\`${o.group}\`) in all its versions: one CRD, stored at ${stored} (the version objects
 * exist at), every version served. The API server converts between versions by copying the
 * fields, until \`kubeloop create webhook --conversion\` scaffolds a conversion (needed once their
 * fields differ). \`src/resources.ts\` registers this declaration.
 */
export const ${o.kind} = defineResource({
  group: '${o.group}',
  kind: '${o.kind}',${scope}
  description: '${o.kind} is the Schema for the ${o.plural} API.',
  versions: {
${versions}
  },
});

const at${suffix(o.version)} = ${o.kind}.at('${o.version}');
/** ${withArticle(o.kind, true)} object at ${o.version}, as read from the API. */
export type ${o.kind} = Static<typeof at${suffix(o.version)}>;

${sample}`;
}

/** The controller with its reconcile skeleton. */
export function controllerTs(o: ApiOptions): string {
  const value = camelKind(o.kind);
  return `import { controller, writeStatus } from 'kubeloop/runtime';
import { ${o.kind} } from '${importPath(o.controllerModule, o.apiModule)}';

/**
 * Reconciles ${o.kind} objects: brings the cluster to what ${withArticle(o.kind)}'s spec asks, then reports
 * what it observed in its status. Declare what else it reads or writes (\`.owns(Deployment)\`,
 * \`.watches(…)\`, \`.needs({ … })\`): the generated RBAC grants exactly that.
 */
export const ${value}Controller = controller(${o.kind}).reconcile(async (${value}, { client, log }) => {
  // TODO: the reconcile. Read the ${o.kind}'s spec, create or update what it asks for.
  const generation = ${value}.metadata?.generation;
  const { changed } = await writeStatus(client, ${value}, { ...${value}.status, observedGeneration: generation });
  if (changed) log.info({ observedGeneration: generation }, 'reconciled');
  return undefined;
});
`;
}

/** The controller's test, on the project's test set-up. */
export function controllerTestTs(o: ApiOptions): string {
  const value = camelKind(o.kind);
  const testEnv = importPath(o.controllerModule, 'testing/env');
  const name = `test-${o.kind.toLowerCase()}`;
  const ns = o.namespaced ? ", namespace: 'default'" : '';
  return `import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ${o.kind}, ${value}Sample } from '${importPath(o.controllerModule, o.apiModule)}';
import { eventually, type OperatorTestEnv, startOperatorTestEnv } from '${testEnv}';

describe('the ${o.kind} controller', () => {
  let t: OperatorTestEnv;
  beforeAll(async () => {
    t = await startOperatorTestEnv();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('reconciles a new ${o.kind}: its status reports the generation it saw', async () => {
    // The sample of config/samples, under another name: it follows the spec as it changes.
    await t.client.create({ ...${value}Sample, metadata: { name: '${name}'${ns} } });
    const seen = await eventually(async () => {
      const live = await t.client.get(${o.kind}, '${name}'${o.namespaced ? ", { namespace: 'default' }" : ''});
      return live.status?.observedGeneration === 1 ? live : undefined;
    });
    expect(seen.spec).toEqual(${value}Sample.spec);
  });
});
`;
}
