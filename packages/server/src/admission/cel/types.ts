/**
 * The CEL types of the admission variables `request` and `namespaceObject`
 * (`BuildRequestType`, `BuildNamespaceType` of k8s.io/apiserver/pkg/admission/plugin/cel), as
 * cel-js type declarations.
 */
import type { Environment } from '@marcbachmann/cel-js';

/** Registers `kubernetes.AdmissionRequest`, `kubernetes.Namespace` and their parts on `env`. */
export function registerAdmissionTypes(env: Environment): void {
  env.registerType('kubernetes.GroupVersionKind', {
    fields: { group: 'string', version: 'string', kind: 'string' },
  });
  env.registerType('kubernetes.GroupVersionResource', {
    fields: { group: 'string', version: 'string', resource: 'string' },
  });
  env.registerType('kubernetes.UserInfo', {
    fields: {
      username: 'string',
      uid: 'string',
      groups: 'list<string>',
      extra: 'map<string, list<string>>',
    },
  });
  env.registerType('kubernetes.AdmissionRequest', {
    fields: {
      kind: 'kubernetes.GroupVersionKind',
      resource: 'kubernetes.GroupVersionResource',
      subResource: 'string',
      requestKind: 'kubernetes.GroupVersionKind',
      requestResource: 'kubernetes.GroupVersionResource',
      requestSubResource: 'string',
      name: 'string',
      namespace: 'string',
      operation: 'string',
      userInfo: 'kubernetes.UserInfo',
      dryRun: 'bool',
      options: 'dyn',
    },
  });
  env.registerType('kubernetes.NamespaceSpec', { fields: { finalizers: 'list<string>' } });
  env.registerType('kubernetes.NamespaceCondition', {
    fields: {
      status: 'string',
      type: 'string',
      lastTransitionTime: 'google.protobuf.Timestamp',
      message: 'string',
      reason: 'string',
    },
  });
  env.registerType('kubernetes.NamespaceStatus', {
    fields: { conditions: 'list<kubernetes.NamespaceCondition>', phase: 'string' },
  });
  env.registerType('kubernetes.NamespaceMetadata', {
    fields: {
      name: 'string',
      generateName: 'string',
      namespace: 'string',
      labels: 'map<string, string>',
      annotations: 'map<string, string>',
      UID: 'string',
      creationTimestamp: 'google.protobuf.Timestamp',
      deletionGracePeriodSeconds: 'int',
      deletionTimestamp: 'google.protobuf.Timestamp',
      generation: 'int',
      resourceVersion: 'string',
      finalizers: 'list<string>',
    },
  });
  env.registerType('kubernetes.Namespace', {
    fields: {
      metadata: 'kubernetes.NamespaceMetadata',
      spec: 'kubernetes.NamespaceSpec',
      status: 'kubernetes.NamespaceStatus',
    },
  });
}
