import { ApiError } from 'kubeloop';
import { apiVersionOf, type ResourceType } from '../registry/types.js';
import type { StoredObject } from '../storage/types.js';
import type { Obj } from '../util/object.js';

/**
 * Version conversion of custom resources. Objects are stored at the CRD's storage version;
 * a request through another served version sees them converted. Strategy `None` only rewrites
 * `apiVersion`; `Webhook` conversion is not available yet and fails clearly.
 */

const views = new WeakMap<StoredObject, Map<string, StoredObject>>();

function needsConversion(t: ResourceType, apiVersion: unknown): boolean {
  return t.custom !== undefined && apiVersion !== apiVersionOf(t);
}

function webhookUnavailable(t: ResourceType, from: unknown): ApiError {
  return ApiError.internal(
    `conversion webhook for ${String(from)}, Kind=${t.kind} failed: conversion strategy Webhook is not supported by this server yet`,
  );
}

/** The stored object as seen through `t`'s version (cached per object and version). */
export function presentAs(t: ResourceType, stored: StoredObject): StoredObject {
  const from = stored.object.apiVersion;
  if (!needsConversion(t, from)) return stored;
  if (t.custom?.conversion === 'Webhook') throw webhookUnavailable(t, from);
  const target = apiVersionOf(t);
  let byVersion = views.get(stored);
  if (!byVersion) {
    byVersion = new Map();
    views.set(stored, byVersion);
  }
  let view = byVersion.get(target);
  if (!view) {
    const object = { ...stored.object, apiVersion: target };
    view = { key: stored.key, object, revision: stored.revision, json: JSON.stringify(object) };
    byVersion.set(target, view);
  }
  return view;
}

/** Converts an object written through `t`'s version to the storage version, in place. */
export function toStorageVersion(t: ResourceType, obj: Obj): void {
  const custom = t.custom;
  if (!custom || custom.storageVersion === t.version) return;
  if (custom.conversion === 'Webhook') throw webhookUnavailable(t, obj.apiVersion);
  obj.apiVersion = `${t.group}/${custom.storageVersion}`;
}

/** Converts a stored object to `t`'s version, for code that works on plain objects (patches). */
export function fromStorageVersion(t: ResourceType, obj: Obj): void {
  if (!needsConversion(t, obj.apiVersion)) return;
  if (t.custom?.conversion === 'Webhook') throw webhookUnavailable(t, obj.apiVersion);
  obj.apiVersion = apiVersionOf(t);
}
