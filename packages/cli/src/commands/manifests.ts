/**
 * kubebuilder's `make manifests`, `make install`/`uninstall` and `make deploy`/`undeploy`:
 * `config/` regenerated from the code, the CRDs into the current kubeconfig's cluster, and the
 * whole operator (the kustomize layout, rendered by kubeloop as `dist/install.yaml`).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  Client,
  CustomResourceDefinition,
  isNotFound,
  type KubeObject,
  loadKubeconfig,
} from 'kubeloop/client';
import { type Manifest, standInForCertManager } from 'kubeloop/manifests';
import { parseAllDocuments } from 'yaml';
import { imageStore, storeImage } from './build.js';
import { applyObjects, buildProject, buildProjectImage, installCrds, readProjectCrds } from './project.js';

/** Runs the project's generator (`dist/manifests.js`); rejects with its output when it fails. */
function runGenerator(dir: string, image: string | undefined): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(dir, 'dist/manifests.js')], {
      cwd: dir,
      env: { ...process.env, ...(image && { IMG: image }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolvePromise(output)
        : reject(new Error(`the generator failed (node dist/manifests.js):\n${output.trimEnd()}`)),
    );
  });
}

/**
 * Builds the project and regenerates `config/` (and `dist/install.yaml`, the Dockerfile) from its
 * declarations: the project's `src/manifests.ts`, which `kubeloop init` scaffolds.
 */
export async function generate(
  dir: string,
  options: { image?: string; compiled?: boolean } = {},
): Promise<string[]> {
  if (!existsSync(join(dir, 'src/manifests.ts')))
    throw new Error(
      `${dir} has no src/manifests.ts to generate config/ from (kubeloop init scaffolds it; see kubeloop/manifests' generateManifests)`,
    );
  if (!options.compiled) await buildProject(dir);
  const output = await runGenerator(dir, options.image);
  return output
    .split('\n')
    .filter((l) => l.startsWith('wrote '))
    .map((l) => l.slice('wrote '.length));
}

/** The CRDs of `config/crd`, or an error that says how to get them. */
export async function requireProjectCrds(dir: string): Promise<CustomResourceDefinition[]> {
  if (!existsSync(join(dir, 'config/crd')))
    throw new Error(
      `${dir} has no config/crd: generate it with \`kubeloop generate\` (npm run manifests), after \`kubeloop create api\` for a kind of your own`,
    );
  return readProjectCrds(dir);
}

/** A client of the current kubeconfig (or `path`). */
async function currentClient(path: string | undefined): Promise<Client> {
  return new Client(await loadKubeconfig(path ? { path: resolve(path) } : {}));
}

/** The objects of a rendered YAML file. */
async function readObjects(file: string): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
    const v: unknown = doc.toJS();
    if (v && typeof v === 'object' && 'kind' in v) objects.push(v as KubeObject);
  }
  return objects;
}

