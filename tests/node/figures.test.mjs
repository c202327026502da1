// web/figures.js: the figures (drawn at build time; web/curves.js redraws the curves in the browser). The pipeline figure draws the engine's schedule,
// every figure draws from the wasm engine without NaN, and an unknown name is an error.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from './engine.mjs';
import { renderFigure, FIGURE_NAMES, chart } from '../../web/figures.js';

test('the pipeline figure draws the engine's simulated 1F1B: its blocks and its idle share', async () => {
  const engine = await loadEngine();
  const r = engine.call('pipeline_schedule', { schedule: '1f1b', stages: 4, microbatches: 8 });
  const svg = renderFigure('pipeline', engine);
  // One labelled block per forward and backward, and the idle share the engine computed, to one decimal.
  assert.equal((svg.match(/class="box tone-[02]"/g) ?? []).length, r.blocks.length + 2, 'blocks plus two legend keys');
  assert.match(svg, new RegExp(`idle ${(r.idle_fraction * 100).toFixed(1)}%`));
  assert.ok(Math.abs(r.idle_fraction - 3 / 11) < 1e-12, 'p = 4, m = 8: (p − 1)/(m + p − 1) = 3/11');
});

test('every figure renders an SVG from the engine with no NaN, and an unknown one is refused', async () => {
  const engine = await loadEngine();
  for (const name of FIGURE_NAMES) {
    const svg = renderFigure(name, engine);
    assert.match(svg, /^<svg class="fig-svg" viewBox="0 0 400 \d+"/, name);
    assert.doesNotMatch(svg, /NaN|Infinity|undefined/, name);
  }
  assert.throws(() => renderFigure('no-such-figure', engine), /unknown figure/);
  assert.throws(
    () => chart({ label: 'x', xLabel: '', yLabel: '', xLog: true, series: [{ name: 'a', points: [[0, 1]] }] }),
    /cannot be plotted/,
  );
});

test('the activation curve bends: without FlashAttention doubling s more than doubles the memory', async () => {
  const engine = await loadEngine();
  const at = (seq, flash) =>
    engine.call('memory_budget', { model: 'llama-3-8b', seq, recompute: 'none', flash_attention: flash }).activations
      .total_bytes;
  assert.ok(at(16384, false) / at(8192, false) > 2.2);
  assert.ok(Math.abs(at(16384, true) / at(8192, true) - 2) < 0.05);
});
