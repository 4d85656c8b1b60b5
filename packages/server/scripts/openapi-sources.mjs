// Readers for the npm packages `extract-openapi.mjs` combines (see its header for why each one).
// Both read TypeScript declarations with the TypeScript compiler API, never with regular
// expressions over the source, so that nested types (`Array<{ [key: string]: X }>`) and
// comments come out exactly as the generators wrote them.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

const require = createRequire(import.meta.url);

/**
 * The text of the `/** … *\/` comment right before `node`, without its frame: what the
 * generator put there, line breaks included (`getJSDocCommentsAndTags` would split it at any
 * `@` and drop the text of what it takes for tags, and descriptions contain e-mail addresses).
 */
function docComment(sourceText, node) {
  const ranges = ts.getLeadingCommentRanges(sourceText, node.pos) ?? [];
  const range = ranges.filter((r) => sourceText.startsWith('/**', r.pos)).at(-1);
  if (range === undefined) return undefined;
  const body = sourceText.slice(range.pos + 3, range.end - 2);
  if (!body.includes('\n')) return body.trim() || undefined;
  const lines = body.split('\n').map((line) => line.replace(/^\s*\* ?/, '').replace(/\s+$/, ''));
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines.length > 0 ? lines.join('\n') : undefined;
}

function propertyName(name) {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name)) {
    return name.text;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// @kubernetes/client-node: the models openapi-generator makes from Kubernetes' swagger.json.

/**
 * Makes `@kubernetes/client-node@<version>` available under the npm cache of this repository:
 * the installed copy when it is that version, otherwise the tarball fetched with `npm pack` (an
 * ordinary registry download) and unpacked once into `node_modules/.cache/`.
 *
 * @returns the package's root directory.
 */
export function clientNodePackage(version, repoRoot) {
  try {
    const installed = dirname(require.resolve('@kubernetes/client-node/package.json'));
    if (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version === version)
      return installed;
  } catch {
    // Not installed: fetched below.
  }
  const cache = join(repoRoot, 'node_modules/.cache/kubeloop-extract-openapi');
  const root = join(cache, `client-node-${version}`);
  if (existsSync(join(root, 'package.json'))) return root;
  mkdirSync(cache, { recursive: true });
  const tarball = execFileSync(
    'npm',
    ['pack', `@kubernetes/client-node@${version}`, '--pack-destination', cache, '--silent'],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .at(-1);
  const unpacked = join(cache, `unpack-${version}`);
  rmSync(unpacked, { recursive: true, force: true });
  mkdirSync(unpacked);
  execFileSync('tar', ['-xzf', join(cache, tarball), '-C', unpacked]);
  renameSync(join(unpacked, 'package'), root);
  rmSync(unpacked, { recursive: true, force: true });
  rmSync(join(cache, tarball));
  return root;
}

/**
 * Reads every model class of `@kubernetes/client-node`.
 *
 * The declarations give the descriptions and which properties are optional; the classes'
 * `attributeTypeMap` (runtime data the client uses to (de)serialize) gives each property's JSON
 * name, its type as openapi-generator spelled it (`number`, `Array<V1Container>`,
 * `{ [key: string]: string; }`, `Date`, `IntOrString`, `any`) and the OpenAPI `format`
 * (`int32`, `int64`, `double`, `date-time`, `byte`, `int-or-string`).
 *
 * @returns a map from class name (`V1JobSpec`) to `{ description, specVersion, properties }`
 *   where `properties` maps JSON names to `{ type, format, optional, description }`.
 */
export async function readClientNodeModels(packageRoot) {
  const dir = join(packageRoot, 'dist/gen/models');
  const models = new Map();
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.d.ts')) continue;
    const sourceText = readFileSync(join(dir, file), 'utf8');
    const source = ts.createSourceFile(file, sourceText, ts.ScriptTarget.Latest, false);
    const specVersion = /OpenAPI spec version: (\S+)/.exec(sourceText)?.[1];
    for (const statement of source.statements) {
      if (!ts.isClassDeclaration(statement) || statement.name === undefined) continue;
      const declared = new Map();
      for (const member of statement.members) {
        if (!ts.isPropertyDeclaration(member)) continue;
        if (member.modifiers?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword)) continue;
        const name = propertyName(member.name);
        if (name === undefined) continue;
        declared.set(name, {
          optional: member.questionToken !== undefined,
          description: unescapeGenerated(docComment(sourceText, member)),
        });
      }
      models.set(statement.name.text, {
        description: unescapeGenerated(docComment(sourceText, statement)),
        specVersion,
        declared,
        file: join(dir, file.replace(/\.d\.ts$/, '.js')),
      });
    }
  }
  for (const [className, model] of models) {
    const module = await import(pathToFileURL(model.file).href);
    const attributes = module[className]?.attributeTypeMap;
    if (!Array.isArray(attributes)) {
      models.delete(className);
      continue;
    }
    const properties = new Map();
    for (const a of attributes) {
      const declared = model.declared.get(a.name);
      properties.set(a.baseName, {
        type: a.type,
        format: a.format || undefined,
        optional: declared?.optional ?? true,
        description: declared?.description,
      });
    }
    models.set(className, { description: model.description, specVersion: model.specVersion, properties });
  }
  return models;
}

