/**
 * Validation of a CRD's subresources (status, scale), printer columns, selectable fields and
 * conversion (webhook client config).
 */
import type { StatusCause } from '../../api/status.js';
import { fieldErrors, isDNS1035Label } from '../../api/validation.js';
import { validateWebhookService, validateWebhookURL } from '../../api/webhook-validation.js';
import { validFieldPath } from '../cel/validator.js';
import type { Structural } from '../structural.js';
import type { CustomResourceColumnDefinition, CustomResourceSubresources } from '../types.js';
import {
  child,
  type InternalSpec,
  idx,
  MAX_SELECTABLE_FIELDS,
  PRINTER_COLUMN_FORMATS,
  PRINTER_COLUMN_TYPES,
} from './internal.js';

function validateSimpleJSONPath(s: string, path: string): StatusCause[] {
  if (s.length === 0) return [fieldErrors.invalid(path, s, 'must not be empty')];
  if (s[0] !== '.') return [fieldErrors.invalid(path, s, 'must be a simple json path starting with .')];
  return [];
}

export function validateSubresources(
  sr: CustomResourceSubresources | undefined,
  path: string,
): StatusCause[] {
  const errs: StatusCause[] = [];
  const scale = sr?.scale;
  if (!scale) return errs;
  const spec = scale.specReplicasPath ?? '';
  if (spec.length === 0) errs.push(fieldErrors.required(`${path}.scale.specReplicasPath`));
  else {
    const e = validateSimpleJSONPath(spec, `${path}.scale.specReplicasPath`);
    if (e.length > 0) errs.push(...e);
    else if (!spec.startsWith('.spec.'))
      errs.push(
        fieldErrors.invalid(`${path}.scale.specReplicasPath`, spec, 'should be a json path under .spec'),
      );
  }
  const status = scale.statusReplicasPath ?? '';
  if (status.length === 0) errs.push(fieldErrors.required(`${path}.scale.statusReplicasPath`));
  else {
    const e = validateSimpleJSONPath(status, `${path}.scale.statusReplicasPath`);
    if (e.length > 0) errs.push(...e);
    else if (!status.startsWith('.status.'))
      errs.push(
        fieldErrors.invalid(
          `${path}.scale.statusReplicasPath`,
          status,
          'should be a json path under .status',
        ),
      );
  }
  const sel = scale.labelSelectorPath;
  if (sel) {
    const e = validateSimpleJSONPath(sel, `${path}.scale.labelSelectorPath`);
    if (e.length > 0) errs.push(...e);
    else if (!sel.startsWith('.spec.') && !sel.startsWith('.status.'))
      errs.push(
        fieldErrors.invalid(
          `${path}.scale.labelSelectorPath`,
          sel,
          'should be a json path under either .spec or .status',
        ),
      );
  }
  return errs;
}

export function validateColumn(col: CustomResourceColumnDefinition, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  if (!col.name) errs.push(fieldErrors.required(child(path, 'name')));
  if (!col.type)
    errs.push(fieldErrors.required(child(path, 'type'), `must be one of ${PRINTER_COLUMN_TYPES}`));
  else if (!PRINTER_COLUMN_TYPES.split(',').includes(col.type))
    errs.push(fieldErrors.invalid(child(path, 'type'), col.type, `must be one of ${PRINTER_COLUMN_TYPES}`));
  if (col.format && !PRINTER_COLUMN_FORMATS.split(',').includes(col.format))
    errs.push(
      fieldErrors.invalid(child(path, 'format'), col.format, `must be one of ${PRINTER_COLUMN_FORMATS}`),
    );
  if (!col.jsonPath) errs.push(fieldErrors.required(child(path, 'JSONPath')));
  else errs.push(...validateSimpleJSONPath(col.jsonPath, child(path, 'JSONPath')));
  // kube leaves the priority unchecked: a negative one is stored as given.
  return errs;
}

