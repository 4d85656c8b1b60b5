import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const protoRoot = join(here, 'proto');
export const target = join(here, '../src/protobuf/k8s-proto.generated.json');

/** The kinds whose request bodies are decoded: [apiVersion, kind, proto message]. `*` = any apiVersion. */
export const ROOTS = [
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
export const EXTRA_MESSAGES = ['k8s.io.apimachinery.pkg.runtime.Unknown'];

/** The proto files taken from the binary (their imports are followed too). */
export const BINARY_FILES = [
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
export const APIEXTENSIONS_GO_FIELDS = {
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
export const APIEXTENSIONS_PACKAGE = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1';

/**
 * Messages whose JSON form comes from a Go MarshalJSON (or a non-struct Go type) rather than from struct
 * tags; the decoder implements each of these forms by name.
 */
export const CUSTOM_JSON = {
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

export const SCALARS = {
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
export const SCALAR_NAMES = new Set(Object.values(SCALARS));

export const LICENSE = `/*
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
