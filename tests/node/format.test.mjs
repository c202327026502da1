// The JavaScript is formatted as .prettierrc.json says (issue 16): `npm run format` rewrites it, this checks it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function sources(dir) {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(rel);
    return /\.(m?js)$/.test(entry.name) ? [rel] : [];
  });
}

test('every JavaScript source in web/, scripts/, tests/ and engine/ is formatted by prettier with the committed config', async () => {
  const files = ['web', 'scripts', 'tests', 'engine'].flatMap(sources);
  const unformatted = [];
  let checked = 0;
  for (const file of files) {
    const absolute = path.join(root, file);
    const info = await prettier.getFileInfo(absolute, { ignorePath: path.join(root, '.prettierignore') });
    if (info.ignored) continue;
    const options = await prettier.resolveConfig(absolute);
    assert.ok(options?.printWidth === 120, `${file} finds .prettierrc.json`);
    if (!(await prettier.check(readFileSync(absolute, 'utf8'), { ...options, filepath: absolute })))
      unformatted.push(file);
    checked++;
  }
  assert.ok(checked >= 60, `${checked} files checked`);
  assert.deepEqual(unformatted, [], 'run `npm run format`');
});
