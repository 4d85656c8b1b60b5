/**
 * Options of the resource API's verbs, and how they become query parameters and bodies.
 */
import { type FieldSelector, fieldSelectorFromSet, formatFieldSelector } from '../api/fields.js';
import {
  formatLabelSelector,
  type LabelSelector,
  type LabelSelectorObject,
  labelSelectorFromObject,
  labelSelectorFromSet,
} from '../api/labels.js';
import type { KubeObject } from './types.js';
import type { LineDecoder } from './watch.js';

/** Options every request takes. */
export interface RequestOptions {
  /** Cancels the request (and its retries). */
  signal?: AbortSignal;
  /** Time limit of each attempt in ms (overrides the client's `timeoutMs`; 0 = none). */
  timeoutMs?: number;
}

/** `fieldValidation`: what the server does with unknown or duplicate fields. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** Options of create, update and patch. */
export interface WriteOptions extends RequestOptions {
  /** `dryRun=All`: validate and default everything, persist nothing. */
  dryRun?: boolean;
  /** Name of the actor making the change, recorded in `managedFields`. */
  fieldManager?: string;
  fieldValidation?: FieldValidation;
}

/** Options of get. */
export interface GetOptions extends RequestOptions {
  /** `0` = any cached state is fine. */
  resourceVersion?: string;
}

/**
 * A label selector in any of its usual forms: the string syntax (`app=web,tier in (a,b)`), a
 * map of required labels (`{ app: 'web' }`), an API `LabelSelector` object
 * (`{ matchLabels, matchExpressions }`), or a parsed selector.
 */
export type LabelSelectorInput =
  | string
  | Readonly<Record<string, string>>
  | LabelSelectorObject
  | LabelSelector;

/** A field selector: the string syntax (`metadata.name=x,status.phase!=Running`), a map of required values, or a parsed selector. */
export type FieldSelectorInput = string | Readonly<Record<string, string>> | FieldSelector;

/** Selectors of list, watch and deletecollection. */
export interface SelectorOptions {
  labelSelector?: LabelSelectorInput;
  fieldSelector?: FieldSelectorInput;
}

/** Options of list. */
export interface ListOptions extends RequestOptions, SelectorOptions {
  /**
   * Ask for `PartialObjectMetadataList` (items carry only `apiVersion`, `kind` and `metadata`);
   * a server that cannot answer so sends whole objects.
   */
  metadataOnly?: boolean;
  /** Page size; the answer's `metadata.continue` fetches the next page. */
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  /** Server-side time limit of the list. */
  timeoutSeconds?: number;
}

/** Options of `ResourceApi.listBatches`. */
export interface ListStreamOptions extends ListOptions {
  /**
   * How the items become objects (default: decoded at once); each item is handed to it as the
   * line of an `ADDED` watch event. The runtime's informers pass the decoder of their watches.
   */
  lineDecoder?: LineDecoder<KubeObject>;
}

/** Options of watch. */
export interface WatchOptions extends SelectorOptions {
  /** Start after this resourceVersion (typically a list's); from "now" (with the current state first) when omitted. */
  resourceVersion?: string;
  /** Ask for BOOKMARK events carrying the latest resourceVersion. */
  allowWatchBookmarks?: boolean;
  /**
   * Watch-list: the current state as ADDED events, then a BOOKMARK with `initialEventsEnd`.
   * Implies `allowWatchBookmarks` and `resourceVersionMatch=NotOlderThan`.
   */
  sendInitialEvents?: boolean;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  /** The server ends the watch after this many seconds; the iteration then completes. */
  timeoutSeconds?: number;
  /** Ends the watch; the iteration completes without an error. */
  signal?: AbortSignal;
  /** Time limit for the server to start answering, in ms. */
  timeoutMs?: number;
  /**
   * Ask for `PartialObjectMetadata` objects (only `apiVersion`, `kind` and `metadata`); a server
   * that cannot answer so sends whole objects.
   */
  metadataOnly?: boolean;
  /** Called once the server accepted the watch (its response headers arrived). */
  onConnect?: () => void;
  /**
   * How received lines become events (default: decoded at once). The runtime's informers pass
   * one that defers decoding objects until they are read (`kubeloop/runtime`).
   */
  lineDecoder?: LineDecoder<KubeObject>;
}

/** The patch formats. `apply` is server-side apply. */
export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

/** Options of patch. */
export interface PatchOptions extends WriteOptions {
  /** Default `merge`. */
  type?: PatchType;
  /** Server-side apply only: take over fields other managers own. */
  force?: boolean;
}

