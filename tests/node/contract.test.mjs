// The contract as data: `tally methods --json` prints every method's declaration, the wasm engine prints the same,
// and the files generated from it (docs/API.md's reference, web/tally-api.d.ts) are not stale.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadEngine, nativeCli, root } from './engine.mjs';
import {
  BEGIN,
  END,
  GENERATED,
  generate,
  readDeclarations,
  readSamples,
  sharedGroups,
} from '../../scripts/upkeep/gen-contract.mjs';
import { EXAMPLES } from '../../scripts/upkeep/contract-examples.mjs';
import { cases } from '../../scripts/upkeep/compare-outputs.mjs';

const declared = readDeclarations(nativeCli);
const samples = readSamples(declared, nativeCli);

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
  const files = generate(declared, samples);
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
  const kv = dts.slice(dts.indexOf('export interface KvCacheArgs '));
  assert.match(kv.slice(0, kv.indexOf('}')), /\n {2}context: number \| string;/);
  for (const m of declared) assert.ok(dts.includes(`  ${m.name}: `), m.name);
});

test('every declared method has an example call, and each succeeds', () => {
  assert.deepEqual(
    declared.map((m) => m.name).filter((name) => !(name in EXAMPLES)),
    [],
  );
  for (const m of declared) assert.ok(samples[m.name].length >= 1 && samples[m.name].every((r) => r != null), m.name);
});

test("every method's declared result fields are exactly the top-level keys its example calls return", () => {
  // The union over a method's examples (a list result: over its items); a key no example returns needs an example.
  const wrong = [];
  for (const m of declared) {
    const items = samples[m.name].flatMap((r) => (Array.isArray(r) ? r : [r]));
    const returned = new Set(items.flatMap((r) => (r && typeof r === 'object' ? Object.keys(r) : [])));
    const names = m.result.map((f) => f.name);
    const repeated = names.filter((n, i) => names.indexOf(n) !== i);
    const undeclared = [...returned].filter((k) => !names.includes(k));
    const unreturned = names.filter((n) => !returned.has(n));
    if (repeated.length) wrong.push(`${m.name} declares twice: ${repeated.join(', ')}`);
    if (undeclared.length) wrong.push(`${m.name} returns undeclared: ${undeclared.join(', ')}`);
    if (unreturned.length) wrong.push(`${m.name} declares but never returns: ${unreturned.join(', ')}`);
  }
  assert.deepEqual(wrong, []);
});

test('arguments several methods share are declared once in the .d.ts and extended, not repeated', () => {
  const dts = readFileSync(path.join(root, 'web/tally-api.d.ts'), 'utf8');
  const groups = sharedGroups(declared);
  const model = groups.find((g) => g.args.map((a) => a.name).join() === 'model,hf_config,encoder_head');
  assert.ok(model, 'the model arguments form one group');
  assert.ok(model.methods.includes('kv_cache') && model.methods.includes('step_time'));
  assert.match(dts, new RegExp(`export interface KvCacheArgs extends [^{]*\\b${model.name}\\b`));
  // training_cost declares the step model's layout arguments with when they apply (mfu predicted): the same
  // arguments as step_time's and plan's, so one group, with the condition said once in TrainingCostArgs.
  const layout = groups.find((g) => g.args.some((a) => a.name === 'tp_comm_overlap'));
  assert.ok(
    layout && ['training_cost', 'step_time', 'plan'].every((n) => layout.methods.includes(n)),
    'one layout group',
  );
  assert.match(dts, new RegExp(`training_cost: [^\\n]*${layout.name} applies only with \`mfu\` predicted`));
  // Each declaration's text appears once: a shared argument is written in its group only.
  for (const m of declared)
    for (const a of m.args) {
      const line = `  ${a.name}${a.default === 'required' ? '' : '?'}: `;
      const inGroup = groups.some((g) => g.methods.includes(m.name) && g.args.some((b) => b.name === a.name));
      const own = dts.slice(
        dts.indexOf(`export interface ${m.name.replace(/(^|_)([a-z0-9])/g, (_, __, c) => c.toUpperCase())}Args `),
      );
      const body = own.slice(0, own.indexOf('\n\n'));
      assert.equal(
        body.includes(`\n${line}`),
        !inGroup,
        `${m.name}.${a.name} ${inGroup ? 'comes from its group' : 'is its own'}`,
      );
    }
});

test('results carry real types: numbers, strings, booleans and shaped objects, not unknown', () => {
  const dts = readFileSync(path.join(root, 'web/tally-api.d.ts'), 'utf8');
  const body = (name) => {
    const from = dts.slice(dts.indexOf(`export interface ${name} {`));
    return from.slice(0, from.indexOf('\n}'));
  };
  assert.match(body('KvCacheResult'), /\n {2}bytes_per_token\?: number;/);
  assert.match(body('StepTimeResult'), /\n {2}fits\?: boolean;/);
  assert.match(body('StepTimeResult'), /\n {2}layout\?: \{ [^}]*\btp: number;/);
  const fields = declared.flatMap((m) => m.result.map((f) => `${m.name}.${f.name}`));
  const untyped = [...dts.matchAll(/\n {2}([a-z0-9_]+)\?: unknown;/g)];
  assert.ok(untyped.length < fields.length / 10, `${untyped.length} of ${fields.length} result fields are unknown`);
});

test('web/tally-api.d.ts type-checks with tsc, and the arguments and results of other calls fit its types', () => {
  // The calls compare-outputs.mjs makes (every preset through the main methods): none is an example, so a result
  // shape the examples never showed (a field that is sometimes null) fails here.
  const calls = cases(nativeCli).slice(0, 400);
  const lines = ["import type { MethodArgs, MethodResults } from './tally-api';", ''];
  let checked = 0;
  for (const [i, [method, args]] of calls.entries()) {
    if (!declared.some((m) => m.name === method)) continue;
    let envelope;
    try {
      envelope = JSON.parse(execFileSync(nativeCli, ['call', method, JSON.stringify(args)], { encoding: 'utf8' }));
    } catch {
      continue; // refused calls (the fuzz seeds) have no result to type
    }
    // A null argument is an absent one (docs/API.md): null keys (1e400 reads as Infinity, which JSON writes as
    // null) are left out of the typed copy.
    const given = Object.fromEntries(Object.entries(JSON.parse(JSON.stringify(args))).filter(([, v]) => v !== null));
    lines.push(`export const a${i}: MethodArgs['${method}'] = ${JSON.stringify(given)};`);
    lines.push(`export const r${i}: MethodResults['${method}'] = ${JSON.stringify(envelope.result)};`);
    checked += 1;
  }
  assert.ok(checked > 100, `${checked} calls checked`);
  const dir = mkdtempSync(path.join(tmpdir(), 'tally-dts-'));
  try {
    writeFileSync(path.join(dir, 'tally-api.d.ts'), readFileSync(path.join(root, 'web/tally-api.d.ts'), 'utf8'));
    writeFileSync(path.join(dir, 'check.ts'), lines.join('\n'));
    const tsc = path.join(root, 'node_modules/.bin/tsc');
    try {
      execFileSync(
        tsc,
        [
          '--noEmit',
          // no ambient @types from node_modules: the .d.ts stands alone
          '--typeRoots',
          dir,
          '--strict',
          '--target',
          'es2022',
          '--module',
          'es2022',
          path.join(dir, 'check.ts'),
        ],
        {
          encoding: 'utf8',
          stdio: 'pipe',
        },
      );
    } catch (e) {
      assert.fail(`tsc: ${e.stdout}${e.stderr}`.slice(0, 4000));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
