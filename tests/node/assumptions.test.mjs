// The assumptions audit: docs/ASSUMPTIONS.md is generated from the engine and must not be stale; every preset
// has a source for every assumption; the wasm build gives the same audit and the same capacity/dropout
// answers as the native CLI, byte for byte.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { assertSameEnvelopes, nativeCall, root } from './engine.mjs';
import { audit, render } from '../../scripts/upkeep/assumptions.mjs';

test('docs/ASSUMPTIONS.md is what scripts/upkeep/assumptions.mjs generates from the engine (not stale)', () => {
  const current = readFileSync(path.join(root, 'docs/ASSUMPTIONS.md'), 'utf8');
  assert.equal(current, render(audit()), 'run `node scripts/upkeep/assumptions.mjs` and commit docs/ASSUMPTIONS.md');
});

test('every model and hardware preset has a value and a source for every assumption', () => {
  const result = audit();
  const rows = [...result.models, ...result.hardware].flatMap((p) =>
    p.assumptions.map((a) => ({ preset: p.id, ...a })),
  );
  assert.ok(rows.length >= 16 * 6 + 13 * 5);
  const missing = rows.filter((r) => !(r.source?.trim().length > 20) || !String(r.value ?? '').trim());
  assert.deepEqual(
    missing.map((r) => `${r.preset}.${r.id}`),
    [],
  );
});

test('the rendered page lists each preset and fails on a missing source (the check can fail)', () => {
  const result = audit();
  const text = render(result);
  for (const p of [...result.models, ...result.hardware]) assert.ok(text.includes(`(\`${p.id}\`)`), p.id);
  const broken = structuredClone(result);
  broken.models[0].assumptions[0].source = '';
  assert.notEqual(render(broken), text);
});

test('the audit covers exactly the presets the engine offers, and each new architecture and accelerator by its own sources', () => {
  const result = audit();
  const presets = JSON.parse(nativeCall('presets', '{}')).result;
  assert.deepEqual(result.models.map((p) => p.id).sort(), presets.models.map((m) => m.id).sort());
  assert.deepEqual(result.hardware.map((p) => p.id).sort(), presets.hardware.map((h) => h.id).sort());
  const rows = (kind, id) => result[kind].find((p) => p.id === id).assumptions;
  const text = (kind, id) =>
    rows(kind, id)
      .map((a) => `${a.value} | ${a.source}`)
      .join('\n');
  // The attention each new model caches, with the report it comes from.
  assert.match(
    text('models', 'deepseek-v3'),
    /MLA .*512-wide latent plus a 64-wide RoPE key.*\| DeepSeek-V3 technical report/,
  );
  assert.match(text('models', 'deepseek-v3'), /1 module\(s\).*counted apart/);
  assert.match(
    text('models', 'gpt-oss-120b'),
    /sliding window of 128 tokens on 18 of 36 layers; a learned sink.*\| gpt-oss model card/,
  );
  assert.match(text('models', 'gemma-2-9b'), /sliding window of 4096 tokens on 21 of 42 layers \| Gemma 2 report/);
  // Each new accelerator: capacity, the dense bf16 peak and the bandwidth, each from a vendor document.
  for (const id of ['b200', 'b300', 'gb200-nvl72', 'gb300-nvl72', 'mi325x', 'mi355x']) {
    const labels = rows('hardware', id).map((a) => a.name);
    for (const want of [/capacity on the datasheet/, /dense bf16 peak/, /memory bandwidth/])
      assert.ok(
        labels.some((l) => want.test(l)),
        `${id}: ${want} in ${labels}`,
      );
    for (const a of rows('hardware', id))
      assert.match(
        a.source,
        /datasheet|data sheet|specifications|nvidia-smi|allowance|no public device report/i,
        `${id}.${a.id}`,
      );
  }
});

const cases = [
  ['assumptions', {}],
  ['presets', {}],
  ['memory_budget', { model: 'llama-3-8b', seq: 8192, hardware: 'h100-sxm' }],
  [
    'memory_budget',
    {
      model: 'llama-3-8b',
      seq: 8192,
      hardware: 'h100-sxm',
      dropout: true,
      cuda_context_bytes: 0,
      fragmentation_fraction: 0.1,
    },
  ],
  ['memory_budget', { model: 'gpt2-small', seq: 1024, hardware: 'rtx-4090', reference_bytes: 1e9 }],
  ['memory_budget', { model: 'llama-2-7b', capacity_bytes: 80e9, fragmentation_fraction: 0.7 }],
  ['fit', { mode: 'largest_model', gpus: 8, hardware: 'h100-sxm', recipe: 'bf16_adamw_no_master' }],
  ['fit', { mode: 'largest_model', gpus: 8, capacity_bytes: 80e9, recipe: 'bf16_adamw_no_master' }],
  ['kv_cache', { model: 'llama-3-8b', context: 8192, hardware: 'mi300x' }],
  [
    'params',
    {
      hf_config:
        '{"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"n_positions":1024,"vocab_size":50257,"attn_pdrop":0.2}',
    },
  ],
];

test('wasm equals native for the audit, capacity allowance and model dropout', async () => {
  await assertSameEnvelopes(cases);
});
