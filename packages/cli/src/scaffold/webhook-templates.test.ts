import { describe, expect, it } from 'vitest';
import { startTs } from './init-templates.js';
import { addWebhookServerToMain } from './webhook-templates.js';

describe('addWebhookServerToMain', () => {
  it('reads the webhook flags first, gives the rest to the manager and runs the server in it', () => {
    const main = addWebhookServerToMain(startTs());
    expect(main).toContain(
      'const hooks = webhookFlags(process.argv.slice(2));\nconst manager = createManager(managerFlags(hooks.rest, { leaderElectionId: LEADER_ELECTION_ID }));\n' +
        'if (hooks.enabled) new WebhookServer(hooks.options).register(...allWebhooks).setupWithManager(manager);\nawait manager.start();\n',
    );
    expect(main).not.toContain('process.argv.slice(2), {');
  });
  it('gives up on a main.ts that starts the manager otherwise', () => {
    expect(addWebhookServerToMain('const m = createManager();\nawait m.start();\n')).toBeUndefined();
  });
});
