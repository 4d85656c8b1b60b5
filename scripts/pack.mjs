// `npm run pack [-- --out DIR]`: the three publishable packages as npm tarballs, in DIR
// (default dist/packages): kubeloop-<v>.tgz, kubeloop-server-<v>.tgz, kubeloop-cli-<v>.tgz.
// A project outside the repository installs them with `kubeloop init --kubeloop DIR`. Run it
// after `npm run build`: the tarballs carry dist/.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const at = args.findIndex((a) => a === '--out' || a.startsWith('--out='));
const out = resolve(
  at < 0 ? join(root, 'dist/packages') : args[at].includes('=') ? args[at].slice(6) : (args[at + 1] ?? ''),
);
const packages = ['packages/kubeloop', 'packages/server', 'packages/cli'];
for (const p of packages) {
  if (!existsSync(join(root, p, 'dist')))
    throw new Error(`${p} is not built (no dist/): run npm run build first`);
}
mkdirSync(out, { recursive: true });
const result = JSON.parse(
  execFileSync('npm', ['pack', '--json', '--pack-destination', out, ...packages.flatMap((p) => ['-w', p])], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }),
);
for (const r of result)
  process.stdout.write(`${join(out, r.filename)}  (${r.entryCount} files, ${r.size} bytes)\n`);
