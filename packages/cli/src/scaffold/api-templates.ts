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

/** The `defineResource` declaration, with spec and status stubs and its sample. */
export function apiTs(o: ApiOptions): string {
  const value = camelKind(o.kind);
  return `import { defineResource, type Static, Type } from 'kubeloop';

/**
 * ${o.kind} (\`${o.group}/${o.version}\`). The schema below is the kind's whole validation: the API
 * server rejects an object outside it, and \`kubeloop generate\` writes the CRD from it.
 */
export const ${o.kind} = defineResource({
  group: '${o.group}',
  version: '${o.version}',
  kind: '${o.kind}',${o.namespaced ? '' : "\n  scope: 'Cluster',"}
  description: '${o.kind} is the Schema for the ${o.plural} API.',
  // TODO: the desired state of ${withArticle(o.kind)}: its fields, each with its bounds and description.
  spec: Type.Object({
    foo: Type.Optional(Type.String({ description: 'An example field of ${o.kind}; edit or remove it.' })),
  }),
  // TODO: the observed state, written by the controller.
  status: Type.Object({
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'The generation of the spec the controller last reconciled.' }),
    ),
  }),
  printerColumns: [{ name: 'Observed', type: 'integer', jsonPath: '.status.observedGeneration' }],
});

/** ${withArticle(o.kind, true)} object, as read from the API. */
export type ${o.kind} = Static<typeof ${o.kind}>;

/** The example \`kubeloop generate\` writes to \`config/samples\` (and \`kubeloop dev\` applies). */
export const ${value}Sample: ${o.kind} = {
  apiVersion: '${o.group}/${o.version}',
  kind: '${o.kind}',
  metadata: { name: '${o.kind.toLowerCase()}-sample'${o.namespaced ? ", namespace: 'default'" : ''} },
  spec: { foo: 'bar' },
};
`;
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
