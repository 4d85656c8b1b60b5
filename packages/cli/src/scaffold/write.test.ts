import { describe, expect, it } from 'vitest';
import { addNamedImports, insertBlock } from './write.js';

describe('insertBlock', () => {
  const text = 'a\n  // +kubeloop:scaffold:things\nz\n';
  it('puts the block before the marker’s line, once', () => {
    const once = insertBlock(text, 'things', 'export const b = 1;', 'const b =');
    expect(once).toBe('a\nexport const b = 1;\n  // +kubeloop:scaffold:things\nz\n');
    expect(insertBlock(once, 'things', 'export const b = 1;', 'const b =')).toBe(once);
  });
  it('names the marker and gives the block when the marker is gone', () => {
    expect(() => insertBlock('a\n', 'things', 'b', 'b')).toThrow(
      /no "\/\/ \+kubeloop:scaffold:things" marker: add this yourself:\nb/,
    );
  });
});

describe('addNamedImports', () => {
  it('merges names into the import of the module, sorted as Biome sorts them, each once', () => {
    const text = "import { defaulter } from 'kubeloop/webhook';\nimport { Foo } from './foo.js';\n";
    expect(
      addNamedImports(text, 'kubeloop/webhook', ['validator', 'type ValidationResult', 'defaulter']),
    ).toBe(
      "import { defaulter, type ValidationResult, validator } from 'kubeloop/webhook';\nimport { Foo } from './foo.js';\n",
    );
    expect(addNamedImports(text, 'kubeloop/webhook', ['defaulter'])).toBe(text);
  });
  it('adds a package’s import after the last package import, a relative one after the last import', () => {
    const text = "import { a } from 'kubeloop/runtime';\nimport { b } from './b.js';\n\nrun();\n";
    expect(addNamedImports(text, 'kubeloop/webhook', ['w'])).toBe(
      "import { a } from 'kubeloop/runtime';\nimport { w } from 'kubeloop/webhook';\nimport { b } from './b.js';\n\nrun();\n",
    );
    expect(addNamedImports(text, './c.js', ['c'])).toBe(
      "import { a } from 'kubeloop/runtime';\nimport { b } from './b.js';\nimport { c } from './c.js';\n\nrun();\n",
    );
  });
});

describe('addNamedImports among packages', () => {
  it('puts a package import in order among the others', () => {
    const text = "import { describe } from 'vitest';\nimport { a } from './a.js';\n";
    expect(addNamedImports(text, 'kubeloop/webhook', ['expectRoundTrip'])).toBe(
      "import { expectRoundTrip } from 'kubeloop/webhook';\nimport { describe } from 'vitest';\nimport { a } from './a.js';\n",
    );
  });
});
