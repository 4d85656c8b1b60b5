#!/usr/bin/env node
import { createProgram } from './program.js';

createProgram(process.argv)
  .then((program) => program.parseAsync(process.argv))
  .catch((err: unknown) => {
    process.stderr.write(`kubeloop: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
