#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
// Builds the protobuf descriptor table the server uses to decode `application/vnd.kubernetes.protobuf`
// request bodies (src/protobuf/k8s-proto.generated.json) from the .proto files under scripts/proto/.
//
//   node packages/server/scripts/extract-proto.mjs
//       scripts/proto/**/*.proto → src/protobuf/k8s-proto.generated.json
//   node packages/server/scripts/extract-proto.mjs --from-binary "$(command -v kubectl)"
//       first rewrites scripts/proto/k8s.io/{api,apimachinery}/** from the kubectl binary, then generates
//
// Why the kubectl binary: the published generated.proto files have the gogoproto options stripped, and the
// JSON form of a field depends on facts that only the Go types carry — whether the field is a Go pointer
// (gogoproto.nullable), its JSON name and `omitempty`, and whether the field is embedded `json:",inline"`.
// kubectl embeds both halves: every generated.pb.go registers its gzipped FileDescriptorProto (with the gogo
// options), and the Go type metadata keeps every struct field's tag. Reading them from the very client we
// must interoperate with pins the table to exactly what kubectl sends. The rendered .proto files record
// those facts as gogoproto options (nullable, customname, casttype, castkey, castvalue, jsontag), so the
// generation step itself needs nothing but the files committed under scripts/proto/.
//
// apiextensions.k8s.io is not compiled into kubectl: its generated.proto is the upstream file, copied
// verbatim, and the Go facts for it (transcribed from types.go / types_jsonschema.go) are in
// APIEXTENSIONS_GO_FIELDS below.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const protoRoot = join(here, 'proto');
const target = join(here, '../src/protobuf/k8s-proto.generated.json');