/** Deletes objects, last first; those already gone are skipped. Returns what was deleted. */
async function deleteObjects(client: Client, objects: readonly KubeObject[]): Promise<KubeObject[]> {
  const deleted: KubeObject[] = [];
  for (const obj of [...objects].reverse()) {
    try {
      await client.delete(obj);
      deleted.push(obj);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return deleted;
}

const describe = (o: KubeObject) =>
  `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name ?? ''}`;

/** Whether the cluster is kubeloop's local control plane (its version says so, as `v1.32.0-kubeloop`). */
async function isLocalPlane(client: Client): Promise<boolean> {
  return (await client.version()).gitVersion.endsWith('-kubeloop');
}

const isCertManagerObject = (o: KubeObject) => String(o.apiVersion).startsWith('cert-manager.io/');

/** Whether the cluster serves cert-manager's Certificates (its CRD is installed). */
async function servesCertManager(client: Client): Promise<boolean> {
  try {
    await client.api(CustomResourceDefinition).get('certificates.cert-manager.io');
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * config/default of a project with webhooks asks cert-manager for the webhook server's
 * certificate and its CA's injection. kubeloop's local control plane has no cert-manager (unless
 * one was installed): there the certificate is issued as cert-manager would issue it (the Secret
 * the manager mounts, the CA injected into the webhook configurations and the CRDs' conversion),
 * so `kubeloop deploy` of a project with webhooks works there as on a cluster with cert-manager.
 * Any other cluster needs cert-manager, as kubebuilder's layout does, and its API server says so.
 */
async function certificatesFor(client: Client, objects: KubeObject[]): Promise<KubeObject[]> {
  if (!objects.some(isCertManagerObject)) return objects;
  if ((await servesCertManager(client)) || !(await isLocalPlane(client))) return objects;
  process.stdout.write(
    "no cert-manager on kubeloop's local control plane: the webhook certificate is issued and its CA injected as cert-manager would\n",
  );
  return standInForCertManager(objects as Manifest[]) as KubeObject[];
}

/**
 * The image `deploy` writes into config/manager. On the local control plane, whose kubelet runs
 * `kubeloop.local/…` images of the local store as processes: without `--image`, the project
 * is built (its build script) and stored, and its content tag deployed (a changed build rolls out, an unchanged
 * one changes nothing); a `kubeloop.local/…` image must be in the store, else its pods would be
 * simulated with nothing running. Elsewhere `--image` goes through as given.
 */
async function deployImage(
  client: Client,
  dir: string,
  flags: { image?: string; store?: string },
): Promise<{ name: string; compiled: boolean } | undefined> {
  const given = flags.image ? { name: flags.image, compiled: false } : undefined;
  if (flags.image && !flags.image.startsWith('kubeloop.local/')) return given;
  if (!(await isLocalPlane(client))) {
    if (flags.image)
      process.stderr.write(
        `warning: ${flags.image} is an image of kubeloop's local image store; this cluster is not kubeloop's local control plane and cannot pull it\n`,
      );
    return given;
  }
  if (!flags.image) {
    // As `kubeloop build` makes the image: the project's build script, not the compile alone.
    await buildProjectImage(dir);
    return { name: storeImage(dir, flags.store ? { store: flags.store } : {}).content, compiled: true };
  }
  const [name = '', tag = 'latest'] = flags.image.slice('kubeloop.local/'.length).split('@')[0]!.split(':');
  const store = imageStore(flags.store);
  if (!existsSync(join(store, name, tag, 'image.json')))
    throw new Error(
      `${flags.image} is not in the local image store ${store}: build it with \`kubeloop build${flags.store ? ` --store ${flags.store}` : ''}\` (or deploy without --image to deploy the project's build)`,
    );
  return given;
}

/** Registers `generate`, `install`, `uninstall`, `deploy` and `undeploy`. */
export function registerManifestCommands(program: Command): void {
  program
    .command('generate')
    .alias('manifests')
    .description(
      'build the project and regenerate config/ (CRDs, RBAC, manager, samples) from its code (make manifests)',
    )
    .argument('[dir]', 'the operator project', '.')
    .action(async (dirArg: string) => {
      for (const f of await generate(resolve(dirArg))) process.stdout.write(`wrote ${f}\n`);
    });

  program
    .command('install')
    .description(
      "install the project's CRDs into the current kubeconfig's cluster, waiting until each is Established (make install)",
    )
    .argument('[dir]', 'the operator project', '.')
    .option('--kubeconfig <path>', 'the kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .action(async (dirArg: string, flags: { kubeconfig?: string }) => {
      const crds = await requireProjectCrds(resolve(dirArg));
      if (crds.length === 0)
        throw new Error(
          'config/crd has no CRD: `kubeloop create api` declares a kind, `kubeloop generate` writes its CRD',
        );
      const client = await currentClient(flags.kubeconfig);
      try {
        await installCrds(client, crds);
      } finally {
        await client.close();
      }
      for (const c of crds)
        process.stdout.write(`customresourcedefinition ${c.metadata?.name} established\n`);
    });

  program
    .command('uninstall')
    .description(
      "remove the project's CRDs (and so every object of their kinds) from the current kubeconfig's cluster (make uninstall)",
    )
    .argument('[dir]', 'the operator project', '.')
    .option('--kubeconfig <path>', 'the kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .action(async (dirArg: string, flags: { kubeconfig?: string }) => {
      const crds = await requireProjectCrds(resolve(dirArg));
      const client = await currentClient(flags.kubeconfig);
      try {
        for (const c of await deleteObjects(client, crds))
          process.stdout.write(`customresourcedefinition ${c.metadata?.name} deleted\n`);
      } finally {
        await client.close();
      }
    });

  program
    .command('deploy')
    .description(
      "deploy the operator (CRDs, RBAC, manager) to the current kubeconfig's cluster (make deploy); the same as kubectl apply -k config/default",
    )
    .argument('[dir]', 'the operator project', '.')
    .option(
      '--image <image>',
      "the manager's image (make deploy IMG=…), written into config/manager; on kubeloop's local control plane the default is the project's build, stored as kubeloop.local/<name>:sha-…",
    )
    .option('--store <dir>', 'the local image store (default: $KUBELOOP_IMAGE_STORE or ~/.kubeloop/images)')
    .option('--kubeconfig <path>', 'the kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .action(async (dirArg: string, flags: { image?: string; store?: string; kubeconfig?: string }) => {
      const dir = resolve(dirArg);
      const client = await currentClient(flags.kubeconfig);
      try {
        const image = await deployImage(client, dir, flags);
        if (image) process.stdout.write(`image ${image.name}\n`);
        await generate(dir, image ? { image: image.name, compiled: image.compiled } : {});
        const objects = await certificatesFor(client, await readObjects(join(dir, 'dist/install.yaml')));
        const crds = objects.filter(
          (o) => o.kind === 'CustomResourceDefinition',
        ) as CustomResourceDefinition[];
        await installCrds(client, crds);
        for (const o of await applyObjects(
          client,
          objects.filter((o) => o.kind !== 'CustomResourceDefinition'),
        ))
          process.stdout.write(`${describe(o)} applied\n`);
      } finally {
        await client.close();
      }
    });

  program
    .command('undeploy')
    .description('remove the operator deployed by kubeloop deploy (make undeploy)')
    .argument('[dir]', 'the operator project', '.')
    .option('--kubeconfig <path>', 'the kubeconfig (default: $KUBECONFIG or ~/.kube/config)')
    .action(async (dirArg: string, flags: { kubeconfig?: string }) => {
      const file = join(resolve(dirArg), 'dist/install.yaml');
      if (!existsSync(file))
        throw new Error(`no ${file}: nothing deployed from here (kubeloop deploy renders it)`);
      const client = await currentClient(flags.kubeconfig);
      try {
        let objects = await readObjects(file);
        // Issuers and Certificates were stood in for where cert-manager is not served (see deploy).
        if (objects.some(isCertManagerObject) && !(await servesCertManager(client)))
          objects = objects.filter((o) => !isCertManagerObject(o));
        for (const o of await deleteObjects(client, objects))
          process.stdout.write(`${describe(o)} deleted\n`);
      } finally {
        await client.close();
      }
    });
}
