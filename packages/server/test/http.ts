// The server's white-box tests send raw requests through the test environment's public helpers.
export { type HttpOptions, type HttpResult, httpClient } from '../src/testing/index.js';