/** The kinds whose request bodies are decoded: [apiVersion, kind, proto message]. `*` = any apiVersion. */
const ROOTS = [
  ...[
    'Namespace',
    'ConfigMap',
    'Secret',
    'Service',
    'Endpoints',
    'Pod',
    'Node',
    'ServiceAccount',
    'Event',
  ].map((k) => ['v1', k, `k8s.io.api.core.v1.${k}`]),
  ['v1', 'PersistentVolumeClaim', 'k8s.io.api.core.v1.PersistentVolumeClaim'],
  ['v1', 'Binding', 'k8s.io.api.core.v1.Binding'],
  ...['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet'].map((k) => [
    'apps/v1',
    k,
    `k8s.io.api.apps.v1.${k}`,
  ]),
  ['batch/v1', 'Job', 'k8s.io.api.batch.v1.Job'],
  ['batch/v1', 'CronJob', 'k8s.io.api.batch.v1.CronJob'],
  ['coordination.k8s.io/v1', 'Lease', 'k8s.io.api.coordination.v1.Lease'],
  ['events.k8s.io/v1', 'Event', 'k8s.io.api.events.v1.Event'],
  ...['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'].map((k) => [
    'rbac.authorization.k8s.io/v1',
    k,
    `k8s.io.api.rbac.v1.${k}`,
  ]),
  ...['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'].map((k) => [
    'admissionregistration.k8s.io/v1',
    k,
    `k8s.io.api.admissionregistration.v1.${k}`,
  ]),
  [
    'apiextensions.k8s.io/v1',
    'CustomResourceDefinition',
    'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
  ],
  ['autoscaling/v1', 'Scale', 'k8s.io.api.autoscaling.v1.Scale'],
  // Subresource bodies kubectl sends from its typed clients (drain, create token, auth can-i / whoami).
  ['policy/v1', 'Eviction', 'k8s.io.api.policy.v1.Eviction'],
  ['authentication.k8s.io/v1', 'TokenRequest', 'k8s.io.api.authentication.v1.TokenRequest'],
  ['authentication.k8s.io/v1', 'SelfSubjectReview', 'k8s.io.api.authentication.v1.SelfSubjectReview'],
  [
    'authorization.k8s.io/v1',
    'SelfSubjectAccessReview',
    'k8s.io.api.authorization.v1.SelfSubjectAccessReview',
  ],
  ['authorization.k8s.io/v1', 'SelfSubjectRulesReview', 'k8s.io.api.authorization.v1.SelfSubjectRulesReview'],
  // Kinds kubectl's typed clients create (create cronjob/pdb/ingress/quota/priorityclass, autoscale,
  // certificate approve) and whatever else a 1.32 cluster serves.
  ...['ReplicationController', 'PodTemplate', 'PersistentVolume', 'ResourceQuota', 'LimitRange'].map((k) => [
    'v1',
    k,
    `k8s.io.api.core.v1.${k}`,
  ]),
  ['autoscaling/v1', 'HorizontalPodAutoscaler', 'k8s.io.api.autoscaling.v1.HorizontalPodAutoscaler'],
  ['autoscaling/v2', 'HorizontalPodAutoscaler', 'k8s.io.api.autoscaling.v2.HorizontalPodAutoscaler'],
  ['policy/v1', 'PodDisruptionBudget', 'k8s.io.api.policy.v1.PodDisruptionBudget'],
  ...['Ingress', 'IngressClass', 'NetworkPolicy'].map((k) => [
    'networking.k8s.io/v1',
    k,
    `k8s.io.api.networking.v1.${k}`,
  ]),
  ...['StorageClass', 'CSIDriver', 'CSINode', 'CSIStorageCapacity', 'VolumeAttachment'].map((k) => [
    'storage.k8s.io/v1',
    k,
    `k8s.io.api.storage.v1.${k}`,
  ]),
  ['scheduling.k8s.io/v1', 'PriorityClass', 'k8s.io.api.scheduling.v1.PriorityClass'],
  [
    'certificates.k8s.io/v1',
    'CertificateSigningRequest',
    'k8s.io.api.certificates.v1.CertificateSigningRequest',
  ],
  ['node.k8s.io/v1', 'RuntimeClass', 'k8s.io.api.node.v1.RuntimeClass'],
  ...['FlowSchema', 'PriorityLevelConfiguration'].map((k) => [
    'flowcontrol.apiserver.k8s.io/v1',
    k,
    `k8s.io.api.flowcontrol.v1.${k}`,
  ]),
  ...['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].map((k) => [
    'admissionregistration.k8s.io/v1',
    k,
    `k8s.io.api.admissionregistration.v1.${k}`,
  ]),
  ['authentication.k8s.io/v1', 'TokenReview', 'k8s.io.api.authentication.v1.TokenReview'],
  ...['SubjectAccessReview', 'LocalSubjectAccessReview'].map((k) => [
    'authorization.k8s.io/v1',
    k,
    `k8s.io.api.authorization.v1.${k}`,
  ]),
  // client-go encodes DeleteOptions with the group version of the typed client that sends it.
  ['*', 'DeleteOptions', 'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions'],
  // Answers: the Status of a deletion.
  ['v1', 'Status', 'k8s.io.apimachinery.pkg.apis.meta.v1.Status'],
];
// Answers to protobuf clients: the list of every listable kind above, in its kind's package.
const NOT_LISTABLE = new Set([
  'Binding',
  'Scale',
  'Eviction',
  'TokenRequest',
  'TokenReview',
  'SubjectAccessReview',
  'LocalSubjectAccessReview',
  'DeleteOptions',
  'Status',
]);
ROOTS.push(
  ...ROOTS.filter(
    ([apiVersion, kind]) => apiVersion !== '*' && !NOT_LISTABLE.has(kind) && !kind.startsWith('Self'),
  ).map(([apiVersion, kind, message]) => [apiVersion, `${kind}List`, `${message}List`]),
);
/** Messages the decoder needs besides the kinds: the envelope. */
const EXTRA_MESSAGES = ['k8s.io.apimachinery.pkg.runtime.Unknown'];

/** The proto files taken from the binary (their imports are followed too). */
const BINARY_FILES = [
  'k8s.io/api/core/v1/generated.proto',
  'k8s.io/api/apps/v1/generated.proto',
  'k8s.io/api/batch/v1/generated.proto',
  'k8s.io/api/coordination/v1/generated.proto',
  'k8s.io/api/events/v1/generated.proto',
  'k8s.io/api/rbac/v1/generated.proto',
  'k8s.io/api/admissionregistration/v1/generated.proto',
  'k8s.io/api/autoscaling/v1/generated.proto',
  'k8s.io/api/policy/v1/generated.proto',
  'k8s.io/api/authentication/v1/generated.proto',
  'k8s.io/api/authorization/v1/generated.proto',
  'k8s.io/api/autoscaling/v2/generated.proto',
  'k8s.io/api/networking/v1/generated.proto',
  'k8s.io/api/storage/v1/generated.proto',
  'k8s.io/api/scheduling/v1/generated.proto',
  'k8s.io/api/certificates/v1/generated.proto',
  'k8s.io/api/node/v1/generated.proto',
  'k8s.io/api/flowcontrol/v1/generated.proto',
];

/**
 * Go facts for apiextensions.k8s.io/v1, from staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1
 * types.go and types_jsonschema.go. One token per proto field, in proto declaration order:
 * `*` = Go pointer, then the json tag (`?` stands for `,omitempty`). Messages with custom JSON marshalling
 * (JSON, JSONSchemaPropsOr*) are handled by the decoder and need no entry.
 */
