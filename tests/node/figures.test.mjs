// web/figures/ (one module per figure, index.js names them): the figures (drawn at build time; web/curves.js redraws the curves in the browser). The pipeline figure draws the engine's schedule,
// every figure draws from the wasm engine without NaN, and an unknown name is an error.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadEngine, root } from './engine.mjs';
import { renderFigure, FIGURE_NAMES, chart, SPLITS } from '../../web/figures/index.js';

test("the pipeline figure draws the engine's simulated 1F1B: its blocks and its idle share", async () => {
  const engine = await loadEngine();
  const r = engine.call('pipeline_schedule', { schedule: '1f1b', stages: 4, microbatches: 8 });
  const svg = renderFigure('pipeline', engine);
  // One labelled block per forward and backward, and the idle share the engine computed, to one decimal.
  assert.equal((svg.match(/class="box tone-[02]"/g) ?? []).length, r.blocks.length + 2, 'blocks plus two legend keys');
  assert.match(svg, new RegExp(`idle ${(r.idle_fraction * 100).toFixed(1)}%`));
  assert.ok(Math.abs(r.idle_fraction - 3 / 11) < 1e-12, 'p = 4, m = 8: (p − 1)/(m + p − 1) = 3/11');
});

/** The options a figure cannot draw without (the build passes the page's own; these are the smaller files). */
const smallRuns = readFileSync(`${root}/content/validation/runs.json`, 'utf8');
const FIGURE_INPUTS = {
  'validation-scatter': { runs: smallRuns },
  'step-timeline': { model: 'llama-3-8b', hardware: 'h100-sxm', gpus: 8, tp: 2 },
};

test('the validation scatter draws one dot per scored run, above the diagonal exactly when tally predicted it faster', async () => {
  const engine = await loadEngine();
  const report = engine.call('step_validation', { runs: smallRuns });
  const svg = renderFigure('validation-scatter', engine, { runs: smallRuns });
  const dots = [
    ...svg.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)" r="2.6" class="dot s\d"><title>([^<]*)<\/title>/g),
  ];
  assert.equal(dots.length, report.runs.length);
  // The diagonal runs from the plot's origin to its top right: a dot above it has y - origin_y < -(x - origin_x).
  const diagonal = /<line x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)" class="stroke"\/>/.exec(svg);
  assert.ok(diagonal, 'the diagonal is drawn');
  const [x1, y1, x2, y2] = diagonal.slice(1).map(Number);
  for (const [, cx, cy, title] of dots) {
    const row = report.runs.find((r) => title.startsWith(`${r.id}:`));
    assert.ok(row, title);
    const side = (x2 - x1) * (Number(cy) - y1) - (y2 - y1) * (Number(cx) - x1); // < 0: above the line
    if (Math.abs(row.error) > 0.01) assert.equal(side < 0, row.error > 0, `${row.id} (${row.error})`);
  }
  assert.throws(() => renderFigure('validation-scatter', engine), /needs the runs file/);
});

