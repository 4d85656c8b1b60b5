/**
 * Field management across the versions of a CRD with a conversion webhook, as kube-apiserver's
 * field manager does it (its `versionConverter` converts through the CRD's converter): the
 * fields of a manager that wrote at another version are compared, taken and pruned in that
 * version, so objects are converted there through the webhook.
 *
 * The field manager is synchronous and the webhook is not: the field manager runs with a
 * converter that answers the conversions already made and throws {@link ConversionPending} for
 * a new one; that conversion is then made and the field manager runs again, until it completes.
 * The field manager is deterministic, so each run asks for the same conversions in the same order.
 */
import { ApiError } from 'kubeloop/api';
import { atomOf, type Subresource } from '../apply/field-manager.js';
import { ConversionPending, type VersionConverter } from '../apply/updater.js';
import type { RestHooks } from '../registry/generic/hooks.js';
import type { Registry } from '../registry/registry.js';
import type { ResourceType, UpdateStrategy } from '../registry/types.js';
import { isObject, type Obj } from '../util/object.js';
import { convertThroughWebhook } from './conversion-webhook.js';

/** A field manager needs at most a few conversions per version; more is a loop, not progress. */
const MAX_RUNS = 64;

/**
 * Runs `run` (a field manager's work on copies it may redo) with a converter to the other
 * versions of `t` when its CRD converts through a webhook; `run(undefined)` otherwise, at once.
 * A conversion that fails is thrown to `run` as a 500, which an update's field manager ignores
 * (kube's `UpdateNoErrors` keeps the old managed fields) and an apply reports.
 */
export function withVersionConversions<T>(
  t: ResourceType,
  registry: Registry,
  subresource: Subresource,
  run: (convert?: VersionConverter) => T,
): T | Promise<T> {
  if (t.custom?.conversion !== 'Webhook') return run(undefined);
  const done = new Map<string, { value: unknown } | { error: unknown }>();
  const pending = new Map<string, { value: Obj; version: string }>();
  const convert: VersionConverter = (value, version) => {
    const slash = version.indexOf('/');
    const other =
      version.slice(0, slash) === t.group
        ? registry.lookup(t.group, version.slice(slash + 1), t.resource)
        : undefined;
    if (!other) return undefined;
    const atom = atomOf(other, subresource);
    if (!isObject(value) || value.apiVersion === version) return { value, atom };
    // An object of nothing but its type meta converts without the webhook (kube's converter
    // special-cases the empty object).
    if (Object.keys(value).every((k) => k === 'apiVersion' || k === 'kind'))
      return { value: { ...value, apiVersion: version }, atom };
    const key = `${version}\n${JSON.stringify(value)}`;
    const known = done.get(key);
    if (known && 'error' in known) throw known.error;
    if (known) return { value: known.value, atom };
    pending.set(key, { value, version });
    throw new ConversionPending();
  };
  const fill = async () => {
    const asked = [...pending];
    pending.clear();
    for (const [key, { value, version }] of asked) {
      try {
        const [converted] = await convertThroughWebhook(t, [structuredClone(value)], version);
        done.set(key, { value: converted });
      } catch (err) {
        done.set(key, {
          error: new ApiError({
            code: 500,
            message: `failed to convert object to ${version}: ${err instanceof Error ? err.message : String(err)}`,
          }),
        });
      }
    }
  };
  const attempt = (): { result: T } | undefined => {
    try {
      return { result: run(convert) };
    } catch (err) {
      if (err instanceof ConversionPending) return undefined;
      throw err;
    }
  };
  const first = attempt();
  if (first) return first.result;
  return (async () => {
    for (let runs = 1; runs < MAX_RUNS; runs++) {
      await fill();
      const next = attempt();
      if (next) return next.result;
    }
    throw ApiError.internal('the field manager kept asking for conversions');
  })();
}

/**
 * Runs the registry's field manager hook on a write: at once, or through
 * {@link withVersionConversions} for a CRD with a conversion webhook (a promise then), each run
 * starting from the managed fields the write came with (a run left for a conversion may have
 * taken them off).
 */
export function manageFields(
  hooks: RestHooks,
  registry: Registry,
  t: ResourceType,
  old: Obj | undefined,
  next: Obj,
  manager: string,
  subresource?: UpdateStrategy,
): void | Promise<void> {
  if (!hooks.manageFields) return;
  if (t.custom?.conversion !== 'Webhook') return hooks.manageFields(t, old, next, manager, subresource);
  const m = isObject(next.metadata) ? next.metadata : {};
  const given = m.managedFields;
  return withVersionConversions(t, registry, subresource, (convert) => {
    if (given === undefined) delete m.managedFields;
    else m.managedFields = given;
    hooks.manageFields?.(t, old, next, manager, subresource, convert);
  });
}