const APIEXTENSIONS_GO_FIELDS = {
  CustomResourceColumnDefinition: 'name type format? description? priority? jsonPath',
  CustomResourceConversion: 'strategy *webhook?',
  CustomResourceDefinition: 'metadata? spec status?',
  CustomResourceDefinitionCondition: 'type status lastTransitionTime? reason? message? observedGeneration?',
  CustomResourceDefinitionList: 'metadata? items',
  CustomResourceDefinitionNames: 'plural singular? shortNames? kind listKind? categories?',
  CustomResourceDefinitionSpec: 'group names scope versions *conversion? preserveUnknownFields?',
  CustomResourceDefinitionStatus: 'conditions acceptedNames storedVersions observedGeneration?',
  CustomResourceDefinitionVersion:
    'name served storage deprecated? *deprecationWarning? *schema? *subresources? additionalPrinterColumns? selectableFields?',
  CustomResourceSubresourceScale: 'specReplicasPath statusReplicasPath *labelSelectorPath?',
  CustomResourceSubresourceStatus: '',
  CustomResourceSubresources: '*status? *scale?',
  CustomResourceValidation: '*openAPIV3Schema?',
  ExternalDocumentation: 'description? url?',
  JSONSchemaProps:
    'id? $schema? *$ref? description? type? format? title? *default? *maximum? exclusiveMaximum? *minimum? ' +
    'exclusiveMinimum? *maxLength? *minLength? pattern? *maxItems? *minItems? uniqueItems? *multipleOf? enum? ' +
    '*maxProperties? *minProperties? required? *items? allOf? oneOf? anyOf? *not? properties? ' +
    '*additionalProperties? patternProperties? dependencies? *additionalItems? definitions? *externalDocs? ' +
    '*example? nullable? *x-kubernetes-preserve-unknown-fields? x-kubernetes-embedded-resource? ' +
    'x-kubernetes-int-or-string? x-kubernetes-list-map-keys? *x-kubernetes-list-type? *x-kubernetes-map-type? ' +
    'x-kubernetes-validations? *x-kubernetes-embedded-type?',
  SelectableField: 'jsonPath',
  ServiceReference: 'namespace name *path? *port?',
  ValidationRule: 'rule message? messageExpression? *reason? fieldPath? *optionalOldSelf?',
  WebhookClientConfig: '*url? *service? caBundle?',
  WebhookConversion: '*clientConfig? conversionReviewVersions',
};
const APIEXTENSIONS_PACKAGE = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1';

/**
 * Messages whose JSON form comes from a Go MarshalJSON (or a non-struct Go type) rather than from struct
 * tags; the decoder implements each of these forms by name.
 */
const CUSTOM_JSON = {
  'k8s.io.apimachinery.pkg.apis.meta.v1.Time': 'Time',
  'k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime': 'MicroTime',
  'k8s.io.apimachinery.pkg.apis.meta.v1.Duration': 'Duration',
  'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1': 'RawJSON',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': 'IntOrString',
  'k8s.io.apimachinery.pkg.api.resource.Quantity': 'Quantity',
  'k8s.io.apimachinery.pkg.runtime.RawExtension': 'RawExtension',
  'k8s.io.apimachinery.pkg.runtime.Unknown': 'Unknown',
  'k8s.io.apimachinery.pkg.runtime.TypeMeta': 'Unknown',
  // `type ExtraValue []string`: the message wraps the slice in `items`.
  'k8s.io.api.authentication.v1.ExtraValue': 'StringList',
  'k8s.io.api.authorization.v1.ExtraValue': 'StringList',
  'k8s.io.api.certificates.v1.ExtraValue': 'StringList',
  [`${APIEXTENSIONS_PACKAGE}.JSON`]: 'RawJSON',
  [`${APIEXTENSIONS_PACKAGE}.JSONSchemaPropsOrArray`]: 'JSONSchemaPropsOrArray',
  [`${APIEXTENSIONS_PACKAGE}.JSONSchemaPropsOrBool`]: 'JSONSchemaPropsOrBool',
  [`${APIEXTENSIONS_PACKAGE}.JSONSchemaPropsOrStringArray`]: 'JSONSchemaPropsOrStringArray',
};

const SCALARS = {
  1: 'double',
  2: 'float',
  3: 'int64',
  4: 'uint64',
  5: 'int32',
  6: 'fixed64',
  7: 'fixed32',
  8: 'bool',
  9: 'string',
  12: 'bytes',
  13: 'uint32',
  15: 'sfixed32',
  16: 'sfixed64',
  17: 'sint32',
  18: 'sint64',
};
const SCALAR_NAMES = new Set(Object.values(SCALARS));

