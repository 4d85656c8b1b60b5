// What bundle-typebox.mjs and bundle-yaml.mjs share: a vendored package's modules as one CommonJS
// file, written in ASCII, and a main that writes it or (`--check`) fails when it is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One module of the file: a function of its own in `defs`, called by the file's `load`. */
export function moduleDef(name, id, js) {
  return [`// ${name}`, `defs[${id}] = function (module, exports, require) {`, js.trim(), '};'];
}

/**
 * The file's lines joined, every character outside ASCII as a `\u` escape: V8 keeps a script's
 * source in the heap while its functions live, and one such character makes it a two-byte string.
 * In these packages they occur only in string literals, where the escape is the same code unit.
 */
export function asciiOnly(parts) {
  return parts
    .join('\n')
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Runs a bundle script as its entry point: writes `target` with `make()`'s text, or with
 * `--check` exits 1 when the file differs from it (the test suite checks so).
 */
export function vendorMain(scriptUrl, root, target, make, rebuild) {
  if (process.argv[1] !== fileURLToPath(scriptUrl)) return;
  const text = make();
  if (process.argv.includes('--check')) {
    if (readFileSync(target, 'utf8') !== text) {
      console.error(`${relative(root, target)} is stale: ${rebuild}`);
      process.exit(1);
    }
  } else {
    writeFileSync(target, text);
    console.log(`wrote ${relative(root, target)} (${(text.length / 1024).toFixed(0)} KB)`);
  }
}
