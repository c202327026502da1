// The formulas the compute widget prints beside each matmul are the engine's counts written out: each
// component's per-sequence formula and its per-token formula, evaluated here with the model's own sizes,
// give the FLOPs the engine reports (so a per-sequence formula cannot sit under a per-token heading).
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from './engine.mjs';

/** Evaluates "2 s h (a d + 2 n_kv d) L", "2 [s(s+1)/2] a d L", "2 h f · 3 · (k + shared) L" with `values`. */
function evaluate(formula, values) {
  const tokens = formula
    .replace(/²/g, '^2')
    .replace(/[[]/g, '(')
    .replace(/]/g, ')')
    .replace(/·/g, '*')
    .match(/\d+(\.\d+)?|[A-Za-z]+(_[A-Za-z0-9]+)?|[-+*/^()]/g);
  const out = [];
  for (const token of tokens) {
    const value = /^[A-Za-z]/.test(token)
      ? String(
          values[token] ??
            (() => {
              throw new Error(`unknown symbol ${token} in "${formula}"`);
            })(),
        )
      : token;
    const previous = out.at(-1);
    // Juxtaposition is multiplication: "2 s", "s(s+1)", ") L".
    if (previous !== undefined && /[\d)]$/.test(previous) && /^[\d(]/.test(value)) out.push('*');
    out.push(value === '^' ? '**' : value);
  }
  return Function(`"use strict"; return (${out.join(' ')});`)();
}

test("every FLOP component's formula and per-token formula evaluate to the engine's count", async () => {
  const engine = await loadEngine();
  for (const [model, seq, attention] of [
    ['llama-3-8b', 8192, 'full'],
    ['gpt2-small', 1024, 'causal'],
    ['mixtral-8x7b', 4096, 'full'],
    ['gpt3-175b', 2048, 'causal'],
  ]) {
    const r = engine.call('flops', { model, seq, attention_flops: attention });
    const m = r.model;
    const values = {
      s: seq,
      h: m.hidden_size,
      a: m.num_heads,
      d: m.head_dim,
      n_kv: m.num_kv_heads,
      f: m.ffn_hidden_size,
      L: m.num_layers,
      V: m.vocab_size,
      E: m.num_experts,
      k: m.experts_per_token,
      shared: m.num_shared_experts,
    };
    for (const c of r.components) {
      assert.ok(c.formula_per_token, `${model} ${c.id} has a per-token formula`);
      assert.doesNotMatch(
        c.formula_per_token,
        /s²|s\(s/,
        `${model} ${c.id}: the per-token formula is not the per-sequence one`,
      );
      const perSequence = evaluate(c.formula, values);
      const perToken = evaluate(c.formula_per_token, values);
      assert.ok(
        Math.abs(perSequence - c.forward_per_sequence) <= 1e-12 * c.forward_per_sequence,
        `${model} ${c.id}: ${c.formula} = ${perSequence}, engine ${c.forward_per_sequence}`,
      );
      assert.ok(
        Math.abs(perToken - c.forward_per_token) <= 1e-12 * c.forward_per_token,
        `${model} ${c.id}: ${c.formula_per_token} = ${perToken}, engine ${c.forward_per_token}`,
      );
    }
  }
});
