import type { KubeObject } from 'kubeloop/client';
import type { CrdSource } from 'kubeloop/manifests';
import { Home, homeSample } from './api/ajd/v1/home.js';
// +kubeloop:scaffold:imports

/** The kinds the project defines, each with the example `config/samples` gets. */
export const resources: Array<{ resource: CrdSource; sample?: KubeObject }> = [
  { resource: Home, sample: homeSample },
  // +kubeloop:scaffold:resources
];