/** Options of server-side apply. */
export interface ApplyOptions extends RequestOptions {
  /** Required: the manager that owns the applied fields. */
  fieldManager: string;
  /** Take over fields owned by other managers instead of failing with a 409 conflict. */
  force?: boolean;
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
}

/** Options of delete. */
export interface DeleteOptions extends RequestOptions {
  /** What happens to dependents: `Background` (default of most kinds), `Foreground`, `Orphan`. */
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Seconds before the object is deleted (pods); 0 = immediately. */
  gracePeriodSeconds?: number;
  /** Delete only if the object still has this uid / resourceVersion (else 409 Conflict). */
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** Options of deletecollection. */
export interface DeleteCollectionOptions extends DeleteOptions, SelectorOptions {
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  timeoutSeconds?: number;
}

const isParsedLabelSelector = (v: unknown): v is LabelSelector => Array.isArray(v);

/** The `labelSelector` query value of any {@link LabelSelectorInput}. */
export function labelSelectorString(sel: LabelSelectorInput): string {
  if (typeof sel === 'string') return sel;
  if (isParsedLabelSelector(sel)) return formatLabelSelector(sel);
  const o = sel as Record<string, unknown>;
  const isApiObject =
    (o.matchLabels !== undefined && typeof o.matchLabels !== 'string') ||
    (o.matchExpressions !== undefined && typeof o.matchExpressions !== 'string');
  return formatLabelSelector(
    isApiObject
      ? labelSelectorFromObject(sel as LabelSelectorObject)
      : labelSelectorFromSet(sel as Readonly<Record<string, string>>),
  );
}

/** The `fieldSelector` query value of any {@link FieldSelectorInput}. */
export function fieldSelectorString(sel: FieldSelectorInput): string {
  if (typeof sel === 'string') return sel;
  if (Array.isArray(sel)) return formatFieldSelector(sel as FieldSelector);
  return formatFieldSelector(fieldSelectorFromSet(sel as Readonly<Record<string, string>>));
}

/** Query parameters, skipping undefined values. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  // Most requests (writes without options) have none: a URLSearchParams made for nothing was
  // ~1 % of an operator's CPU.
  let q: URLSearchParams | undefined;
  for (const k in params) {
    const v = params[k];
    if (v === undefined) continue;
    q ??= new URLSearchParams();
    q.append(k, String(v));
  }
  const s = q?.toString();
  return s ? `?${s}` : '';
}

/** Query parameters of write requests. */
export function writeParams(
  o: { dryRun?: boolean; fieldManager?: string; fieldValidation?: FieldValidation } = {},
) {
  return {
    dryRun: o.dryRun ? 'All' : undefined,
    fieldManager: o.fieldManager,
    fieldValidation: o.fieldValidation,
  };
}

/** Query parameters of selectors. */
export function selectorParams(o: SelectorOptions) {
  const labelSelector = o.labelSelector === undefined ? undefined : labelSelectorString(o.labelSelector);
  const fieldSelector = o.fieldSelector === undefined ? undefined : fieldSelectorString(o.fieldSelector);
  return {
    labelSelector: labelSelector === '' ? undefined : labelSelector,
    fieldSelector: fieldSelector === '' ? undefined : fieldSelector,
  };
}

/** The query string of a list (`list` and `listBatches` ask the same way). */
export function listQuery(o: ListOptions): string {
  return query({
    ...selectorParams(o),
    limit: o.limit,
    continue: o.continue,
    resourceVersion: o.resourceVersion,
    resourceVersionMatch: o.resourceVersionMatch,
    timeoutSeconds: o.timeoutSeconds,
  });
}

/** `Accept` of a metadata-only list: PartialObjectMetadataList, else whole objects. */
export const ACCEPT_METADATA_LIST =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
/** `Accept` of a metadata-only watch: PartialObjectMetadata events, else whole objects. */
export const ACCEPT_METADATA =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** The `DeleteOptions` body of delete and deletecollection. */
export function deleteBody(o: DeleteOptions): string | undefined {
  const body: Record<string, unknown> = {};
  if (o.propagationPolicy !== undefined) body.propagationPolicy = o.propagationPolicy;
  if (o.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = o.gracePeriodSeconds;
  if (o.preconditions !== undefined) body.preconditions = o.preconditions;
  if (o.dryRun) body.dryRun = ['All'];
  if (Object.keys(body).length === 0) return undefined;
  return JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', ...body });
}
