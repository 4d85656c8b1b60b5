/**
 * Local images: the images this machine can run as processes (see ./process-pods.ts).
 *
 * An image `kubeloop.local/<name>[:<tag>]` (tag `latest` when omitted; a `@sha256:` digest is
 * ignored) names the directory `<store>/<name>/<tag>/` of the local image store, which holds an
 * `image.json` ({@link LocalImage}, its `dir` relative to that directory, default `app`). The
 * store is `$KUBELOOP_IMAGE_STORE`, else `~/.kubeloop/images`; `kubeloop build` fills it with a
 * project's `package.json`, `dist/` and `node_modules`. The server option `images` maps image
 * names to images directly (the node-level mapping), before the store is looked at.
 *
 * Every other image, and a `kubeloop.local/` image that is not in the store, is simulated.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** The registry host of local images. */
export const LOCAL_REGISTRY = 'kubeloop.local';

/**
 * A runnable image: a directory and how to start it, as a Dockerfile's `ENTRYPOINT`, `CMD`,
 * `WORKDIR` and `ENV` would say.
 *
 * @example
 * ```json
 * { "dir": "app", "entrypoint": ["node", "dist/main.js"], "workingDir": "/app" }
 * ```
 */
export interface LocalImage {
  /** The image's files (a project with `dist/`, `package.json`, `node_modules`): they appear in `workingDir`. */
  dir: string;
  /** `ENTRYPOINT`: what runs when the container has no `command`. */
  entrypoint?: string[];
  /** `CMD`: the arguments when the container has no `args`. */
  cmd?: string[];
  /** `WORKDIR`, in the container (default `/app`). */
  workingDir?: string;
  /** `ENV`. */
  env?: Record<string, string>;
  /** `USER` (`uid[:gid]` or a name): what `runAsNonRoot` is checked against (see ./security-context.ts); none is root. */
  user?: string;
}

/** Where local images come from. */
export interface ImageSource {
  /** Image name (as written in the pod) to image: the node-level mapping. */
  images?: Record<string, LocalImage>;
  /** The local image store (default `$KUBELOOP_IMAGE_STORE`, else `~/.kubeloop/images`). */
  imageStore?: string;
}

/** The default image store. */
export function defaultImageStore(env: NodeJS.ProcessEnv = process.env): string {
  return env.KUBELOOP_IMAGE_STORE || join(homedir(), '.kubeloop', 'images');
}

/** `kubeloop.local/<name>[:tag][@digest]` as its name and tag; undefined for other images. */
export function parseLocalImage(image: string): { name: string; tag: string } | undefined {
  if (!image.startsWith(`${LOCAL_REGISTRY}/`)) return undefined;
  const ref = image.slice(LOCAL_REGISTRY.length + 1).split('@')[0] ?? '';
  const colon = ref.lastIndexOf(':');
  const name = colon > ref.lastIndexOf('/') && colon >= 0 ? ref.slice(0, colon) : ref;
  const tag = colon > ref.lastIndexOf('/') && colon >= 0 ? ref.slice(colon + 1) : 'latest';
  if (!/^[a-z0-9]+([._/-][a-z0-9]+)*$/.test(name) || !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag))
    return undefined;
  return { name, tag };
}

/**
 * The local image an image name stands for, with its `dir` absolute; undefined when the image
 * is to be simulated.
 */
export function resolveImage(image: string | undefined, source: ImageSource): LocalImage | undefined {
  if (!image) return undefined;
  const mapped = source.images?.[image];
  if (mapped) return mapped;
  const ref = parseLocalImage(image);
  if (!ref) return undefined;
  const at = join(source.imageStore ?? defaultImageStore(), ref.name, ref.tag);
  let parsed: Partial<LocalImage>;
  try {
    parsed = JSON.parse(readFileSync(join(at, 'image.json'), 'utf8')) as Partial<LocalImage>;
  } catch {
    return undefined;
  }
  const dir = parsed.dir ?? 'app';
  return { ...parsed, dir: isAbsolute(dir) ? dir : resolve(at, dir) };
}
