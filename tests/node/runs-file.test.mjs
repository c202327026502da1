// scripts/build/runs-file.mjs: the one place a placeholder's runs_file becomes the text the engine scores, shared by
// the site build and the prerender test.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withRunsFile } from '../../scripts/build/runs-file.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('arguments without runs_file pass through as the same object', () => {
  const args = { runs: '[]', gpus: 8 };
  assert.equal(withRunsFile(args, root), args);
});

test('runs_file becomes runs, the validation file text, and the other arguments stay', () => {
  const out = withRunsFile({ runs_file: 'runs-modern.json', half: 'fit' }, root);
  assert.deepEqual(Object.keys(out).sort(), ['half', 'runs']);
  assert.equal(out.runs, readFileSync(path.join(root, 'content/validation/runs-modern.json'), 'utf8'));
});

test('a runs_file outside content/validation/ or missing is refused by name', () => {
  for (const name of ['../presets/stacks/generic.json', '/etc/passwd', 'no-such-runs.json'])
    assert.throws(
      () => withRunsFile({ runs_file: name }, root),
      new RegExp(`runs_file "${name.replace(/[./]/g, '\\$&')}" is not a file`),
    );
});
