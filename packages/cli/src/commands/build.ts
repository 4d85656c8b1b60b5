/**
 * `kubeloop build [dir]`: the image of an operator project for the local control plane, with no
 * Docker: the project compiled, then its `package.json` and `dist/` copied into the local image
 * store (`$KUBELOOP_IMAGE_STORE`, else `~/.kubeloop/images`) as `kubeloop.local/<name>:<tag>`,
 * with its `node_modules` linked (the nearest one up from the project, as Node.js resolves them)
 * and an `image.json` saying how it starts (`node <main>`). A pod of the local control plane
 * whose image is `kubeloop.local/<name>:<tag>` then runs as a process of this machine.
 *
 * Each build is stored under `latest` (or `--tag`) and under a tag of its content
 * (`sha-<12 hex>`), which is what a Deployment should name to roll out a new build.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';

interface BuildFlags {
  tag: string;
  name?: string;
  compile: boolean;
  store?: string;
}

/** The name of the image of a package: its name without scope, lower case. */
function imageName(pkgName: string): string {
  return (
    pkgName
      .replace(/^@[^/]+\//, '')
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-') || 'operator'
  );
}

/** How the project starts: `node <file>` of its `start` script, else of `main`, else `dist/main.js`. */
function entrypoint(pkg: { main?: string; scripts?: Record<string, string> }): string[] {
  const start = /^node\s+(\S+)\s*$/.exec(pkg.scripts?.start ?? '');
  return ['node', start?.[1] ?? pkg.main ?? 'dist/main.js'];
}

/**
 * Whether a file of `dist/` is not part of the image: `dist/install.yaml`, which `kubeloop deploy`
 * renders there naming the image (in the digest, every deploy would make a new content tag), and
 * TypeScript's build info (it changes with every compile, not with the code).
 */
function notInImage(src: string, dist: string): boolean {
  return src === join(dist, 'install.yaml') || src.endsWith('.tsbuildinfo');
}

/** A digest of every file of a directory tree (names and contents) that goes into the image. */
function digest(dir: string, h = createHash('sha256'), base = dir): ReturnType<typeof createHash> {
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (notInImage(path, base)) continue;
    if (statSync(path).isDirectory()) digest(path, h, base);
    else h.update(relative(base, path)).update('\0').update(readFileSync(path)).update('\0');
  }
  return h;
}

/** The nearest `node_modules` from `dir` up, as Node.js looks for packages. */
function nearestNodeModules(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) return join(d, 'node_modules');
    if (dirname(d) === d) return undefined;
  }
}

/** Writes one tag of the image. */
function writeTag(
  at: string,
  project: string,
  pkgText: string,
  image: object,
  modules: string | undefined,
): void {
  rmSync(at, { recursive: true, force: true });
  const app = join(at, 'app');
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), pkgText);
  const dist = join(project, 'dist');
  cpSync(dist, join(app, 'dist'), { recursive: true, filter: (src) => !notInImage(src, dist) });
  if (modules) symlinkSync(modules, join(app, 'node_modules'));
  writeFileSync(join(at, 'image.json'), `${JSON.stringify(image, null, 2)}\n`);
}

/** Where `kubeloop build` stores images: `--store`, else `$KUBELOOP_IMAGE_STORE`, else `~/.kubeloop/images`. */
export function imageStore(flag?: string): string {
  return resolve(flag ?? (process.env.KUBELOOP_IMAGE_STORE || join(homedir(), '.kubeloop', 'images')));
}

/** What {@link storeImage} stored: the image under its content tag, and under the given tag. */
export interface StoredImage {
  /** `kubeloop.local/<name>:sha-<12 hex>`: what a Deployment names to roll out exactly this build. */
  content: string;
  /** `kubeloop.local/<name>:<tag>`. */
  tagged: string;
}

/**
 * Stores the compiled project (its `dist/`, which must exist) as an image of the local store.
 *
 * @example
 * ```ts
 * const { content } = storeImage('/src/foo-operator', { tag: 'latest' }); // kubeloop.local/foo-operator:sha-…
 * ```
 */
export function storeImage(
  project: string,
  o: { tag?: string; name?: string; store?: string } = {},
): StoredImage {
  const pkgText = readFileSync(join(project, 'package.json'), 'utf8');
  const pkg = JSON.parse(pkgText) as { name?: string; main?: string; scripts?: Record<string, string> };
  if (!existsSync(join(project, 'dist'))) throw new Error(`${project} has no dist/ to store`);
  const store = imageStore(o.store);
  const name = o.name ?? imageName(pkg.name ?? 'operator');
  const tag = o.tag ?? 'latest';
  // USER as kubebuilder's Dockerfile (distroless nonroot): what runAsNonRoot is checked against.
  const image = { dir: 'app', entrypoint: entrypoint(pkg), workingDir: '/app', user: '65532:65532' };
  const content = digest(join(project, 'dist')).update(pkgText).digest('hex').slice(0, 12);
  const modules = nearestNodeModules(project);
  for (const t of new Set([tag, `sha-${content}`]))
    writeTag(join(store, name, t), project, pkgText, image, modules);
  return { content: `kubeloop.local/${name}:sha-${content}`, tagged: `kubeloop.local/${name}:${tag}` };
}

/** Registers `kubeloop build`. */
export function registerBuildCommand(program: Command): void {
  program
    .command('build')
    .description('build the image of an operator project into the local image store (kubeloop.local/<name>)')
    .argument('[dir]', 'the operator project', '.')
    .option('--tag <tag>', 'the tag to store besides the content tag', 'latest')
    .option('--name <name>', 'the image name (default: the package name without its scope)')
    .option('--no-compile', 'store dist/ as it is, without running the build script first')
    .option('--store <dir>', 'the local image store (default: $KUBELOOP_IMAGE_STORE or ~/.kubeloop/images)')
    .action((dirArg: string, flags: BuildFlags) => {
      const project = resolve(dirArg);
      const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
        scripts?: Record<string, string>;
      };
      if (flags.compile && pkg.scripts?.build) {
        const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: project, stdio: 'inherit' });
        if (r.status !== 0) throw new Error(`the build of ${project} failed`);
      }
      const stored = storeImage(project, {
        tag: flags.tag,
        ...(flags.name !== undefined && { name: flags.name }),
        ...(flags.store !== undefined && { store: flags.store }),
      });
      process.stdout.write(`${stored.content}\n${stored.tagged}\n`);
    });
}
