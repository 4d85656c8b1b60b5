/** Request bodies of writes: objects (JSON, YAML, protobuf), checked against the URL's kind. */
import type { IncomingMessage } from 'node:http';
import { ApiError, fieldErrors } from 'kubeloop/api';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from '../../protobuf/index.js';
import { apiVersionOf, type ResourceType } from '../../registry/types.js';
import { goJsonTypeName, summarizeBody } from '../../util/go-json.js';
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

/** The struct kube's serializer first reads a body into, named in its type errors. */
export const FIND_KIND =
  'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/**
 * Reads a write's body: a JSON or YAML object, or a built-in kind's protobuf. With `into` (the
 * kind of the URL), a body that is not an object is refused as the serializer refuses it, `the
 * object provided is unrecognized (must be of type <kind>): <why> (<the body's start>)`; JSON
 * `null` decodes to an empty object, as it does into a Go struct.
 */
export async function readRequestBody(
  req: IncomingMessage,
  into?: ResourceType,
): Promise<{ obj: Obj; raw: string; yamlDuplicates?: string }> {
  const type = mediaType(req.headers['content-type']);
  if (type === PROTOBUF_CONTENT_TYPE) {
    // kubectl's typed clients send built-in objects as protobuf; answers stay JSON.
    return { obj: decodeProtobufObject(await readBody(req)), raw: '' };
  }
  if (!BODY_TYPES.has(type)) {
    req.resume();
    throw ApiError.unsupportedMediaType();
  }
  // The body's text is decoded from UTF-8 once: parsed, and kept for the field checks.
  const bytes = await readBody(req);
  const text = bytes.toString('utf8');
  const unrecognized = (why: string) =>
    ApiError.badRequest(
      `the object provided is unrecognized (must be of type ${into?.kind}): ${why} (${summarizeBody(bytes)})`,
    );
  let obj: unknown;
  try {
    obj = decodeText(text, type || 'application/json');
  } catch (err) {
    if (into && err instanceof ApiError && err.message.startsWith("couldn't get version/kind"))
      throw unrecognized(err.message);
    throw err;
  }
  if (obj === null && into) obj = {};
  if (!isObject(obj)) {
    if (!into) throw ApiError.badRequest(`Object 'Kind' is missing in '${text.slice(0, 200)}'`);
    throw unrecognized(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonTypeName(obj)} into Go value of type ${FIND_KIND}`,
    );
  }
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
  const { obj, raw, yamlDuplicates } = await readRequestBody(req, t);
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
    if (t.custom && typeof kind === 'string') {
      // A custom resource decodes whatever its kind; validation refuses it (the kind of the
      // body names the invalid object).
      const name = isObject(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : '';
      throw ApiError.invalid({ group: t.group, kind }, name, [
        fieldErrors.invalid('kind', kind, `must be ${t.kind}`),
      ]);
    }
    throw ApiError.badRequest(
      `${typeof kind === 'string' ? kind : JSON.stringify(kind)} in version "${t.version}" cannot be handled as a ${t.kind}: the kind in the body does not match the resource of the URL (${t.resource})`,
    );
  }
  obj.apiVersion = expected;
  obj.kind = t.kind;
  return { obj, raw: raw || undefined, ...(yamlDuplicates !== undefined && { yamlDuplicates }) };
}

/** The errors a strict decoding of an apply configuration finds (its duplicate keys), one per line. */
export function strictDecodingLines(text: string): string[] {
  const found = parseJsonShapedYaml(text) !== undefined ? jsonDuplicateKeys(text) : yamlDuplicateKeys(text);
  return found === undefined ? [] : found.split('\n').slice(1);
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
      `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${goJsonTypeName(value)} into Go value of type map[string]interface {}`,
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