const LICENSE = `/*
Copyright The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/
`;

// ---------------------------------------------------------------------------------------------------------
// Protobuf wire reading (for FileDescriptorProto)

function varint(buf, pos) {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, pos];
  }
}

/** @returns {{no: number, wt: number, value: number | Buffer}[]} */
function fields(buf) {
  const out = [];
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = varint(buf, pos);
    const no = Math.floor(key / 8);
    const wt = key & 7;
    let value;
    if (wt === 0) [value, pos] = varint(buf, pos);
    else if (wt === 2) {
      let len;
      [len, pos] = varint(buf, pos);
      value = buf.subarray(pos, pos + len);
      pos += len;
    } else if (wt === 1) {
      value = buf.subarray(pos, pos + 8);
      pos += 8;
    } else if (wt === 5) {
      value = buf.subarray(pos, pos + 4);
      pos += 4;
    } else throw new Error(`unsupported wire type ${wt}`);
    out.push({ no, wt, value });
  }
  return out;
}
const str = (v) => Buffer.from(v).toString('utf8');

function decodeFieldDescriptor(buf) {
  const f = { options: {} };
  for (const { no, value } of fields(buf)) {
    if (no === 1) f.name = str(value);
    else if (no === 3) f.number = value;
    else if (no === 4) f.label = value;
    else if (no === 5) f.type = value;
    else if (no === 6) f.typeName = str(value);
    else if (no === 8) {
      for (const o of fields(value)) {
        if (o.no === 2) f.options.packed = o.value === 1;
        else if (o.no === 65001) f.options.nullable = o.value === 1;
        else if (o.no === 65004) f.options.customname = str(o.value);
        else if (o.no === 65007) f.options.casttype = str(o.value);
        else if (o.no === 65008) f.options.castkey = str(o.value);
        else if (o.no === 65009) f.options.castvalue = str(o.value);
        else throw new Error(`field ${f.name}: unexpected field option ${o.no}`);
      }
    } else if (no === 9) throw new Error(`field ${f.name}: oneof is not supported`);
  }
  return f;
}

function decodeMessageDescriptor(buf) {
  const m = { fields: [], nested: [], mapEntry: false };
  for (const { no, value } of fields(buf)) {
    if (no === 1) m.name = str(value);
    else if (no === 2) m.fields.push(decodeFieldDescriptor(value));
    else if (no === 3) m.nested.push(decodeMessageDescriptor(value));
    else if (no === 4) throw new Error(`message ${m.name}: nested enums are not supported`);
    else if (no === 7) {
      for (const o of fields(value)) if (o.no === 7) m.mapEntry = o.value === 1;
    } else if (no === 8) throw new Error(`message ${m.name}: oneof is not supported`);
  }
  return m;
}

function decodeFileDescriptor(buf) {
  const fd = { deps: [], messages: [] };
  for (const { no, value } of fields(buf)) {
    if (no === 1) fd.name = str(value);
    else if (no === 2) fd.package = str(value);
    else if (no === 3) fd.deps.push(str(value));
    else if (no === 4) fd.messages.push(decodeMessageDescriptor(value));
    else if (no === 5) throw new Error(`${fd.name}: enums are not supported`);
    else if (no === 8) {
      for (const o of fields(value)) if (o.no === 11) fd.goPackage = str(o.value);
    }
  }
  return fd;
}

