// The operator as it is deployed: dist/main.js (tsc's output) and everything it imports bundled
// into a few files in dist/bundle/, run by `npm start` and the image (`node dist/bundle/main.mjs`).
// Why: the operator loads ~180 modules (the SDK's ~140 ES modules, pino's, its own) before its
// first reconcile, and Node resolves, reads and compiles each one (stat calls, package.json
// lookups, a module record each): ~40 % of its start CPU. Bundled: sample operator on 1 Foo,
// start CPU ~430 -> ~330 ms and RSS at rest ~1 MB less (bench/dist/benchmarks/operator-start.js).
// The code runs unchanged: same modules in the same order; what a dynamic import loads
// (webhooks, conversion, undici's connector) stays a chunk of its own, loaded only when used,
// so main.ts still caps V8's young generation before the operator's modules load.
//   node scripts/bundle.mjs   (after `tsc -b`; `npm run build` runs both)
// rolldown is a build-time dependency only: the image runs the bundle with the same node_modules.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RolldownMagicString, rolldown } from 'rolldown';

const project = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(project, 'dist/bundle');

// Loaded from node_modules at run time, not bundled:
// - prom-client: the SDK's metrics and a user's own `import { Counter } from 'prom-client'` must
//   share one global registry, i.e. one copy of the module in Node's cache;
// - undici: only an HTTP/2 or proxied connection loads it (a dynamic import), ~1 MB of source.
const external = /^(node:|prom-client(\/|$)|undici(\/|$))/;

/** The package.json (name, root) of the package a file belongs to. */
function packageOf(file) {
  for (let d = dirname(file); dirname(d) !== d; d = dirname(d)) {
    const p = join(d, 'package.json');
    if (existsSync(p)) return { name: JSON.parse(readFileSync(p, 'utf8')).name, root: d };
  }
  throw new Error(`no package.json above ${file}`);
}

/**
 * A module's `import.meta.url` as it would be unbundled. The SDK finds files next to its modules
 * (vendor/typebox.cjs, yaml, prom-client) by `createRequire(import.meta.url)`; in a bundle that
 * would be the bundle's URL. The file is found again at run time from its package's main entry,
 * resolved as Node resolves it from the bundle (node_modules of the project or above it, in the
 * image as in a workspace), so no path of the build machine is written into the bundle.
 */
function moduleUrl(id) {
  const pkg = packageOf(id);
  const main = createRequire(join(project, 'package.json')).resolve(pkg.name);
  const path = relative(dirname(main), id).split(sep).join('/');
  return `new URL(${JSON.stringify(path)}, import.meta.resolve(${JSON.stringify(pkg.name)})).href`;
}

const bundle = await rolldown({
  input: join(project, 'dist/main.js'),
  platform: 'node',
  external: (id) => external.test(id),
  plugins: [
    {
      name: 'module-url',
      transform(code, id) {
        // Rolldown's own runtime (a virtual module) and the project's modules keep the bundle's URL.
        if (!code.includes('import.meta.url') || !isAbsolute(id) || id.startsWith(project + sep)) return null;
        const s = new RolldownMagicString(code);
        s.replaceAll('import.meta.url', moduleUrl(id));
        return { code: s };
      },
    },
  ],
});
rmSync(out, { recursive: true, force: true });
await bundle.write({
  dir: out,
  format: 'esm',
  entryFileNames: 'main.mjs',
  chunkFileNames: '[name]-[hash].mjs',
  sourcemap: true,
  // Our modules' comments are stripped already (scripts/strip-comments.mjs); these are the
  // dependencies': V8 would keep them in the heap with the source. Licences stay.
  comments: { legal: true, annotation: false, jsdoc: false },
  // Not minified, but ASCII: V8 keeps a script's source in the heap as long as its functions
  // live, and one character outside Latin-1 (an ellipsis or a dash in a message) makes the whole
  // chunk a two-byte string. Escaped (`\u2026` in the literal: the same string), the two chunks
  // loaded at start take half: heap at rest ~0.7 MB less.
  minify: { compress: false, mangle: false, codegen: { removeWhitespace: false, asciiOnly: true } },
});
await bundle.close();
console.log(
  `bundled ${relative(process.cwd(), join(project, 'dist/main.js'))} -> ${relative(process.cwd(), out)}/main.mjs`,
);