export function validateSelectableFields(
  fields: Array<{ jsonPath: string }>,
  schema: Structural | undefined,
  path: string,
): StatusCause[] {
  const errs: StatusCause[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const p = idx(path, i);
    if (!f.jsonPath) {
      errs.push(fieldErrors.required(child(p, 'jsonPath')));
      return;
    }
    const r = schema
      ? validFieldPath(f.jsonPath, schema, false)
      : { error: 'does not refer to a valid field' };
    if ('error' in r) {
      errs.push(fieldErrors.invalid(child(p, 'jsonPath'), f.jsonPath, `is an invalid path: ${r.error}`));
      return;
    }
    if (r.path.split(/[.[]/)[0] === 'metadata')
      errs.push(
        fieldErrors.invalid(child(p, 'jsonPath'), f.jsonPath, 'must not point to fields in metadata'),
      );
    if (!['string', 'boolean', 'integer'].includes(r.schema.type))
      errs.push(
        fieldErrors.invalid(
          child(p, 'jsonPath'),
          f.jsonPath,
          'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        ),
      );
    if (unique.has(r.path)) errs.push(fieldErrors.duplicate(child(p, 'jsonPath'), f.jsonPath));
    else unique.add(r.path);
  });
  if (unique.size > MAX_SELECTABLE_FIELDS)
    errs.push(fieldErrors.tooMany(path, unique.size, MAX_SELECTABLE_FIELDS));
  return errs;
}

export function validateConversion(conv: InternalSpec['conversion'], path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  if (!conv) return errs;
  const strategy = conv.strategy ?? '';
  if (strategy === '') errs.push(fieldErrors.required(child(path, 'strategy')));
  else if (strategy !== 'None' && strategy !== 'Webhook')
    errs.push(fieldErrors.notSupported(child(path, 'strategy'), strategy, ['None', 'Webhook']));
  if (strategy === 'Webhook') {
    const cc = conv.webhookClientConfig;
    if (!cc)
      errs.push(
        fieldErrors.required(child(path, 'webhookClientConfig'), 'required when strategy is set to Webhook'),
      );
    else if ((cc.url === undefined) === (cc.service === undefined))
      errs.push(
        fieldErrors.required(child(path, 'webhookClientConfig'), 'exactly one of url or service is required'),
      );
    else if (cc.url !== undefined)
      errs.push(...validateWebhookURL(`${path}.webhookClientConfig.url`, cc.url));
    else if (cc.service)
      errs.push(
        // As kube calls it: name and namespace in each other's place (the callee takes the
        // namespace first), so each missing one is reported as the other.
        ...validateWebhookService(
          `${path}.webhookClientConfig.service`,
          cc.service.name ?? '',
          cc.service.namespace ?? '',
          cc.service.path,
          cc.service.port ?? 443,
        ),
      );
    const crv = conv.conversionReviewVersions ?? [];
    const vp = child(path, 'conversionReviewVersions');
    if (crv.length === 0) errs.push(fieldErrors.required(vp));
    else {
      const seen = new Set<string>();
      let accepted = false;
      crv.forEach((v, i) => {
        if (seen.has(v)) {
          errs.push(fieldErrors.invalid(idx(vp, i), v, 'duplicate version'));
          return;
        }
        seen.add(v);
        for (const m of isDNS1035Label(v)) errs.push(fieldErrors.invalid(idx(vp, i), v, m));
        if (v === 'v1' || v === 'v1beta1') accepted = true;
      });
      if (!accepted) errs.push(fieldErrors.invalid(vp, crv, 'must include at least one of v1, v1beta1'));
    }
  } else {
    if (conv.webhookClientConfig)
      errs.push(
        fieldErrors.forbidden(
          child(path, 'webhookClientConfig'),
          'should not be set when strategy is not set to Webhook',
        ),
      );
    if (conv.conversionReviewVersions?.length)
      errs.push(
        fieldErrors.forbidden(
          child(path, 'conversionReviewVersions'),
          'should not be set when strategy is not set to Webhook',
        ),
      );
  }
  return errs;
}
