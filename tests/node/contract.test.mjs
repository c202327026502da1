// The contract as data: `tally methods --json` prints every method's declaration, the wasm engine prints the same,
// and the files generated from it (docs/API.md's reference, web/tally-api.d.ts) are not stale.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadEngine, nativeCli, root } from './engine.mjs';
import { BEGIN, END, GENERATED, generate, readDeclarations } from '../../scripts/upkeep/gen-contract.mjs';

const declared = readDeclarations(nativeCli);

test('methods --json declares every method that `tally methods` lists', () => {
  const listed = execFileSync(nativeCli, ['methods'], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((line) => line.trim().split(':')[0]);
  assert.deepEqual(
    declared.map((m) => m.name),
    listed,
  );
  const undeclared = declared.filter((m) => !m.declared).map((m) => m.name);
  assert.deepEqual(undeclared, [], `methods without a declaration: ${undeclared.join(', ')}`);
  for (const m of declared) {
    assert.ok(Array.isArray(m.args) && Array.isArray(m.result), m.name);
    for (const a of m.args) {
      assert.ok(a.name && a.type && typeof a.default === 'string' && a.doc, `${m.name}.${a.name}`);
      assert.match(a.flag, /^--[a-z0-9-]+$/, `${m.name}.${a.name}`);
      if (a.type === 'enum') assert.ok(a.values.length >= 2, `${m.name}.${a.name} lists its values`);
    }
  }
});

test('the wasm engine declares the same contract as the native CLI', async () => {
  const engine = await loadEngine();
  assert.deepEqual(engine.call('methods', { detail: true }), declared);
});

test('a call with an undeclared argument is refused by the wasm engine too, naming it', async () => {
  const engine = await loadEngine();
  assert.throws(
    () => engine.call('kv_cache', { model: 'gpt2-small', context: 1024, contxt: 5 }),
    (e) => e.field === 'contxt' && /^kv_cache takes no argument "contxt"; it accepts model, /.test(e.message),
  );
});

test('the generated files are up to date (regenerated in memory, compared with the tree)', () => {
  const files = generate(declared);
  assert.deepEqual(Object.keys(files).sort(), [...GENERATED].sort());
  for (const [file, text] of Object.entries(files))
    assert.equal(
      readFileSync(path.join(root, file), 'utf8'),
      text,
      `${file} is stale: run node scripts/upkeep/gen-contract.mjs`,
    );
});

test('docs/API.md keeps its prose outside the generated reference, which lists every argument', () => {
  const doc = readFileSync(path.join(root, 'docs/API.md'), 'utf8');
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  assert.ok(start > 0 && end > start);
  assert.match(doc.slice(0, start), /^# tally JSON API/);
  const reference = doc.slice(start, end);
  for (const m of declared) {
    assert.ok(reference.includes(`### \`${m.name}\``), m.name);
    for (const a of m.args) assert.ok(reference.includes(`| \`${a.name}\` |`), `${m.name}.${a.name}`);
  }
});

test('web/tally-api.d.ts types call() with every method and its required arguments', () => {
  const dts = readFileSync(path.join(root, 'web/tally-api.d.ts'), 'utf8');
  assert.match(dts, /call<M extends MethodName>\(method: M, args\?: MethodArgs\[M\]\): MethodResults\[M\];/);
  const kv = dts.slice(dts.indexOf('export interface KvCacheArgs {'));
  assert.match(kv.slice(0, kv.indexOf('}')), /\n {2}context: number \| string;/);
  assert.match(kv.slice(0, kv.indexOf('}')), /\n {2}batch\?: number \| string \| null;/);
  for (const m of declared) assert.ok(dts.includes(`  ${m.name}: `), m.name);
});
