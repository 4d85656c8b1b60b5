/**
 * `kubeloop create webhook` (kubebuilder's): a defaulter, a validator and/or a conversion for a
 * kind the project created with `create api`, in `src/webhooks/<kind>.ts` with its test, wired
 * into the webhook server of `main.ts` and the configurations `manifests.ts` writes, and
 * recorded in PROJECT. Running it again adds only what is missing: a type already scaffolded is
 * left as it is (kubebuilder refuses it instead; `--force` writes the kind's file again).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { importPath } from '../scaffold/api-templates.js';
import { camelKind, checkKind, checkVersion, lowerKind } from '../scaffold/names.js';
import {
  fullGroup,
  PROJECT_FILE,
  type ProjectResource,
  type ProjectWebhooks,
  readProjectFile,
  writeProjectFile,
} from '../scaffold/project-file.js';
import {
  addWebhookServerToMain,
  admissionHelperTs,
  conversionImport,
  MAIN_WEBHOOK_LINES,
  testBlock,
  testImports,
  type WebhookOptions,
  type WebhookType,
  webhookBlock,
  webhookFileTs,
  webhookImports,
  webhookName,
  webhooksRegistryTs,
  webhookTestTs,
} from '../scaffold/webhook-templates.js';
import { addNamedImports, insertAtMarker, insertBlock } from '../scaffold/write.js';
import { groupFlag } from './group-flag.js';
import { choose, interactive, required } from './prompt.js';

/** The flags of `create webhook`. */
export interface CreateWebhookFlags {
  group?: string;
  version?: string;
  kind?: string;
  defaulting?: boolean;
  programmaticValidation?: boolean;
  conversion?: boolean;
  /** The spoke versions of `--conversion` (the hub is `--version`). */
  spoke?: string[];
  force: boolean;
}

/** What `create webhook` did. */
export interface CreateWebhookResult {
  /** Files written or changed, relative to the project. */
  files: string[];
  /** The types asked for that the kind already had (left as they were). */
  existing: WebhookType[];
}

async function typesAsked(flags: CreateWebhookFlags): Promise<WebhookType[]> {
  const types: WebhookType[] = [];
  if (flags.defaulting) types.push('defaulting');
  if (flags.programmaticValidation) types.push('validation');
  if (flags.conversion) types.push('conversion');
  if (types.length > 0 || !interactive()) return types;
  return choose<WebhookType>('Which webhooks?', [
    { value: 'defaulting', label: 'defaulting (a defaulter: fills in what objects leave out)' },
    { value: 'validation', label: 'programmatic validation (a validator: rules the schema cannot state)' },
    { value: 'conversion', label: 'conversion (between versions of the kind, hub and spoke)' },
  ]);
}

async function readIfExists(path: string): Promise<string | undefined> {
  return existsSync(path) ? readFile(path, 'utf8') : undefined;
}

async function writeChanged(
  dir: string,
  file: string,
  before: string | undefined,
  after: string,
  out: string[],
) {
  if (before === after) return;
  await mkdir(dirname(join(dir, file)), { recursive: true });
  await writeFile(join(dir, file), after);
  out.push(file);
}

/**
 * Refuses a conversion kubeloop cannot scaffold: a kind with one version (kubebuilder asks for
 * `create api` of another version first), or whose versions are declared apart — `conversion()`
 * converts between the versions of one `defineResource({ versions })`, the hub's declaration.
 */
