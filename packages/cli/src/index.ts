/** `@kubeloop/cli`: the `kubeloop` command as a library (for tests and embedding). */
export { createProgram } from './program.js';
