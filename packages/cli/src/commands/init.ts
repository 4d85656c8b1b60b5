import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { generateManifests, writeGeneratedFiles } from 'kubeloop/manifests';
import {
  gitignore,
  type KubeloopSource,
  mainTs,
  managerTs,
  manifestsTs,
  packageJson,
  readme,
  resourcesTs,
  startTs,
  testEnvTs,
  tsconfigJson,
  vitestConfigTs,
} from '../scaffold/init-templates.js';
import { checkLabel, checkSubdomain, projectNameFrom } from '../scaffold/names.js';
import { PROJECT_FILE, readProjectFile, writeProjectFile } from '../scaffold/project-file.js';
import { writeNewFiles } from '../scaffold/write.js';
import { required } from './prompt.js';

/** The version of kubeloop's packages this CLI belongs to (the default of `--kubeloop`). */
export const KUBELOOP_VERSION = '0.1.0';
/** TypeScript and @types/node of a new project: those kubeloop itself is built and tested with. */
export const TYPESCRIPT_RANGE = '~6.0.3';
export const TYPES_NODE_RANGE = '^20.19.43';
/** vitest of a new project: the one kubeloop's own tests run on. */
export const VITEST_RANGE = '^4.1.12';

/** The scaffolding's layout name, recorded in the project file. */
export const LAYOUT = 'kubeloop.dev/v1alpha1';

interface InitFlags {
  domain?: string;
  name?: string;
  kubeloop?: string;
  install: boolean;
  force: boolean;
}

/**
 * How a project depends on kubeloop: `--kubeloop 0.1.0` (a version or range, from the registry)
 * or `--kubeloop path/to/tarballs` (the folder `npm run pack` fills: `kubeloop-<v>.tgz`,
 * `kubeloop-server-<v>.tgz`, `kubeloop-cli-<v>.tgz`).
 */
export function kubeloopSource(spec: string | undefined, cwd = process.cwd()): KubeloopSource {
  const value = spec ?? KUBELOOP_VERSION;
  const path = resolve(cwd, value);
  const looksLikePath = value.includes('/') || value.startsWith('.') || existsSync(path);
  if (!looksLikePath) return { kubeloop: value, server: value, cli: value, overrides: false };
  if (!existsSync(path) || !statSync(path).isDirectory())
    throw new Error(`--kubeloop ${value}: no such folder of tarballs (npm run pack writes them)`);
  const files = readdirSync(path);
  const find = (prefix: string) => {
    const re = new RegExp(`^${prefix}-\\d+\\.\\d+\\.\\d+[^/]*\\.tgz$`);
    const hits = files.filter((f) => re.test(f)).sort();
    const hit = hits.at(-1);
    if (!hit)
      throw new Error(`--kubeloop ${value}: no ${prefix}-<version>.tgz in ${path} (npm run pack writes it)`);
    return `file:${join(path, hit)}`;
  };
  // A tarball's dependents (the server and the CLI need `kubeloop@<version>`) would otherwise
  // look for it in the registry: overrides pin them to the tarball.
  return {
    kubeloop: find('kubeloop'),
    server: find('kubeloop-server'),
    cli: find('kubeloop-cli'),
    overrides: true,
  };
}

/** Runs `npm install` in `dir`, its output passed through. */
export function npmInstall(dir: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const child = spawn(npm, ['install', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolvePromise() : reject(new Error(`npm install failed in ${dir} (exit ${code})`)),
    );
  });
}

/** `kubeloop init [dir] --domain D [--name N] [--kubeloop V|PATH]`: a new operator project. */
export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description(
      'start a new operator project (kubebuilder init): package.json, tsconfig, manager, tests, PROJECT',
    )
    .argument('[dir]', 'the project folder (created when missing)', '.')
    .option('--domain <domain>', 'the domain of the API groups (group.domain), e.g. example.com')
    .option('--name <name>', "the project's name (default: the folder's name)")
    .option(
      '--kubeloop <version|path>',
      `where kubeloop comes from: a version (default ${KUBELOOP_VERSION}) or a folder of npm pack tarballs`,
    )
    .option('--no-install', 'do not run npm install')
    .option('--force', 'write over existing files', false)
    .action(async (dirArg: string, flags: InitFlags) => {
      const dir = resolve(dirArg);
      if (!flags.force && (await readProjectFile(dir).catch(() => undefined)))
        throw new Error(
          `${dir} already has a ${PROJECT_FILE}: it is a kubeloop project (--force to scaffold again)`,
        );
      const domain = checkSubdomain(
        '--domain',
        await required(flags.domain, '--domain', 'The domain of your API groups', {
          placeholder: 'example.com',
          validate: (v) => checkSubdomain('--domain', v),
        }),
      );
      const name = checkLabel('--name', flags.name ?? projectNameFrom(basename(dir)));
      const source = kubeloopSource(flags.kubeloop);
      const o = {
        name,
        domain,
        source,
        typescript: TYPESCRIPT_RANGE,
        typesNode: TYPES_NODE_RANGE,
        vitest: VITEST_RANGE,
      };
      await mkdir(dir, { recursive: true });
      const written = await writeNewFiles(
        dir,
        {
          'package.json': packageJson(o),
          'tsconfig.json': tsconfigJson(),
          'vitest.config.ts': vitestConfigTs(),
          'src/main.ts': mainTs(),
          'src/start.ts': startTs(),
          'src/manager.ts': managerTs(o),
          'src/resources.ts': resourcesTs(),
          'src/manifests.ts': manifestsTs(),
          'src/testing/env.ts': testEnvTs(),
          '.gitignore': gitignore(),
          'README.md': readme(o),
        },
        flags.force,
      );
      await writeProjectFile(dir, {
        version: '1',
        layout: [LAYOUT],
        domain,
        projectName: name,
        resources: [],
      });
      // config/ (kustomize) and the Dockerfile as `kubeloop generate` writes them for a project
      // with no kind yet (what src/manifests.ts gives before `create api`), with no build needed.
      const generated = generateManifests({
        name,
        image: `${name}:latest`,
        resources: [],
        controllers: [],
        leaderElection: true,
        events: true,
      });
      await writeGeneratedFiles(dir, generated);
      for (const f of [...written, PROJECT_FILE, ...generated.map((g) => g.path)])
        process.stdout.write(`wrote ${f}\n`);
      if (flags.install) await npmInstall(dir);
      const cd = dirArg === '.' ? '' : dirArg;
      process.stdout.write(
        `\n${name} is ready. Next:\n${cd ? `  cd ${cd}\n` : ''}${flags.install ? '' : '  npm install\n'}  npx kubeloop create api --group <group> --version v1 --kind <Kind>\n  npx kubeloop dev\n`,
      );
    });
}
