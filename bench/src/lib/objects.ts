import { randomUUID } from 'node:crypto';

/** Size of the ConfigMaps the bench creates, as sent in the POST body. */
export const OBJECT_BYTES = 300;

/** A ConfigMap of exactly {@link OBJECT_BYTES} bytes of JSON (names up to 16 characters). */
export function configMap(namespace: string, name: string): string {
  const base = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { app: 'kubeloop-bench', tier: 'small' } },
    data: { payload: '' },
  };
  const pad = OBJECT_BYTES - JSON.stringify(base).length;
  base.data.payload = 'x'.repeat(Math.max(0, pad));
  return JSON.stringify(base);
}

/**
 * The value kube-apiserver would keep in etcd for {@link configMap}: the same object with the
 * server-set `uid` and `creationTimestamp` (kube-apiserver stores protobuf of about this size).
 */
export function storedConfigMap(namespace: string, name: string): string {
  const obj = JSON.parse(configMap(namespace, name)) as { metadata: Record<string, unknown> };
  obj.metadata.uid = randomUUID();
  obj.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return JSON.stringify(obj);
}

/** `cm-000042`: zero-padded so that key order is creation order. */
export function objectName(i: number): string {
  return `cm-${String(i).padStart(6, '0')}`;
}

/** Whether `name` is one of the bench's objects (see {@link objectName}). */
export function isBenchObject(name: string): boolean {
  return name.startsWith('cm-');
}
