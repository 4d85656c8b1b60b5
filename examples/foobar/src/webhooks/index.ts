import { webhooks as fooBarWebhooks } from './foobar.js';

/** Every webhook of the project, for the webhook server (src/main.ts) and the manifests. */
export const allWebhooks = [...fooBarWebhooks];
