import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { setCustomResourceDefinitionDefaults } from '../schema/crd.js';
import type { ResourceDefinition } from '../schema/define/resource.js';
import type { CustomResourceDefinition, JSONSchemaProps } from '../schema/types.js';
import { crdToTypeScript, parseCustomResourceDefinitions, schemaToTypeBox } from './typescript.js';

const SCHEMA_INDEX = fileURLToPath(new URL('../index.ts', import.meta.url));
const TESTDATA = new URL('../schema/testdata/', import.meta.url);
const FIXTURES = ['foo', 'foobar', 'genericdaemon', 'etcdcluster', 'kitchensink'] as const;
const fixtureText = (n: string) => readFileSync(new URL(`${n}-crd.yaml`, TESTDATA), 'utf8');

const dir = mkdtempSync(join(tmpdir(), 'kubeloop-crd-ts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes generated TypeScript to a module and imports it. */
async function load(source: string, name: string): Promise<Record<string, ResourceDefinition>> {
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, source);
  return (await import(/* @vite-ignore */ file)) as Record<string, ResourceDefinition>;
}

/**
 * A CRD as the API server stores it, for comparison: v1 defaults applied, `required` as a set,
 * and the standard root fields (apiVersion, kind, metadata) every generated CRD declares.
 */
function normalize(crdIn: CustomResourceDefinition): CustomResourceDefinition {
  const crd = JSON.parse(JSON.stringify(crdIn)) as CustomResourceDefinition;
  setCustomResourceDefinitionDefaults(crd);
  delete crd.status;
  const sortRequired = (s: unknown): void => {
    if (Array.isArray(s)) s.forEach(sortRequired);
    else if (s && typeof s === 'object') {
      const o = s as Record<string, unknown>;
      if (Array.isArray(o.required) && o.required.every((x) => typeof x === 'string')) o.required.sort();
      Object.values(o).forEach(sortRequired);
    }
  };
  for (const v of crd.spec.versions) {
    const root = v.schema?.openAPIV3Schema as JSONSchemaProps;
    root.properties ??= {};
    for (const f of ['apiVersion', 'kind'] as const) root.properties[f] = { type: 'string' };
    root.properties.metadata ??= { type: 'object' };
    sortRequired(root);
  }
  return crd;
}

describe('CRD → TypeScript', () => {
  it('declares a CRD with defineResource, Type and Kube', () => {
    const ts = crdToTypeScript(fixtureText('kitchensink'));
    expect(ts).toContain("import { defineResource, Kube, type Static, Type } from 'kubeloop';");
    expect(ts).toContain('export const Sink = defineResource({');
    expect(ts).toContain('export type Sink = Static<typeof Sink>;');
    expect(ts).toContain("group: 'kitchen.example.com',");
    expect(ts).toContain("shortNames: ['sk'],");
    expect(ts).toContain('spec: Type.Optional(Type.Object({');
    expect(ts).toContain("name: Type.String({ minLength: 3, maxLength: 10, pattern: '^[a-z]+$' }),");
    expect(ts).toContain(
      "replicas: Type.Optional(Type.Integer({ format: 'int32', default: 2, minimum: 0, maximum: 100, multipleOf: 2 })),",
    );
    expect(ts).toContain("color: Type.Optional(Kube.Enum(['red', 'green', 'blue'], { default: 'red' })),");
    expect(ts).toContain('ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),');
    expect(ts).toContain('port: Type.Optional(Kube.IntOrString()),');
    expect(ts).toContain('nickname: Type.Optional(Kube.Nullable(Type.String())),');
    expect(ts).toContain('template: Type.Optional(Kube.EmbeddedResource()),');
    expect(ts).toContain(
      "labels: Type.Optional(Kube.Map(Type.String(), { minProperties: 1, maxProperties: 2, 'x-kubernetes-map-type': 'granular' })),",
    );
    expect(ts).toContain("selectableFields: ['.spec.color', '.spec.enabled'],");
  });

  it('reads YAML streams and Lists, skipping other kinds', () => {
    const text = `${fixtureText('foo')}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n${JSON.stringify(
      {
        apiVersion: 'v1',
        kind: 'List',
        items: [parseCustomResourceDefinitions(fixtureText('etcdcluster'))[0]],
      },
    )}`;
    expect(parseCustomResourceDefinitions(text).map((c) => c.spec.names.kind)).toEqual([
      'Foo',
      'EtcdCluster',
    ]);
    const ts = crdToTypeScript(text);
    expect(ts.match(/^export const \w+/gm)).toEqual(['export const Foo', 'export const EtcdCluster']);
  });

  it('maps single schema nodes', () => {
    expect(schemaToTypeBox({ type: 'integer', minimum: 1 })).toBe('Type.Integer({ minimum: 1 })');
    expect(schemaToTypeBox({ type: 'string', enum: ['a', "it's"] })).toBe(`Kube.Enum(['a', 'it\\'s'])`);
    expect(schemaToTypeBox({ type: 'number', enum: [1, 2] })).toBe("Kube.Enum([1, 2], { type: 'number' })");
    expect(schemaToTypeBox({ 'x-kubernetes-preserve-unknown-fields': true })).toBe('Kube.Any()');
    expect(schemaToTypeBox({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true })).toBe(
      'Kube.PreserveUnknownFields()',
    );
    expect(
      schemaToTypeBox({
        type: 'object',
        required: ['a', 'ghost'],
        properties: { a: { type: 'string' }, b: { type: 'boolean' } },
      }),
    ).toBe(
      "Type.Object({\n  a: Type.String(),\n  b: Type.Optional(Type.Boolean()),\n}, { required: ['a', 'ghost'] })",
    );
  });

  it.each(FIXTURES)('round-trips %s: CRD → TypeScript → CRD keeps the schema', async (name) => {
    const [source] = parseCustomResourceDefinitions(fixtureText(name));
    const ts = crdToTypeScript(source!, { importFrom: SCHEMA_INDEX });
    const mod = await load(ts, name);
    const def = mod[source!.spec.names.kind]!;
    const generated = def.crd();
    expect(normalize(generated)).toEqual(normalize(source!));
    // And once more: the declaration of the generated CRD is the same declaration.
    expect(crdToTypeScript(generated, { importFrom: SCHEMA_INDEX })).toBe(ts);
  });

  it('round-trips several versions, cluster scope, top-level fields and root rules', async () => {
    const version = (name: string, storage: boolean, extra: Record<string, unknown> = {}) => ({
      name,
      served: true,
      storage,
      schema: {
        openAPIV3Schema: {
          type: 'object',
          description: `Widget ${name}`,
          required: ['data'],
          properties: {
            data: { type: 'object', additionalProperties: { type: 'string', maxLength: 10 } },
            spec: { type: 'object', properties: { a: { type: 'integer', format: 'int32' } } },
            metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 30 } } },
          },
          'x-kubernetes-validations': [{ rule: 'size(self.data) > 0', message: 'data must not be empty' }],
        },
      },
      ...extra,
    });
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.toys.example.com' },
      spec: {
        group: 'toys.example.com',
        scope: 'Cluster',
        names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'] },
        versions: [
          version('v1', true),
          version('v1alpha1', false, { deprecated: true, deprecationWarning: 'use v1', served: false }),
        ],
      },
    } as CustomResourceDefinition;
    const ts = crdToTypeScript(crd, { importFrom: SCHEMA_INDEX });
    expect(ts).toContain("scope: 'Cluster',");
    expect(ts).toContain('  versions: {\n    v1: {');
    expect(ts).toContain('        data: Kube.Map(Type.String({ maxLength: 10 })),');
    const mod = await load(ts, 'widget');
    const def = mod.Widget!;
    expect(def.namespaced).toBe(false);
    expect(def.version).toBe('v1');
    expect(normalize(def.crd())).toEqual(normalize(crd));
  });

  it('generates code that type-checks, with the static types of the kinds', async () => {
    const files: string[] = [];
    for (const name of FIXTURES) {
      const file = join(dir, `typed-${name}.ts`);
      writeFileSync(file, crdToTypeScript(fixtureText(name), { importFrom: SCHEMA_INDEX }));
      files.push(file);
    }
    // Uses of the generated types that must compile (and one that must not).
    const use = join(dir, 'use.ts');
    writeFileSync(
      use,
      [
        `import type { Sink } from './typed-kitchensink.ts';`,
        `import type { EtcdCluster } from './typed-etcdcluster.ts';`,
        `export const color: 'red' | 'green' | 'blue' | undefined = ({} as Sink).spec?.color;`,
        `export const port: number | string | undefined = ({} as Sink).spec?.port;`,
        `export const nick: string | null | undefined = ({} as Sink).spec?.nickname;`,
        `export const apiVersion: 'etcd.database.coreos.com/v1beta2' = ({} as EtcdCluster).apiVersion;`,
        `// @ts-expect-error size is a number`,
        `export const size: string | undefined = ({} as EtcdCluster).spec?.size;`,
      ].join('\n'),
    );
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: fileURLToPath(new URL('../../../../tsconfig.base.json', import.meta.url)),
        compilerOptions: {
          noEmit: true,
          composite: false,
          declaration: false,
          declarationMap: false,
          allowImportingTsExtensions: true,
          typeRoots: [fileURLToPath(new URL('../../../../node_modules/@types', import.meta.url))],
        },
        files: [...files, use],
      }),
    );
    const tsc = fileURLToPath(new URL('../../../../node_modules/typescript/bin/tsc', import.meta.url));
    const run = promisify(execFile);
    const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')]).then(
      () => ({ code: 0, out: '' }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    );
    expect(result.out).toBe('');
    expect(result.code).toBe(0);
  });
});
