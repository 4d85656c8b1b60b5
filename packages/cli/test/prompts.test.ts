/**
 * `kubeloop create api` in a terminal asks for what the command line left out (@clack/prompts),
 * as kubebuilder asks; outside one (CI) it fails naming the flag (see scaffold.test.ts). The
 * terminal is a pseudo-terminal of util-linux's `script`; each answer is typed once its question
 * shows.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bin, kubeloop, scratchDir } from './support.js';

const hasScript = spawnSync('script', ['--version']).status === 0;
const dir = scratchDir('prompts-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!hasScript)('kubeloop create in a terminal', () => {
  it('asks for the missing kind and the two choices, then scaffolds', async () => {
    expect(kubeloop(['init', 'p', '--domain', 'example.com', '--no-install'], dir).code).toBe(0);
    const project = join(dir, 'p');
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.CI;
    const child = spawn(
      'script',
      [
        '-qec',
        `stty cols 200 rows 50; ${process.execPath} ${bin} create api --group web --version v1`,
        '/dev/null',
      ],
      { cwd: project, env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    // Each question once, answered when it shows: the kind, then Enter for the two defaults (yes).
    const answers: Array<[string, string]> = [
      ['The kind', 'Shop\r'],
      ['Create the Shop resource', '\r'],
      ['Create a controller for Shop', '\r'],
    ];
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      const next = answers[0];
      if (next && output.includes(next[0])) {
        answers.shift();
        child.stdin.write(next[1]);
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(answers, output).toEqual([]);
    expect(code, output).toBe(0);
    expect(existsSync(join(project, 'src/api/web/v1/shop.ts'))).toBe(true);
    expect(existsSync(join(project, 'src/controller/shop.ts'))).toBe(true);
  });

  it('create webhook asks which webhooks when no type flag is given', async () => {
    const project = join(dir, 'p');
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.CI;
    const child = spawn(
      'script',
      [
        '-qec',
        `stty cols 200 rows 50; ${process.execPath} ${bin} create webhook --group web --version v1 --kind Shop`,
        '/dev/null',
      ],
      { cwd: project, env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    // Space ticks the first choice (defaulting), Enter submits.
    let output = '';
    let answered = false;
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      if (!answered && output.includes('Which webhooks?')) {
        answered = true;
        child.stdin.write(' ');
        child.stdin.write('\r');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, output).toBe(0);
    expect(readFileSync(join(project, 'src/webhooks/shop.ts'), 'utf8')).toContain(
      'export const shopDefaulter',
    );
    expect(existsSync(join(project, 'src/webhooks/shop.test.ts'))).toBe(true);
  });
});
