import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  type ApiOptions,
  apiTs,
  controllerTestTs,
  controllerTs,
  importPath,
  type OtherVersion,
} from '../scaffold/api-templates.js';
import { camelKind, checkKind, checkVersion, lowerKind, pluralFor } from '../scaffold/names.js';
import {
  fullGroup,
  PROJECT_FILE,
  type ProjectResource,
  readProjectFile,
  writeProjectFile,
} from '../scaffold/project-file.js';
import { insertAtMarker, writeNewFiles } from '../scaffold/write.js';
import { type CreateWebhookFlags, createWebhook } from './create-webhook.js';
import { groupFlag } from './group-flag.js';
import { confirm, required } from './prompt.js';

interface CreateApiFlags {
  group?: string;
  version?: string;
  kind?: string;
  plural?: string;
  namespaced: boolean;
  resource?: boolean;
  controller?: boolean;
  force: boolean;
}

/** `--flag`, `--flag=true|false`, `--no-flag`: commander's optional value as a boolean. */
function bool(flag: string) {
  return (value: string | undefined): boolean => {
    if (value === undefined || value === 'true') return true;
    if (value === 'false') return false;
    throw new Error(`${flag} takes true or false, got ${JSON.stringify(value)}`);
  };
}

/** Scaffolds a kind in the project at `dir`; returns the files written. */
export async function createApi(dir: string, flags: CreateApiFlags): Promise<string[]> {
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
    await required(flags.kind, '--kind', 'The kind (CamelCase)', {
      placeholder: 'Memcached',
      validate: checkKind,
    }),
  );
  const resources = project.resources ?? [];
  const same = (r: ProjectResource) => r.group === group && r.kind === kind && r.domain === project.domain;
  // Another version of a kind with a controller gets none unless asked: one controller per kind.
  const hasController = resources.some((r) => same(r) && r.controller);
  const withResource = await confirm(flags.resource, `Create the ${kind} resource (its CRD)?`, true);
  const withController = await confirm(flags.controller, `Create a controller for ${kind}?`, !hasController);
  if (!withResource && !withController)
    throw new Error('nothing to create: both --resource and --controller are false');
  const existing = resources.find((r) => same(r) && r.version === version);
  if (withResource && existing?.api && !flags.force)
    throw new Error(
      `${kind} ${group}.${project.domain}/${version} already exists in ${PROJECT_FILE} (--force to scaffold it again)`,
    );
  if (withController && resources.some((r) => same(r) && r.controller) && !flags.force)
    throw new Error(`${kind} already has a controller (--force to scaffold it again)`);

  const apiModule = withResource
    ? `api/${group === '' ? '' : `${group}/`}${version}/${lowerKind(kind)}`
    : resources
        .find((r) => same(r) && r.path)
        ?.path?.replace(/^src\//, '')
        .replace(/\.ts$/, '');
  if (!apiModule)
    throw new Error(
      `${kind} is not a resource of this project: create it with --resource (or leave --resource out)`,
    );
  // The kind's versions declared before: this one joins them in one CRD (same scope and plural).
  const others = withResource
    ? resources.filter((r) => same(r) && r.api && r.path && r.version !== version)
    : [];
  const namespaced =
    withResource && others.length === 0
      ? flags.namespaced
      : (resources.find((r) => same(r) && r.api)?.api?.namespaced ?? true);
  const otherVersions: OtherVersion[] = [];
  for (const r of others) {
    const module = r.path!.replace(/^src\//, '').replace(/\.ts$/, '');
    const text = await readFile(join(dir, r.path!), 'utf8').catch(() => '');
    if (!text.includes(`export const ${kind}Spec =`) || !text.includes(`export const ${kind}Status =`))
      throw new Error(
        `${kind} ${r.version} (${r.path}) does not export ${kind}Spec and ${kind}Status: the new version's declaration needs them to declare every version of the kind in one CRD. Export them from it (the schemas of its spec and status), then run this again`,
      );
    otherVersions.push({ version: r.version, module });
  }
  const o: ApiOptions = {
    group: fullGroup({ group, domain: project.domain }),
    version,
    kind,
    plural: others[0]?.plural ?? flags.plural ?? pluralFor(kind),
    namespaced,
    apiModule,
    controllerModule: `controller/${lowerKind(kind)}`,
  };
  const files: Record<string, string> = {};
  if (withResource) files[`src/${apiModule}.ts`] = apiTs(o, otherVersions);
  if (withController) {
    files[`src/${o.controllerModule}.ts`] = controllerTs(o);
    files[`src/${o.controllerModule}.test.ts`] = controllerTestTs(o);
  }
  const written = await writeNewFiles(dir, files, flags.force);

  const value = camelKind(kind);
  if (withResource) {
    const file = join(dir, 'src/resources.ts');
    // The declaration of every version replaces the one registered before (a CRD is registered once).
    if (otherVersions.length > 0) {
      const text = await readFile(file, 'utf8');
      const registered = [
        ...otherVersions.map(
          (x) => `import { ${kind}, ${value}Sample } from '${importPath('resources', x.module)}';`,
        ),
        `{ resource: ${kind}, sample: ${value}Sample },`,
      ];
      const kept = text.split('\n').filter((l) => !registered.includes(l.trim()));
      await writeFile(file, kept.join('\n'));
    }
    await insertAtMarker(
      file,
      'imports',
      `import { ${kind}, ${value}Sample } from '${importPath('resources', apiModule)}';`,
    );
    await insertAtMarker(file, 'resources', `{ resource: ${kind}, sample: ${value}Sample },`);
  }
  if (withController) {
    const file = join(dir, 'src/manager.ts');
    await insertAtMarker(
      file,
      'imports',
      `import { ${value}Controller } from '${importPath('manager', o.controllerModule)}';`,
    );
    await insertAtMarker(file, 'controllers', `manager.add(${value}Controller);`);
  }

  const entry: ProjectResource = {
    ...(existing ?? {}),
    group,
    version,
    kind,
    domain: project.domain,
    plural: o.plural,
    ...(withResource && { path: `src/${apiModule}.ts`, api: { crdVersion: 'v1' as const, namespaced } }),
    ...(withController && { controller: true }),
  };
  project.resources = [...resources.filter((r) => r !== existing), entry];
  await writeProjectFile(dir, project);
  return [
    ...written,
    ...(withResource ? ['src/resources.ts'] : []),
    ...(withController ? ['src/manager.ts'] : []),
    PROJECT_FILE,
  ];
}

/** `kubeloop create api --group G --version V --kind K`: a new kind with its controller. */
export function registerCreateCommand(program: Command): void {
  const create = program.command('create').description('scaffold a new API (kubebuilder create)');
  create
    .command('api')
    .description('scaffold a kind: its defineResource declaration, a controller with its test, its sample')
    .option('--group <group>', 'the group, without the domain (the API group is <group>.<domain>)')
    .option('--version <version>', 'the version: v1, v1alpha1, …')
    .option('--kind <Kind>', 'the kind, CamelCase')
    .option('--plural <plural>', 'the plural of the resource (default: derived from the kind)')
    .option(
      '--namespaced [bool]',
      'whether objects live in namespaces (default true)',
      bool('--namespaced'),
      true,
    )
    .option('--resource [bool]', 'scaffold the resource (its declaration and CRD)', bool('--resource'))
    .option('--controller [bool]', 'scaffold a controller', bool('--controller'))
    .option('--force', 'write over existing files', false)
    .option('-C, --dir <dir>', 'the project (default: the current folder)', '.')
    .action(async (flags: CreateApiFlags & { dir: string }) => {
      const dir = resolve(flags.dir);
      const written = await createApi(dir, flags);
      for (const f of written)
        process.stdout.write(`${existsSync(join(dir, f)) ? 'wrote' : 'updated'} ${f}\n`);
      process.stdout.write(
        'Next: edit the spec and the reconcile, then `kubeloop generate` (or `kubeloop dev`).\n',
      );
    });
  create
    .command('webhook')
    .description(
      'scaffold webhooks of a kind made with create api: a defaulter, a validator and/or a conversion, with their test',
    )
    .option('--group <group>', "the kind's group, without the domain")
    .option('--version <version>', "the kind's version (the hub, with --conversion)")
    .option('--kind <Kind>', 'the kind, CamelCase')
    .option('--defaulting', 'scaffold a defaulter (a mutating webhook)')
    .option('--programmatic-validation', 'scaffold a validator (a validating webhook)')
    .option('--conversion', 'scaffold the conversion between the versions of the kind (--version is the hub)')
    .option(
      '--spoke <versions>',
      'with --conversion: the other versions, comma-separated',
      (v: string, all: string[] = []) => [...all, v],
    )
    .option('--force', "write the kind's webhook file and its test again", false)
    .option('-C, --dir <dir>', 'the project (default: the current folder)', '.')
    .action(async (flags: CreateWebhookFlags & { dir: string }) => {
      const dir = resolve(flags.dir);
      const { files, existing } = await createWebhook(dir, flags);
      for (const t of existing)
        process.stdout.write(
          `${t} webhook already exists for ${flags.kind}: left as it is (--force to scaffold it again)\n`,
        );
      for (const f of files) process.stdout.write(`wrote ${f}\n`);
      if (files.length > 0)
        process.stdout.write(
          'Next: implement your webhooks, then `kubeloop generate` (or `kubeloop dev`, which registers them).\n',
        );
    });
}
