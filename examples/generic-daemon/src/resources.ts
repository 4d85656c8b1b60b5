import type { KubeObject } from 'kubeloop/client';
import type { CrdSource } from 'kubeloop/manifests';
import { GenericDaemon, genericDaemonSample } from './api/mydomain/v1beta1/genericdaemon.js';
// +kubeloop:scaffold:imports

/** The kinds the project defines, each with the example `config/samples` gets. */
export const resources: Array<{ resource: CrdSource; sample?: KubeObject }> = [
  { resource: GenericDaemon, sample: genericDaemonSample },
  // +kubeloop:scaffold:resources
];