test('every figure renders an SVG from the engine with no NaN, and an unknown one is refused', async () => {
  const engine = await loadEngine();
  for (const name of FIGURE_NAMES) {
    const svg = renderFigure(name, engine, FIGURE_INPUTS[name]);
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

test('the parallelism figure splits what chapter 8 says each method splits, and no ZeRO stage splits activations', () => {
  const rows = Object.fromEntries(SPLITS.map(([name, states]) => [name, states]));
  // Chapter 8's ZeRO table (Rajbhandari et al. 2020): stage 1 shards the optimizer, 2 adds gradients, 3 weights.
  assert.deepEqual(rows['ZeRO-1'].slice(0, 3), ['whole', 'whole', 'split']);
  assert.deepEqual(rows['ZeRO-2'].slice(0, 3), ['whole', 'split', 'split']);
  assert.deepEqual(rows['ZeRO-3'].slice(0, 3), ['split', 'split', 'split']);
  // "None of the stages divides activations": each GPU keeps its own micro-batch's whole.
  for (const name of ['DDP', 'ZeRO-1', 'ZeRO-2', 'ZeRO-3']) assert.equal(rows[name][3], 'whole', name);
  // Tensor and pipeline parallelism divide part of them.
  for (const name of ['TP', 'PP']) assert.equal(rows[name][3], 'partial', name);
});

test("the overlap figure draws every op of the engine's six layouts, and each one's exposed time", async () => {
  const engine = await loadEngine();
  const svg = renderFigure('overlap-timeline', engine);
  const common = { layers: 4, forward_seconds: 2.8e-3, hardware: 'h100-sxm', ranks_per_node: 8 };
  const runs = [
    { ...common, scheme: 'ddp', layer_bytes: 404766720, bucket_bytes: 404766720 / 2, nodes: 2 },
    { ...common, scheme: 'fsdp', layer_bytes: 404766720 },
    { ...common, scheme: 'tp', forward_seconds: 2.8e-3 / 8, layer_bytes: 67108864, chunks: 4 },
  ].flatMap((args) => [false, true].map((overlap) => engine.call('overlap', { ...args, overlap })));
  const comm = runs.reduce((n, r) => n + r.ops.filter((op) => op.lane === 'comm').length, 0);
  assert.equal((svg.match(/class="box tone-1"/g) ?? []).length, comm + 1, 'collectives plus the legend key');
  for (const r of runs) assert.ok(r.exposed_comm_seconds < r.comm_seconds + 1e-12, 'never more exposed than sent');
  // Overlap never lengthens a step, and the figure prints each step's exposed time.
  for (let i = 0; i < runs.length; i += 2) assert.ok(runs[i + 1].step_seconds <= runs[i].step_seconds);
  assert.equal((svg.match(/ms exposed/g) ?? []).length, 6);
});

test('the MoE drop curves fall with capacity and with the load per expert', async () => {
  const engine = await loadEngine();
  const drop = (seq, cf) =>
    engine.call('moe_routing', { model: 'mixtral-8x7b', seq, ep: 8, capacity_factor: cf }).random_routing
      .expected_dropped_fraction;
  assert.ok(drop(32, 1) > drop(256, 1) && drop(256, 1) > drop(2048, 1), 'relative spread shrinks as 1/sqrt(load)');
  assert.ok(drop(32, 1) > drop(32, 1.25), 'headroom drops fewer');
  assert.match(renderFigure('moe-drops', engine), /4,096 per expert/);
});

test('the pipeline-schedules figure draws ZB-H1 W blocks and DualPipe pairs from the engine, with their bubbles', async () => {
  const engine = await loadEngine();
  const svg = renderFigure('pipeline-schedules', engine);
  const zb = engine.call('pipeline_schedule', { schedule: 'zb-h1', stages: 4, microbatches: 8 });
  const dual = engine.call('pipeline_schedule', { schedule: 'dualpipe', stages: 4, microbatches: 8 });
  // One purple block per W of ZB-H1 and of DualPipe, plus the legend's key.
  const weights = [zb, dual].flatMap((r) => r.blocks).filter((b) => b.kind === 'W').length;
  assert.equal((svg.match(/class="box tone-3"/g) ?? []).length, weights + 1);
  const pairs = new Set(dual.blocks.filter((b) => b.pair !== undefined).map((b) => b.pair)).size;
  assert.ok(pairs > 0);
  assert.equal((svg.match(/class="pair"/g) ?? []).length, pairs + 1, 'one outline per pair plus the legend');
  assert.match(svg, new RegExp(`ZB-H1: bubble ${(zb.bubble_ratio * 100).toFixed(1)}%, 4 in flight`));
  assert.match(svg, new RegExp(`DualPipe: bubble ${(dual.bubble_ratio * 100).toFixed(1)}%, 5 in flight, 2× weights`));
});

test("the goodput figure marks Daly's optimum where the engine puts it, and faster checkpoints raise the curve", async () => {
  const engine = await loadEngine();
  const svg = renderFigure('goodput-vs-interval', engine);
  const slow = engine.call('checkpoint_interval', {
    interruptions: 419,
    days: 54,
    observed_gpus: 16384,
    checkpoint_seconds: 300,
    restart_seconds: 600,
  });
  assert.match(
    svg,
    new RegExp(
      `Daly's optimum: ${Math.round(slow.optimum.interval_seconds / 60)} min, ${Math.round(slow.optimum.efficiency * 100)}%`,
    ),
  );
  assert.match(svg, /write 5 min, restart 10 min/);
  assert.match(svg, /write 30 s, restart 5 min/);
});

test('each figure is one module, web/figures/<name>.js, whose default export is what renderFigure draws', async () => {
  const engine = await loadEngine();
  const dir = fileURLToPath(new URL('../../web/figures/', import.meta.url));
  const modules = readdirSync(dir).filter((f) => !['index.js', 'svg.js', 'line-chart.js'].includes(f));
  assert.deepEqual(modules.sort(), FIGURE_NAMES.map((name) => `${name}.js`).sort());
  for (const name of FIGURE_NAMES) {
    const { default: draw } = await import(new URL(`../../web/figures/${name}.js`, import.meta.url).href);
    assert.equal(draw(engine, FIGURE_INPUTS[name] ?? {}), renderFigure(name, engine, FIGURE_INPUTS[name]), name);
  }
});

test("the step timeline lays the engine's exposed components end to end: their widths add up to the step", async () => {
  const engine = await loadEngine();
  const args = { model: 'llama-3-8b', hardware: 'h100-sxm', gpus: 64, tp: 2, pp: 2, seq: 4096, global_batch: 256 };
  Object.assign(args, { micro_batch: 1, zero: 1, sequence_parallel: true, recompute: 'none', flash_attention: true });
  const r = engine.call('step_time', args);
  const svg = renderFigure('step-timeline', engine, args);
  const lane = /<text[^>]*class="strong">GPU:[^<]*<\/text>((?:<rect [^>]*\/>)+)/.exec(svg);
  assert.ok(lane, 'the GPU lane follows its title');
  const widths = [...lane[1].matchAll(/width="([\d.]+)"/g)].map((m) => Number(m[1]));
  const exposed = r.breakdown.filter((p) => p.exposed && p.seconds > 0);
  assert.equal(widths.length, exposed.length, 'one block per exposed component');
  const span = Math.max(r.step_seconds, r.band.step_seconds_high);
  const drawn = widths.reduce((a, b) => a + b, 0);
  // Each width is rounded to 0.1 unit; the lane is 392 units for the longer of the step and the band's top.
  assert.ok(Math.abs(drawn - (392 * r.step_seconds) / span) <= 0.05 * widths.length + 1e-9, `${drawn}`);
  for (const p of r.breakdown.filter((q) => q.seconds > 0))
    assert.ok(svg.includes(p.name.replace(/&/g, '&amp;').split(' ')[0]), `the key names ${p.id}`);
  assert.match(svg, new RegExp(`band: [\\d.]+–[\\d.]+ s, from the errors of ${r.band.runs} published`));
  assert.throws(() => renderFigure('step-timeline', engine), /needs the run it draws/);
});