async function checkConversion(
  dir: string,
  hub: ProjectResource,
  kindVersions: readonly ProjectResource[],
  spokes: readonly string[],
): Promise<ProjectResource> {
  const qualified = fullGroup(hub);
  if (spokes.length === 0)
    throw new Error(
      `${hub.kind} has one version (${hub.version}): a conversion needs another: run 'kubeloop create api --group ${hub.group === '' ? "''" : hub.group} --version <other> --kind ${hub.kind} --controller=false' first`,
    );
  // The file declaring them all: the last version's, as create api writes it, or any other.
  for (const r of [...kindVersions].reverse()) {
    const text = (await readIfExists(join(dir, r.path ?? ''))) ?? '';
    const declared = (v: string) => new RegExp(`^\\s*['"]?${v}['"]?: \\{`, 'm').test(text);
    if (/\bversions: \{/.test(text) && [hub.version, ...spokes].every(declared)) return r;
  }
  const files = kindVersions.map((r) => `${r.version}: ${r.path}`).join(', ');
  throw new Error(
    `${hub.kind}'s versions are declared apart (${files}); a CRD has one declaration of all its versions, which conversion() converts between. ` +
      `Declare them in ${hub.path} as defineResource({ group: '${qualified}', kind: '${hub.kind}', versions: { ${[hub.version, ...spokes].map((v) => `${v}: { spec, status${v === hub.version ? ', storage: true' : ''} }`).join(', ')} } }) ` +
      `(the spec and status of the other files), register it once in src/resources.ts, then run this again`,
  );
}

/** Scaffolds the webhooks of a kind in the project at `dir`. */
export async function createWebhook(dir: string, flags: CreateWebhookFlags): Promise<CreateWebhookResult> {
  const project = await readProjectFile(dir);
  if (!project)
    throw new Error(
      `${dir} is not a kubeloop project (no ${PROJECT_FILE}): start one with \`kubeloop init --domain example.com\``,
    );
  const group = await groupFlag(flags.group);
  const version = checkVersion(
    await required(flags.version, '--version', 'The version of the API', {
      initial: 'v1',
      validate: checkVersion,
    }),
  );
  const kind = checkKind(
    await required(flags.kind, '--kind', 'The kind (CamelCase)', { validate: checkKind }),
  );
  const asked = await typesAsked(flags);
  if (asked.length === 0)
    throw new Error(
      'kubeloop create webhook requires at least one of --defaulting, --programmatic-validation and --conversion to be true',
    );
  const resources = project.resources ?? [];
  const sameKind = (r: ProjectResource) =>
    r.group === group && r.kind === kind && r.domain === project.domain && r.api !== undefined;
  const resource = resources.find((r) => sameKind(r) && r.version === version);
  const qualified = fullGroup({ group, domain: project.domain });
  if (!resource?.path)
    throw new Error(
      `no API found for ${qualified}/${version}, Kind ${kind}: run 'kubeloop create api --group ${group === '' ? "''" : group} --version ${version} --kind ${kind}' first`,
    );
  const versions = resources.filter(sameKind).map((r) => r.version);
  const given = (flags.spoke ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  if (given.length > 0 && !asked.includes('conversion'))
    throw new Error('--spoke needs --conversion (the spokes of the hub --version)');
  for (const s of given)
    if (s === version || !versions.includes(s)) throw new Error(`invalid spoke version "${s}"`);
  // Without --spoke, every other version of the kind: conversion() needs each to have its way to the hub.
  const spokes = given.length > 0 ? [...new Set(given)] : versions.filter((v) => v !== version);
  const declaration = asked.includes('conversion')
    ? await checkConversion(dir, resource, resources.filter(sameKind), spokes)
    : undefined;

  const had = resource.webhooks ?? {};
  const recorded: WebhookType[] = [
    ...(had.defaulting ? (['defaulting'] as const) : []),
    ...(had.validation ? (['validation'] as const) : []),
    ...(had.conversion ? (['conversion'] as const) : []),
  ];
  const existing = asked.filter((t) => recorded.includes(t));
  const added = flags.force ? asked : asked.filter((t) => !recorded.includes(t));
  const files: string[] = [];
  if (added.length === 0) return { files, existing };

  // A second version of a kind with webhooks shares its file: its names carry the version.
  const otherVersion = resources.some(
    (r) => sameKind(r) && r.version !== version && (r.webhooks?.defaulting || r.webhooks?.validation),
  );
  const value = camelKind(kind);
  const apiModule = resource.path.replace(/^src\//, '').replace(/\.ts$/, '');
  const apiSource = (await readIfExists(join(dir, resource.path))) ?? '';
  const o: WebhookOptions = {
    group: qualified,
    version,
    kind,
    apiModule,
    module: `webhooks/${lowerKind(kind)}`,
    ident: otherVersion ? `${value}${version.charAt(0).toUpperCase()}${version.slice(1)}` : value,
    value,
    fooExample: /\bfoo: Type\.Optional\(Type\.String\(/.test(apiSource),
    hub: version,
    spokes,
    ...(declaration?.path && {
      declarationModule: declaration.path.replace(/^src\//, '').replace(/\.ts$/, ''),
    }),
  };
  const file = `src/${o.module}.ts`;
  const testFile = `src/${o.module}.test.ts`;
  const all = [...new Set([...recorded, ...asked])];

  const source = await readIfExists(join(dir, file));
  if (source === undefined || flags.force) {
    await writeChanged(dir, file, source, webhookFileTs(o, flags.force ? all : added), files);
  } else {
    let text = source;
    const ownImport = `import { ${kind} } from '${importPath(o.module, apiModule)}';`;
    if (added.some((t) => t !== 'conversion') && !text.includes(ownImport))
      throw new Error(
        `${file} holds the webhooks of another version of ${kind}: the admission webhooks of ${version} need ${kind} of ${resource.path}, which it does not import. Declare them yourself (defaulter/validator of kubeloop/webhook) in a file of their own, listed in src/webhooks.ts`,
      );
    for (const t of added) {
      const name = webhookName(o, t);
      text = insertBlock(text, 'webhook', `${webhookBlock(o, t)}\n`, `export const ${name} =`);
      text = addNamedImports(text, 'kubeloop/webhook', webhookImports(t));
      const declarationImport = t === 'conversion' ? conversionImport(o) : undefined;
      if (declarationImport && !text.includes(declarationImport))
        text = text.replace(/^(import .*\n)(?!import )/m, `$1${declarationImport}\n`);
      text = insertBlock(text, 'webhooks', `  ${name},`, `  ${name},\n`);
    }
    await writeChanged(dir, file, source, text, files);
  }

  const test = await readIfExists(join(dir, testFile));
  if (test === undefined || flags.force) {
    await writeChanged(dir, testFile, test, webhookTestTs(o, flags.force ? all : added), files);
  } else {
    let text = test;
    for (const t of added) {
      const block = testBlock(o, t);
      text = insertBlock(text, 'tests', block, block.split('\n')[0]!);
      for (const [module, names] of testImports(o, t)) text = addNamedImports(text, module, names);
    }
    await writeChanged(dir, testFile, test, text, files);
  }

  const helper = 'src/testing/admission.ts';
  if (!existsSync(join(dir, helper))) await writeChanged(dir, helper, undefined, admissionHelperTs(), files);

  const registry = 'src/webhooks.ts';
  const registryBefore = await readIfExists(join(dir, registry));
  if (registryBefore === undefined) await writeChanged(dir, registry, undefined, webhooksRegistryTs(), files);
  await insertAtMarker(
    join(dir, registry),
    'imports',
    `import { webhooks as ${value}Webhooks } from './${o.module}.js';`,
  );
  await insertAtMarker(join(dir, registry), 'webhooks', `...${value}Webhooks,`);
  if (registryBefore !== undefined && registryBefore !== (await readFile(join(dir, registry), 'utf8')))
    files.push(registry);

  // The manager starts in src/start.ts (src/main.ts loads it once the heap is set), or in
  // src/main.ts itself in a project scaffolded before start.ts existed.
  const starter = existsSync(join(dir, 'src/start.ts')) ? 'src/start.ts' : 'src/main.ts';
  const main = await readIfExists(join(dir, starter));
  if (main !== undefined && !main.includes('allWebhooks')) {
    const wired = addWebhookServerToMain(main);
    if (wired === undefined)
      throw new Error(
        `${starter} does not start the manager as kubeloop init wrote it: add\n${MAIN_WEBHOOK_LINES}`,
      );
    let text = addNamedImports(wired, 'kubeloop/webhook', ['WebhookServer', 'webhookFlags']);
    text = addNamedImports(text, './webhooks.js', ['allWebhooks']);
    await writeChanged(dir, starter, main, text, files);
  }

  const manifests = await readIfExists(join(dir, 'src/manifests.ts'));
  if (manifests !== undefined && !manifests.includes('allWebhooks')) {
    // As an option of the generateManifests({ … }) call: before the permissions spread into it
    // when there is one (kubeloop init writes it last), else first.
    const spread = /^(\s*)\.\.\.createManager\(/m;
    const call = /^.*generateManifests\(\{\n/m;
    let text: string;
    if (spread.test(manifests))
      text = manifests.replace(spread, (m, indent: string) => `${indent}webhooks: allWebhooks,\n${m}`);
    else if (call.test(manifests))
      text = manifests.replace(call, (line) => `${line}  webhooks: allWebhooks,\n`);
    else
      throw new Error(
        'src/manifests.ts has no generateManifests({ … }) call: add `webhooks: allWebhooks` to it',
      );
    text = addNamedImports(text, './webhooks.js', ['allWebhooks']);
    await writeChanged(dir, 'src/manifests.ts', manifests, text, files);
  }

  const webhooks: ProjectWebhooks = {
    ...(all.includes('defaulting') && { defaulting: true }),
    ...(all.includes('validation') && { validation: true }),
    ...(all.includes('conversion') && { conversion: true }),
    ...(all.includes('conversion') && {
      spoke: [...new Set([...(had.spoke ?? []), ...(asked.includes('conversion') ? spokes : [])])],
    }),
    webhookVersion: 'v1',
  };
  project.resources = resources.map((r) => (r === resource ? { ...r, webhooks } : r));
  await writeProjectFile(dir, project);
  files.push(PROJECT_FILE);
  return { files, existing };
}
