/**
 * The documentation's samples work: every TypeScript block of `docs/` is compiled (strict, as a
 * project `kubeloop init` scaffolds) and run, and what a `console.log(…); // value` comment
 * announces is in its output; every `kubeloop` command line of the pages names a command and
 * options that exist.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { createProgram } from '../src/program.js';
import { tsconfigJson } from '../src/scaffold/init-templates.js';
import { root, scratchDir } from './support.js';

const docs = join(root, 'docs');

/** Every Markdown page of docs/. */
function pages(dir = docs): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? pages(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

/** The fenced blocks of a language in a page. */
function blocks(page: string, lang: string): string[] {
  const text = readFileSync(page, 'utf8');
  return [...text.matchAll(/^( *)```(\w+)\n([\s\S]*?)^\1```/gm)]
    .filter((m) => m[2] === lang)
    .map((m) => (m[3] ?? '').replace(new RegExp(`^${m[1]}`, 'gm'), ''));
}

const samples = pages().flatMap((page) =>
  blocks(page, 'ts').map((code, i) => ({
    name: `${relative(docs, page).replace(/\.md$/, '').replace(/\//g, '-')}-${i + 1}`,
    page: relative(root, page),
    code,
  })),
);

/** The packages' READMEs: their samples are compiled too (not run: they start operators). */
const readmeSamples = ['packages/kubeloop', 'packages/server', 'packages/cli'].flatMap((p) =>
  blocks(join(root, p, 'README.md'), 'ts').map((code, i) => ({
    name: `readme-${p.split('/')[1]}-${i + 1}`,
    page: `${p}/README.md`,
    code,
  })),
);

const dir = scratchDir('docs-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runNode(file: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('the TypeScript samples of docs/', () => {
  it('are there, one page at least each', () => {
    expect(samples.length).toBeGreaterThanOrEqual(6);
    expect(new Set(readmeSamples.map((s) => s.page))).toEqual(
      new Set(['packages/kubeloop/README.md', 'packages/server/README.md']),
    );
  });

  it("compile under a scaffolded project's strict tsconfig, with the packages' README samples", async () => {
    await mkdir(join(dir, 'src'), { recursive: true });
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'docs-samples', type: 'module', private: true }),
    );
    writeFileSync(join(dir, 'tsconfig.json'), tsconfigJson());
    for (const s of [...samples, ...readmeSamples]) writeFileSync(join(dir, 'src', `${s.name}.ts`), s.code);
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      encoding: 'utf8',
    });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });

  it.each(samples.map((s) => [s.name, s] as const))(
    '%s runs and prints what it announces',
    async (_name, s) => {
      const r = await runNode(join(dir, 'dist', `${s.name}.js`));
      expect(r.out, `${s.page}:\n${r.out}`).not.toMatch(/Error:|TypeError/);
      expect(r.code).toBe(0);
      for (const m of s.code.matchAll(/console\.log\(.*\);\s*\/\/ (.+)$/gm)) {
        const announced = (m[1] ?? '').trim();
        if (announced.startsWith('{')) continue;
        const expected = announced.split(/ …|: /)[0]?.trim() ?? '';
        expect(r.out, `${s.page}: ${announced}`).toContain(expected);
      }
    },
  );
});

/** The command of a `kubeloop …` line, and the options it uses. */
function commandOf(program: Command, words: readonly string[]): { command: Command; rest: string[] } {
  let command = program;
  let i = 0;
  for (; i < words.length; i++) {
    const sub = command.commands.find((c) => c.name() === words[i] || c.aliases().includes(words[i] ?? ''));
    if (!sub) break;
    command = sub;
  }
  return { command, rest: words.slice(i) };
}

describe('the kubeloop command lines of docs/', () => {
  it('name commands and options that exist', async () => {
    // With no command, every command is registered (a command line loads only its own).
    const program = await createProgram(['node', 'kubeloop']);
    const lines = pages().flatMap((page) => {
      const text = readFileSync(page, 'utf8');
      const fromBlocks = blocks(page, 'sh').flatMap((b) => b.split('\n'));
      const inline = [...text.matchAll(/`((?:npx )?kubeloop [^`]+)`/g)].map((m) => m[1] ?? '');
      return [...fromBlocks, ...inline]
        .map((l) =>
          l
            .replace(/\s+#.*$/, '')
            .replace(/^.*?(?:npx @kubeloop\/cli|npx kubeloop|kubeloop\.js|^kubeloop)\s+/, (m) =>
              m.includes('kubeloop') ? '' : m,
            ),
        )
        .filter((l, i, all) => all.indexOf(l) === i)
        .filter((l) => !/^(npm|cd|export|kubectl|docker|node)\b/.test(l) && l.trim() !== '')
        .map((l) => ({ page: relative(root, page), line: l }));
    });
    expect(lines.length).toBeGreaterThan(5);
    const wrong: string[] = [];
    for (const { page, line } of lines) {
      const words = line.split(/\s+/).map((w) => w.replace(/^\[|\]$/g, ''));
      if (words[0]?.startsWith('<')) continue; // `kubeloop <command> --help`
      const { command, rest } = commandOf(program, words);
      if (command === program) {
        wrong.push(`${page}: no such command: ${line}`);
        continue;
      }
      const known = new Set([...command.options.map((o) => o.long), '--help']);
      for (const w of rest.filter((x) => x.startsWith('--') && x !== '--')) {
        const flag = w.split('=')[0] ?? '';
        if (!known.has(flag)) wrong.push(`${page}: ${command.name()} has no ${flag}: ${line}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
