import { defineConfig } from 'vitest/config';

// Tests import workspace packages through their "source" export condition, so `npm test`
// exercises the TypeScript sources directly and never a stale build.
export default defineConfig({
  resolve: { conditions: ['source', 'import', 'default'] },
  ssr: { resolve: { conditions: ['source', 'import', 'default'], externalConditions: ['source'] } },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'examples/*/src/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most tests wait on sockets, timers and child processes (kubectl, operators, pods), not on
    // the CPU: two workers on CI's two cores (vitest's default there is one) keep the suite
    // inside CI's budget.
    maxWorkers: 2,
  },
});
