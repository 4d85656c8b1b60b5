#!/usr/bin/env node
// The committed entry point of the `kubeloop` command. npm links a package's bin when it
// installs it, before a workspace's build has produced dist/: a bin pointing into dist/ would not
// be linked at all on a fresh clone (`npx kubeloop` then fails with "could not determine
// executable to run"). This file exists from the start, and loads the build once there is one.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/bin.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'kubeloop: @kubeloop/cli is not built yet (no dist/bin.js): run `npm run build` first\n',
  );
  process.exit(1);
}
await import(entry.href);