/** Every gzipped FileDescriptorProto a Go binary registers (gogo's `fileDescriptor_<hash>` variables). */
function embeddedDescriptors(bin) {
  const found = new Map();
  const magic = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]);
  for (let at = bin.indexOf(magic); at !== -1; at = bin.indexOf(magic, at + 1)) {
    let raw;
    try {
      raw = inflateRawSync(bin.subarray(at + 10, at + 10 + 4 * 1024 * 1024));
    } catch {
      continue;
    }
    // FileDescriptorProto starts with field 1 (name): 0x0a, length, "....proto".
    if (raw[0] !== 0x0a) continue;
    const head = raw.subarray(2, 2 + raw[1]).toString('latin1');
    if (!head.endsWith('.proto')) continue;
    try {
      const fd = decodeFileDescriptor(raw);
      if (!found.has(fd.name)) found.set(fd.name, fd);
    } catch (err) {
      if (/generated\.proto$/.test(head)) throw new Error(`${head}: ${err.message}`);
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------------
// Go struct tags from the binary's type metadata (ELF, Go ≥ 1.21 abi layout)

function elfSection(bin, wanted) {
  if (bin.readUInt32BE(0) !== 0x7f454c46 || bin[4] !== 2 || bin[5] !== 1) {
    throw new Error('not a little-endian ELF64 binary');
  }
  const shoff = Number(bin.readBigUInt64LE(0x28));
  const shentsize = bin.readUInt16LE(0x3a);
  const shnum = bin.readUInt16LE(0x3c);
  const shstrndx = bin.readUInt16LE(0x3e);
  const section = (i) => {
    const h = shoff + i * shentsize;
    return {
      name: bin.readUInt32LE(h),
      addr: Number(bin.readBigUInt64LE(h + 16)),
      offset: Number(bin.readBigUInt64LE(h + 24)),
      size: Number(bin.readBigUInt64LE(h + 32)),
    };
  };
  const names = section(shstrndx);
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    const end = bin.indexOf(0, names.offset + s.name);
    if (bin.toString('latin1', names.offset + s.name, end) === wanted) return s;
  }
  throw new Error(`no ${wanted} section`);
}

/**
 * Maps proto message full name → field number → { json, goName } by walking the Go runtime type metadata:
 * struct field records (`abi.StructField{Name, Typ, Offset}`) point at name records that carry the tag, and the
 * struct type (`abi.StructType`) that owns a field array names the Go type and, through its uncommon type,
 * the package — which go-to-protobuf maps 1:1 onto the proto package.
 */
function goStructTags(bin) {
  const ro = elfSection(bin, '.rodata');
  const base = ro.addr; // runtime.types: type names and package paths are offsets from here
  const inRo = (va) => va >= ro.addr && va < ro.addr + ro.size;
  const at = (va) => va - ro.addr + ro.offset;
  const u64 = (va) => {
    const o = at(va);
    return bin.readUInt32LE(o + 4) === 0 ? bin.readUInt32LE(o) : -1;
  };
  const readName = (va) => {
    if (!inRo(va)) return undefined;
    let o = at(va);
    const flag = bin[o++];
    if (flag > 15) return undefined; // exported, hasTag, hasPkgPath, embedded
    const [len, afterLen] = varint(bin, o);
    o = afterLen;
    if (len === 0 || len > 512) return undefined;
    const name = bin.toString('latin1', o, o + len);
    if (!/^[\x21-\x7e]+$/.test(name)) return undefined;
    o += len;
    let tag = '';
    if (flag & 2) {
      let tlen;
      [tlen, o] = varint(bin, o);
      tag = bin.toString('utf8', o, o + tlen);
    }
    return { name, tag };
  };

  // 1. Name records whose tag has a protobuf key. Tags start with `json:"` by Kubernetes convention.
  const records = new Set();
  const jsonKey = Buffer.from('json:"');
  const roEnd = ro.offset + ro.size;
  for (let t = bin.indexOf(jsonKey, ro.offset); t !== -1 && t < roEnd; t = bin.indexOf(jsonKey, t + 1)) {
    for (const tl of [1, 2]) {
      let tagLen;
      let next;
      try {
        [tagLen, next] = varint(bin, t - tl);
      } catch {
        continue;
      }
      if (next !== t) continue;
      if (!bin.toString('latin1', t, t + tagLen).includes('protobuf:"')) continue;
      for (let nl = 1; nl < 128; nl++) {
        const p = t - tl - nl - 1;
        if (bin[p] === nl && bin[p - 1] < 16 && (bin[p - 1] & 3) === 3) {
          const va = p - 1 - ro.offset + ro.addr;
          if (readName(va)) {
            records.add(va);
            break;
          }
        }
      }
      break;
    }
  }

  // 2. Struct field records pointing at them, grouped into field arrays.
  const field = (va) => {
    if (!inRo(va) || !inRo(va + 16)) return undefined;
    const nameVa = u64(va);
    const typVa = u64(va + 8);
    if (!inRo(typVa)) return undefined;
    const n = readName(nameVa);
    return n && { ...n, offset: u64(va + 16) };
  };
  const arrays = new Map();
  for (let o = ro.offset; o + 8 <= roEnd; o += 8) {
    if (bin.readUInt32LE(o + 4) !== 0 || !records.has(bin.readUInt32LE(o))) continue;
    let start = o - ro.offset + ro.addr;
    for (;;) {
      const prev = field(start - 24);
      const cur = field(start);
      if (!prev || !cur || prev.offset >= cur.offset) break;
      start -= 24;
    }
    if (arrays.has(start)) continue;
    const list = [];
    for (let va = start; ; va += 24) {
      const f = field(va);
      if (!f || (list.length > 0 && f.offset <= list[list.length - 1].offset)) break;
      list.push(f);
    }
    arrays.set(start, list);
  }

  // 3. The struct types owning those arrays: abi.StructType{Type (48 bytes), PkgPath, Fields []StructField}.
  const byMessage = new Map();
  for (let o = ro.offset; o + 8 <= roEnd; o += 8) {
    if (bin.readUInt32LE(o + 4) !== 0) continue;
    const fieldsVa = bin.readUInt32LE(o);
    const candidates = arrays.get(fieldsVa);
    if (!candidates) continue;
    const header = o - 56;
    // The forward walk may run past the array's end; the struct type knows its field count.
    const count = Number(bin.readBigUInt64LE(header + 64));
    if ((bin[header + 23] & 0x1f) !== 25 || count === 0 || count > candidates.length) continue;
    const list = candidates.slice(0, count);
    const tflag = bin[header + 20];
    let typeName = readName(base + bin.readInt32LE(header + 40))?.name;
    if (!typeName) continue;
    if (tflag & 2) typeName = typeName.slice(1); // tflagExtraStar
    let pkgPath;
    if (tflag & 1) pkgPath = readName(base + bin.readInt32LE(header + 80))?.name; // uncommonType.PkgPath
    if (!pkgPath) pkgPath = readName(u64(header - ro.offset + ro.addr + 48))?.name;
    if (!pkgPath) continue;
    const message = `${pkgPath.replaceAll('/', '.').replaceAll('-', '_')}.${typeName.slice(typeName.indexOf('.') + 1)}`;
    const tags = new Map();
    for (const f of list) {
      const pb = /protobuf:"([^"]*)"/.exec(f.tag);
      const js = /json:"([^"]*)"/.exec(f.tag);
      if (!pb || !js) continue;
      const number = Number(pb[1].split(',')[1]);
      if (Number.isInteger(number)) tags.set(number, { json: js[1], goName: f.name });
    }
    byMessage.set(message, tags);
  }
  return byMessage;
}

