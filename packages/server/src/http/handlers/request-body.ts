/** Request bodies of writes: objects (JSON, YAML, protobuf), checked against the URL's kind. */
import type { IncomingMessage } from 'node:http';
import { ApiError } from 'kubeloop/api';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from '../../protobuf/index.js';
import { apiVersionOf, type ResourceType } from '../../registry/types.js';
import { isObject, type Obj } from '../../util/object.js';
import { parseYamlBounded, YamlLimitError, yamlDuplicateKeys } from '../../util/yaml.js';
import {
  decodeText,
  jsonDuplicateKeys,
  MAX_JSON_DEPTH,
  mediaType,
  nestingExceeds,
  parseJsonShapedYaml,
  readBody,
} from '../body.js';

const BODY_TYPES = new Set(['application/json', 'application/yaml', '']);

/** Reads a write's body: a JSON or YAML object, or a built-in kind's protobuf. */
export async function readRequestBody(
  req: IncomingMessage,
): Promise<{ obj: Obj; raw: string; yamlDuplicates?: string }> {
  const type = mediaType(req.headers['content-type']);
  if (type === PROTOBUF_CONTENT_TYPE) {
    // kubectl's typed clients send built-in objects as protobuf; answers stay JSON.
    return { obj: decodeProtobufObject(await readBody(req)), raw: '' };
  }
  if (!BODY_TYPES.has(type)) {
    req.resume();
    throw ApiError.unsupportedMediaType(type);
  }
  // The body's text is decoded from UTF-8 once: parsed, and kept for the field checks.
  const text = (await readBody(req)).toString('utf8');
  const obj = decodeText(text, type || 'application/json');
  if (!isObject(obj)) throw ApiError.badRequest(`Object 'Kind' is missing in '${text.slice(0, 200)}'`);
  if (type === 'application/yaml') {
    // A JSON-shaped body was parsed as JSON and may be deeper than the YAML composer can go.
    const duplicates =
      parseJsonShapedYaml(text) !== undefined ? jsonDuplicateKeys(text) : yamlDuplicateKeys(text);
    return { obj, raw: '', ...(duplicates !== undefined && { yamlDuplicates: duplicates }) };
  }
  return { obj, raw: text };
}

/** Reads a create/update body and checks its apiVersion and kind against the URL. */
export async function readObject(
  req: IncomingMessage,
  t: ResourceType,
): Promise<{ obj: Obj; raw: string | undefined; yamlDuplicates?: string }> {
  const { obj, raw, yamlDuplicates } = await readRequestBody(req);
  const expected = apiVersionOf(t);
  const apiVersion = obj.apiVersion;
  const kind = obj.kind;
  if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== expected) {
    if (typeof apiVersion !== 'string')
      throw ApiError.badRequest(`apiVersion: Invalid value: must be a string`);
    throw ApiError.badRequest(
      `the API version in the data (${apiVersion}) does not match the expected API version (${expected})`,
    );
  }
  if (kind !== undefined && kind !== '' && kind !== t.kind) {
    throw ApiError.badRequest(
      `${typeof kind === 'string' ? kind : JSON.stringify(kind)} in version "${t.version}" cannot be handled as a ${t.kind}: the kind in the body does not match the resource of the URL (${t.resource})`,
    );
  }
  obj.apiVersion = expected;
  obj.kind = t.kind;
  return { obj, raw: raw || undefined, ...(yamlDuplicates !== undefined && { yamlDuplicates }) };
}

/**
 * An apply configuration: YAML (JSON is YAML) into a map, as `sigs.k8s.io/yaml` decodes it;
 * with `strict`, duplicate keys are an error (`error strict decoding YAML`).
 */
export function decodeApplyYaml(text: string, strict: boolean): Obj {
  let value: unknown;
  const json = parseJsonShapedYaml(text);
  try {
    value = json ?? parseYamlBounded(text, { version: '1.1', uniqueKeys: false, maxAliasCount: 100 });
  } catch (err) {
    if (err instanceof YamlLimitError)
      throw ApiError.badRequest(`error decoding YAML: error converting YAML to JSON: ${err.message}`);
    throw ApiError.badRequest(`error decoding YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  // Parsed as JSON, the configuration is held to the JSON decoder's depth instead of go-yaml's.
  if (json !== undefined && nestingExceeds(json))
    throw ApiError.badRequest(
      `error decoding YAML: error converting YAML to JSON: yaml: exceeded max depth of ${MAX_JSON_DEPTH}`,
    );
  if (value === null || value === undefined) value = {};
  if (!isObject(value)) {
    throw ApiError.badRequest(
      `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value === 'string' ? 'string' : typeof value === 'boolean' ? 'bool' : 'number'} into Go value of type map[string]interface {}`,
    );
  }
  if (strict && json !== undefined) {
    const duplicates = jsonDuplicateKeys(text);
    if (duplicates !== undefined)
      throw ApiError.badRequest(`error strict decoding YAML: error converting YAML to JSON: ${duplicates}`);
  } else if (strict) {
    try {
      parseYamlBounded(text, { version: '1.1', uniqueKeys: true, maxAliasCount: 100 });
    } catch (err) {
      throw ApiError.badRequest(
        `error strict decoding YAML: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  return value;
}
