// web/figures.js: the figures (drawn at build time; web/curves.js redraws the curves in the browser). The 1F1B simulation's bubble is the textbook (p−1)/(m+p−1),
// every figure draws from the wasm engine without NaN, and an unknown name is an error.
import test from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from './engine.mjs';
import { oneFOneB, renderFigure, FIGURE_NAMES, chart, SPLITS } from '../../web/figures.js';

test('the simulated 1F1B schedule idles (p−1)/(m+p−1) of the time, as Narayanan et al. 2021 derive', () => {
  for (const [p, m] of [
    [2, 4],
    [4, 8],
    [8, 32],
    [4, 1],
  ]) {
    const { bubble, blocks } = oneFOneB(p, m);
    assert.equal(blocks.length, 2 * p * m, 'one forward and one backward per stage and micro-batch');
    assert.ok(Math.abs(bubble - (p - 1) / (m + p - 1)) < 1e-12, `p=${p} m=${m}: ${bubble}`);
  }
});

test('1F1B never has more than p micro-batches in flight on the first stage', () => {
  const p = 4;
  const { blocks } = oneFOneB(p, 12);
  const first = blocks.filter((b) => b.stage === 0).sort((a, b) => a.start - b.start);
  let inFlight = 0,
    most = 0;
  for (const b of first) {
    inFlight += b.kind === 'F' ? 1 : -1;
    most = Math.max(most, inFlight);
  }
  assert.equal(most, p);
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

test('the parallelism figure splits what chapter 7 says each method splits, and no ZeRO stage splits activations', () => {
  const rows = Object.fromEntries(SPLITS.map(([name, states]) => [name, states]));
  // Chapter 7's ZeRO table (Rajbhandari et al. 2020): stage 1 shards the optimizer, 2 adds gradients, 3 weights.
  assert.deepEqual(rows['ZeRO-1'].slice(0, 3), ['whole', 'whole', 'split']);
  assert.deepEqual(rows['ZeRO-2'].slice(0, 3), ['whole', 'split', 'split']);
  assert.deepEqual(rows['ZeRO-3'].slice(0, 3), ['split', 'split', 'split']);
  // "None of the stages divides activations": each GPU keeps its own micro-batch's whole.
  for (const name of ['DDP', 'ZeRO-1', 'ZeRO-2', 'ZeRO-3']) assert.equal(rows[name][3], 'whole', name);
  // Tensor and pipeline parallelism divide part of them.
  for (const name of ['TP', 'PP']) assert.equal(rows[name][3], 'partial', name);
});
