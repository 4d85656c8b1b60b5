// The server's tests reach kubectl through the test environment's public helpers.
export {
  eventually,
  type KubectlEnv,
  type KubectlResult,
  startKubectlEnv,
} from '../src/testing/index.js';