// ---------------------------------------------------------------------------------------------------------
// Rendering descriptors as .proto text

function renderProto(fd, goTags, source) {
  const lines = [LICENSE];
  lines.push(
    `// Rendered by packages/server/scripts/extract-proto.mjs from the FileDescriptorProto compiled into`,
    `// ${source}, with the gogoproto options kept and each field's Go json tag recorded as`,
    `// (gogoproto.jsontag). Regenerate rather than edit.`,
    '',
    'syntax = "proto2";',
    '',
    `package ${fd.package};`,
    '',
  );
  for (const dep of fd.deps) lines.push(`import "${dep}";`);
  lines.push('');
  if (fd.goPackage) lines.push(`option go_package = "${fd.goPackage}";`, '');
  const typeOf = (f) => (f.type === 11 || f.type === 14 ? f.typeName : SCALARS[f.type]);
  for (const m of fd.messages) {
    const full = `${fd.package}.${m.name}`;
    const tags = goTags.get(full);
    const entries = new Map(m.nested.filter((n) => n.mapEntry).map((n) => [`.${full}.${n.name}`, n]));
    if (m.nested.some((n) => !n.mapEntry)) throw new Error(`${full}: nested messages are not supported`);
    lines.push(`message ${m.name} {`);
    for (const f of m.fields) {
      const opts = [];
      if (f.options.customname) opts.push(`(gogoproto.customname) = "${f.options.customname}"`);
      if (f.options.nullable === false) opts.push('(gogoproto.nullable) = false');
      for (const k of ['casttype', 'castkey', 'castvalue']) {
        if (f.options[k]) opts.push(`(gogoproto.${k}) = "${f.options[k]}"`);
      }
      if (f.options.packed !== undefined) opts.push(`packed = ${f.options.packed}`);
      const tag = tags?.get(f.number);
      if (tag) opts.push(`(gogoproto.jsontag) = "${tag.json}"`);
      const suffix = opts.length > 0 ? ` [${opts.join(', ')}]` : '';
      const entry = f.label === 3 && f.type === 11 ? entries.get(f.typeName) : undefined;
      if (entry) {
        const [k, v] = [entry.fields.find((x) => x.number === 1), entry.fields.find((x) => x.number === 2)];
        lines.push(`  map<${typeOf(k)}, ${typeOf(v)}> ${f.name} = ${f.number}${suffix};`);
      } else {
        const label = f.label === 3 ? 'repeated' : f.label === 2 ? 'required' : 'optional';
        lines.push(`  ${label} ${typeOf(f)} ${f.name} = ${f.number}${suffix};`);
      }
    }
    lines.push('}', '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

function refreshFromBinary(path) {
  const bin = readFileSync(path);
  const descriptors = embeddedDescriptors(bin);
  const goTags = goStructTags(bin);
  const wanted = new Set();
  const visit = (name) => {
    if (wanted.has(name) || name.startsWith('github.com/gogo/')) return;
    const fd = descriptors.get(name);
    if (!fd) throw new Error(`${name} is not compiled into ${path}`);
    wanted.add(name);
    fd.deps.forEach(visit);
  };
  for (const file of BINARY_FILES) visit(file);
  const version = JSON.parse(execFileSync(path, ['version', '--client', '-o', 'json'], { encoding: 'utf8' }))
    .clientVersion?.gitVersion;
  const source = `kubectl ${version ?? '(unknown version)'}`;
  for (const name of [...wanted].sort()) {
    const file = join(protoRoot, ...name.split('/'));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, renderProto(descriptors.get(name), goTags, source));
    console.log(`wrote ${relative(process.cwd(), file)}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Parsing .proto text

function tokenize(text, file) {
  const tokens = [];
  const re =
    /\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/|"((?:[^"\\]|\\.)*)"|([A-Za-z_.][A-Za-z0-9_.]*)|(-?\d+)|([{}[\]=;<>,()])/y;
  let m;
  re.lastIndex = 0;
  while (re.lastIndex < text.length) {
    const at = re.lastIndex;
    m = re.exec(text);
    if (!m) throw new Error(`${file}: cannot tokenize at ${JSON.stringify(text.slice(at, at + 30))}`);
    if (m[1] !== undefined) tokens.push({ s: m[1] });
    else if (m[2] !== undefined) tokens.push(m[2]);
    else if (m[3] !== undefined) tokens.push(m[3]);
    else if (m[4] !== undefined) tokens.push(m[4]);
  }
  return tokens;
}

function parseProto(text, file) {
  const t = tokenize(text, file);
  let i = 0;
  const peek = () => t[i];
  const next = () => {
    if (i >= t.length) throw new Error(`${file}: unexpected end`);
    return t[i++];
  };
  const expect = (s) => {
    const got = next();
    if (got !== s) throw new Error(`${file}: expected ${s}, got ${JSON.stringify(got)}`);
  };
  const value = () => {
    const v = next();
    if (typeof v === 'object') return v.s;
    if (v === 'true' || v === 'false') return v === 'true';
    return /^-?\d+$/.test(v) ? Number(v) : v;
  };
  const out = { package: '', messages: [] };
  const parseOptions = () => {
    const opts = {};
    if (peek() !== '[') return opts;
    next();
    for (;;) {
      let key;
      if (peek() === '(') {
        next();
        key = next();
        expect(')');
      } else key = next();
      expect('=');
      opts[key.replace(/^gogoproto\./, '')] = value();
      const sep = next();
      if (sep === ']') return opts;
      if (sep !== ',') throw new Error(`${file}: bad option list`);
    }
  };
  while (i < t.length) {
    const kw = next();
    if (kw === 'syntax') {
      expect('=');
      if (value() !== 'proto2') throw new Error(`${file}: only proto2 is supported`);
      expect(';');
    } else if (kw === 'package') {
      out.package = next();
      expect(';');
    } else if (kw === 'import') {
      while (next() !== ';');
    } else if (kw === 'option') {
      while (next() !== ';');
    } else if (kw === 'message') {
      const msg = { name: next(), fields: [] };
      expect('{');
      while (peek() !== '}') {
        let label = next();
        let type;
        let key;
        if (label === 'map') {
          expect('<');
          key = next();
          expect(',');
          type = next();
          expect('>');
        } else if (label === 'optional' || label === 'repeated' || label === 'required') {
          type = next();
        } else {
          throw new Error(`${file}: ${msg.name}: unsupported declaration ${JSON.stringify(label)}`);
        }
        const name = next();
        expect('=');
        const number = value();
        const options = parseOptions();
        expect(';');
        if (label === 'map') label = 'map';
        msg.fields.push({ label, type, key, name, number, options });
      }
      expect('}');
      out.messages.push(msg);
    } else {
      throw new Error(`${file}: unsupported top-level ${JSON.stringify(kw)}`);
    }
  }
  return out;
}

function resolveType(name, pkg, known) {
  if (SCALAR_NAMES.has(name)) return name;
  if (name.startsWith('.')) {
    if (!known.has(name.slice(1))) throw new Error(`unknown type ${name}`);
    return name.slice(1);
  }
  const parts = pkg.split('.');
  for (let n = parts.length; n >= 0; n--) {
    const candidate = [...parts.slice(0, n), name].join('.');
    if (known.has(candidate)) return candidate;
  }
  throw new Error(`unknown type ${name} in package ${pkg}`);
}

function listProtoFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? listProtoFiles(join(dir, e.name))
      : e.name.endsWith('.proto')
        ? [join(dir, e.name)]
        : [],
  );
}

// ---------------------------------------------------------------------------------------------------------
// The table

function generate() {
  const parsed = listProtoFiles(protoRoot).map((file) => ({
    file: relative(protoRoot, file).split(sep).join('/'),
    ...parseProto(readFileSync(file, 'utf8'), file),
  }));
  const known = new Set(parsed.flatMap((p) => p.messages.map((m) => `${p.package}.${m.name}`)));
  const messages = new Map();
  for (const p of parsed) {
    for (const m of p.messages) {
      const full = `${p.package}.${m.name}`;
      const overlay = p.package === APIEXTENSIONS_PACKAGE ? APIEXTENSIONS_GO_FIELDS[m.name] : undefined;
      const overlayTokens = overlay === undefined ? undefined : overlay.split(' ').filter(Boolean);
      if (overlayTokens && overlayTokens.length !== m.fields.length) {
        throw new Error(
          `${full}: APIEXTENSIONS_GO_FIELDS has ${overlayTokens.length} entries for ${m.fields.length} fields`,
        );
      }
      messages.set(
        full,
        m.fields.map((f, idx) => {
          let json = f.options.jsontag;
          let pointer = f.options.nullable !== false;
          const tok = overlayTokens?.[idx];
          if (tok !== undefined) {
            pointer = tok.startsWith('*');
            json = tok.replace(/^\*/, '').replace(/\?$/, ',omitempty');
          }
          const type =
            f.label === 'map'
              ? `map<${resolveType(f.key, p.package, known)},${resolveType(f.type, p.package, known)}>`
              : resolveType(f.type, p.package, known);
          return {
            number: f.number,
            protoName: f.name,
            json,
            pointer,
            repeated: f.label === 'repeated',
            type,
          };
        }),
      );
    }
  }

  // Reachability from the roots.
  const keep = new Set();
  const visit = (name) => {
    if (keep.has(name)) return;
    const fieldsOf = messages.get(name);
    if (!fieldsOf) throw new Error(`message ${name} is not defined under scripts/proto`);
    keep.add(name);
    for (const f of fieldsOf) {
      const m = /^map<[^,]+,(.+)>$/.exec(f.type);
      const t = m ? m[1] : f.type;
      if (!SCALAR_NAMES.has(t)) visit(t);
    }
  };
  for (const [, , message] of ROOTS) visit(message);
  for (const message of EXTRA_MESSAGES) visit(message);

  const out = {};
  for (const name of [...keep].sort()) {
    const custom = CUSTOM_JSON[name] !== undefined;
    out[name] = messages
      .get(name)
      .slice()
      .sort((a, b) => a.number - b.number)
      .map((f) => {
        let jsonName = f.protoName;
        let flags = '';
        if (!custom) {
          if (f.json === undefined) throw new Error(`${name}.${f.protoName}: no Go json tag is known`);
          const [tagName, ...opts] = f.json.split(',');
          if (opts.includes('inline')) flags += 'i';
          else if (tagName === '-' || tagName === '')
            throw new Error(`${name}.${f.protoName}: json tag "${f.json}"`);
          else jsonName = tagName;
          if (opts.includes('omitempty')) flags += 'o';
        }
        if (f.repeated) flags += 'r';
        if (f.pointer && !f.repeated && !f.type.startsWith('map<') && f.type !== 'bytes') flags += 'p';
        return flags ? [f.number, jsonName, f.type, flags] : [f.number, jsonName, f.type];
      });
  }
  const kinds = Object.fromEntries(
    ROOTS.map(([apiVersion, kind, message]) => [`${apiVersion}/${kind}`, message]),
  );
  const sources = parsed
    .filter((p) => [...keep].some((k) => k.startsWith(`${p.package}.`)))
    .map((p) => p.file)
    .sort();
  const table = {
    comment:
      'Generated by packages/server/scripts/extract-proto.mjs from packages/server/scripts/proto. Do not edit.',
    sources,
    flags: 'i = embedded json:",inline", o = omitempty, r = repeated, p = Go pointer (present only when set)',
    kinds,
    custom: Object.fromEntries(
      Object.entries(CUSTOM_JSON)
        .filter(([name]) => keep.has(name))
        .sort(),
    ),
    messages: out,
  };
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(table, null, 0)}\n`);
  console.log(
    `wrote ${Object.keys(out).length} messages for ${ROOTS.length} kinds to ${relative(process.cwd(), target)}`,
  );
}

const fromBinary = process.argv.indexOf('--from-binary');
if (fromBinary !== -1) {
  const path = process.argv[fromBinary + 1];
  if (!path) throw new Error('--from-binary needs the path of a kubectl binary');
  refreshFromBinary(path);
}
generate();
