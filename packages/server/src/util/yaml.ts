/**
 * The `yaml` package, loaded on first use: it takes ~80 ms to load, and most requests (kubectl
 * sends JSON) never need it, so the server does not pay for it before it is ready.
 * {@link preloadYaml} loads it in the background once the server is serving.
 */
import { createRequire } from 'node:module';

type YamlModule = typeof import('yaml');

let loaded: YamlModule | undefined;

function yaml(): YamlModule {
  loaded ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return loaded;
}

/** `yaml.parse`. */
export const parseYaml: YamlModule['parse'] = ((...args: Parameters<YamlModule['parse']>) =>
  yaml().parse(...args)) as YamlModule['parse'];

/** `yaml.stringify`. */
export const toYaml: YamlModule['stringify'] = ((...args: Parameters<YamlModule['stringify']>) =>
  yaml().stringify(...args)) as YamlModule['stringify'];

/** Loads `yaml` now, unless it is already loaded. */
export function preloadYaml(): void {
  yaml();
}