/**
 * openapi-generator writes descriptions as TypeScript string escapes (`pod\'s`, `\"x\"`) and
 * breaks up what could open or close a comment (`pods/*` becomes `pods/_*`).
 */
function unescapeGenerated(text) {
  return text
    ?.replace(/\\(['"\\])/g, '$1')
    .replaceAll('/_*', '/*')
    .replaceAll('*_/', '*/');
}

// ---------------------------------------------------------------------------------------------
// kubernetes-types: interfaces generated from Kubernetes' swagger.json, one file per package.

/** Package of the definitions declared in each file of kubernetes-types (path without `.d.ts`). */
function kubernetesTypesPackage(file) {
  switch (file) {
    case 'meta/v1':
      return 'io.k8s.apimachinery.pkg.apis.meta.v1';
    case 'api/resource':
      return 'io.k8s.apimachinery.pkg.api.resource';
    case 'runtime':
      return 'io.k8s.apimachinery.pkg.runtime';
    case 'version':
      return 'io.k8s.apimachinery.pkg.version';
    case 'apiextensions/v1':
      return 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1';
    default:
      return `io.k8s.api.${file.replace('/', '.')}`;
  }
}

/**
 * Reads every interface and type alias of kubernetes-types.
 *
 * Types are described as
 * `{ kind: 'string' | 'number' | 'boolean' | 'intOrString' | 'unknown' }`,
 * `{ kind: 'ref', definition }` (a definition name such as `io.k8s.apimachinery.pkg.api.resource.Quantity`),
 * `{ kind: 'array', items }` or `{ kind: 'map', values }`.
 *
 * @returns `{ version, definitions }`, `definitions` mapping definition names to
 *   `{ description, properties }` and `properties` JSON names to `{ type, optional, description }`.
 */
export function readKubernetesTypes() {
  const root = dirname(require.resolve('kubernetes-types/package.json'));
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name !== 'node_modules') walk(join(dir, entry.name));
      else if (entry.name.endsWith('.d.ts')) files.push(join(dir, entry.name));
    }
  };
  walk(root);
  const definitions = new Map();
  for (const path of files) {
    const file = relative(root, path).replace(/\.d\.ts$/, '');
    const pkg = kubernetesTypesPackage(file);
    const sourceText = readFileSync(path, 'utf8');
    const source = ts.createSourceFile(path, sourceText, ts.ScriptTarget.Latest, false);
    // Names imported from other files resolve to those files' packages.
    const imported = new Map();
    for (const statement of source.statements) {
      if (!ts.isImportDeclaration(statement)) continue;
      const from = join(dirname(file), statement.moduleSpecifier.text);
      const bindings = statement.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) {
        for (const el of bindings.elements) imported.set(el.name.text, kubernetesTypesPackage(from));
      }
    }
    const refTo = (name) => ({ kind: 'ref', definition: `${imported.get(name) ?? pkg}.${name}` });
    const typeOf = (node) => {
      switch (node.kind) {
        case ts.SyntaxKind.StringKeyword:
          return { kind: 'string' };
        case ts.SyntaxKind.NumberKeyword:
          return { kind: 'number' };
        case ts.SyntaxKind.BooleanKeyword:
          return { kind: 'boolean' };
        default:
      }
      if (ts.isArrayTypeNode(node)) return { kind: 'array', items: typeOf(node.elementType) };
      if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName)) {
        const args = node.typeArguments ?? [];
        if (node.typeName.text === 'Array' && args.length === 1)
          return { kind: 'array', items: typeOf(args[0]) };
        if (args.length === 0) return refTo(node.typeName.text);
      }
      if (ts.isUnionTypeNode(node)) {
        const kinds = node.types.map((t) => typeOf(t).kind).sort();
        if (kinds.join() === 'number,string') return { kind: 'intOrString' };
      }
      if (ts.isTypeLiteralNode(node)) {
        const index = node.members.find((m) => ts.isIndexSignatureDeclaration(m));
        if (index?.type) return { kind: 'map', values: typeOf(index.type) };
      }
      return { kind: 'unknown' };
    };
    for (const statement of source.statements) {
      if (ts.isInterfaceDeclaration(statement)) {
        const properties = new Map();
        for (const member of statement.members) {
          if (!ts.isPropertySignature(member) || member.type === undefined) continue;
          const name = propertyName(member.name);
          if (name === undefined) continue;
          properties.set(name, {
            type: typeOf(member.type),
            optional: member.questionToken !== undefined,
            description: unescapeComment(docComment(sourceText, member)),
          });
        }
        definitions.set(`${pkg}.${statement.name.text}`, {
          description: unescapeComment(docComment(sourceText, statement)),
          properties,
        });
      } else if (ts.isTypeAliasDeclaration(statement)) {
        definitions.set(`${pkg}.${statement.name.text}`, {
          description: unescapeComment(docComment(sourceText, statement)),
          alias: typeOf(statement.type),
          properties: new Map(),
        });
      }
    }
  }
  return { version, definitions };
}

/** kubernetes-types escapes what would end its comments early. */
function unescapeComment(text) {
  return text?.replaceAll('*\\/', '*/');
}
