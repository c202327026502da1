// The modern validation set (content/validation/runs-modern.json, issue 24 item 4) is well formed: every run names a
// source in the fit/held-out split, the halves are disjoint by source and each is big and varied enough to use,
// hardware and models resolve to presets (or say what is missing), and the recorded layouts add up.
import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const data = JSON.parse(readFileSync(path.join(root, 'content/validation/runs-modern.json'), 'utf8'));
const { split, runs } = data;
const halves = ['fit', 'heldout'];

const hardwarePreset = (id) =>
  typeof id === 'string' &&
  /^[a-z0-9-]+$/.test(id) &&
  existsSync(path.join(root, `content/presets/hardware/${id}.json`));
const modelPreset = (id) =>
  typeof id === 'string' && /^[a-z0-9-]+$/.test(id) && existsSync(path.join(root, `content/presets/models/${id}.json`));
const half = (name) => runs.filter((run) => split[run.source_key] === name);
// 16-bit recipes: bf16, and fp16 (OPT-175B's fp16 with loss scaling, the same 16-bit peak); every other one is FP8/MX.
const isFp8 = (run) => !['bf16', 'fp16'].includes(run.args.precision);
const isLongContext = (run) => run.args.seq >= 32768 || run.args.cp > 1;

// Every number under `value`, with its path, skipping booleans and strings.
function numbers(value, at) {
  if (typeof value === 'number') return [[at, value]];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => numbers(inner, `${at}.${key}`));
}

test('the set has at least 60 runs with unique ids from at least 6 sources, each source in the split', () => {
  assert.ok(runs.length >= 60, `${runs.length} runs`);
  const ids = runs.map((run) => run.id);
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');
  for (const id of ids) assert.match(id, /^[a-z0-9][a-z0-9.-]*$/, `id ${id}`);
  const sources = Object.keys(split);
  assert.ok(sources.length >= 6, `${sources.length} sources in the split`);
  for (const run of runs) assert.ok(Object.hasOwn(split, run.source_key), `${run.id}: source ${run.source_key}`);
  for (const source of sources) {
    assert.ok(halves.includes(split[source]), `${source} is fit or heldout, got ${split[source]}`);
    assert.ok(
      runs.some((run) => run.source_key === source),
      `${source} has runs`,
    );
  }
});

test('the halves are disjoint by source and each has at least 25 runs from at least 3 sources', () => {
  for (const name of halves) {
    const members = half(name);
    const sources = new Set(members.map((run) => run.source_key));
    assert.ok(members.length >= 25, `${name}: ${members.length} runs`);
    assert.ok(sources.size >= 3, `${name}: ${sources.size} sources`);
  }
  const seen = new Map();
  for (const run of runs) {
    assert.equal(run.split, split[run.source_key], `${run.id}: its split matches its source's`);
    const other = seen.get(run.source_key);
    assert.ok(other === undefined || other === run.split, `${run.source_key} is in both halves`);
    seen.set(run.source_key, run.split);
  }
});

test('each half covers FSDP, FP8, MoE, long context and at least three GPU kinds', () => {
  for (const name of halves) {
    const members = half(name);
    assert.ok(
      members.some((run) => run.args.zero === 3 && run.args.fsdp),
      `${name}: an FSDP run`,
    );
    assert.ok(members.some(isFp8), `${name}: an FP8 run`);
    assert.ok(
      members.some((run) => run.group.arch === 'moe'),
      `${name}: a MoE run`,
    );
    assert.ok(members.some(isLongContext), `${name}: a long-context run`);
    const gpus = new Set(members.map((run) => run.group.gpu));
    assert.ok(gpus.size >= 3, `${name}: GPU kinds ${[...gpus]}`);
  }
});

test('every run cites its source, its assumptions, its stack and how it was verified, and carries group labels', () => {
  for (const run of runs) {
    for (const field of ['source', 'assumed', 'framework'])
      assert.ok(typeof run[field] === 'string' && run[field].length > 20, `${run.id}: ${field}`);
    assert.ok(run.verification?.status && run.verification?.checked?.length > 20, `${run.id}: verification`);
    for (const label of ['stack', 'precision', 'gpu', 'arch', 'context'])
      assert.ok(typeof run.group?.[label] === 'string' && run.group[label].length > 0, `${run.id}: group.${label}`);
    assert.equal(run.group.precision, run.args.precision, `${run.id}: group.precision is the recipe`);
    assert.equal(run.group.arch === 'moe', (run.args.model.num_experts ?? 0) > 0 || moePreset(run.args.model), run.id);
  }
});

function moePreset(model) {
  if (typeof model !== 'string') return false;
  const preset = JSON.parse(readFileSync(path.join(root, `content/presets/models/${model}.json`), 'utf8'));
  return (preset.config.num_experts ?? 0) > 0;
}

test('every hardware is a preset id or is marked missing with a preset to fall back on', () => {
  for (const run of runs) {
    const { hardware } = run.args;
    if (typeof hardware === 'string') {
      assert.ok(hardwarePreset(hardware), `${run.id}: ${hardware} is a hardware preset`);
      continue;
    }
    assert.ok(typeof hardware?.missing === 'string' && hardware.missing.length > 0, `${run.id}: hardware.missing`);
    assert.ok(hardwarePreset(hardware.nearest_preset), `${run.id}: nearest_preset ${hardware.nearest_preset}`);
    assert.equal(run.expressible_today, false, `${run.id}: a missing hardware is not expressible`);
    assert.ok(
      run.missing.some((entry) => entry.startsWith('hardware:')),
      `${run.id}: missing names the hardware`,
    );
  }
});

test('every model is a preset id or a model object with its shape', () => {
  for (const run of runs) {
    const { model } = run.args;
    if (typeof model === 'string') {
      assert.ok(modelPreset(model), `${run.id}: ${model} is a model preset`);
      continue;
    }
    for (const field of ['vocab_size', 'hidden_size', 'num_layers', 'num_heads', 'ffn_hidden_size'])
      assert.ok(Number.isInteger(model[field]) && model[field] > 0, `${run.id}: model.${field}`);
    for (const field of ['mlp', 'norm', 'position']) assert.equal(typeof model[field], 'string', `${run.id}: ${field}`);
  }
});

test('published figures are finite and positive, and utilisations are fractions', () => {
  const metrics = ['mfu', 'hfu', 'tokens_per_s_per_gpu', 'tflops_per_gpu'];
  for (const run of runs) {
    const { published } = run;
    assert.ok(metrics.includes(published.metric), `${run.id}: metric ${published.metric}`);
    for (const [at, value] of numbers(published, 'published'))
      assert.ok(Number.isFinite(value) && value > 0, `${run.id}: ${at} = ${value}`);
    for (const key of ['mfu', 'hfu'])
      if (published[key] !== undefined) assert.ok(published[key] < 1, `${run.id}: ${key} ${published[key]}`);
    if (published.metric === 'mfu' || published.metric === 'hfu') assert.ok(published.value < 1, run.id);
  }
});

test('layouts add up: finite arguments, dp x tp x pp x cp = gpus, and the batch is micro-batch x accumulation x dp', () => {
  const inconsistent = [];
  for (const run of runs) {
    const { args } = run;
    for (const [at, value] of numbers(args, 'args'))
      assert.ok(Number.isFinite(value) && value >= 0, `${run.id}: ${at} = ${value}`);
    for (const field of ['gpus', 'tp', 'pp', 'cp', 'ep', 'dp', 'seq', 'micro_batch', 'global_batch'])
      assert.ok(Number.isInteger(args[field]) && args[field] > 0, `${run.id}: ${field} = ${args[field]}`);
    assert.ok([0, 1, 2, 3].includes(args.zero), `${run.id}: zero ${args.zero}`);
    assert.ok(['none', 'selective', 'full'].includes(args.recompute), `${run.id}: recompute ${args.recompute}`);
    assert.ok(['bf16', 'fp16', 'fp8'].includes(args.dtype), `${run.id}: dtype ${args.dtype}`);
    assert.equal(args.dp * args.tp * args.pp * args.cp, args.gpus, `${run.id}: dp x tp x pp x cp`);
    const perReplica =
      args.grad_accum_steps !== undefined ? args.micro_batch * args.grad_accum_steps : args.local_batch;
    if (perReplica === undefined) continue;
    if (perReplica * args.dp === args.global_batch) continue;
    assert.ok(run.inconsistency, `${run.id}: ${perReplica} x dp ${args.dp} != global batch ${args.global_batch}`);
    inconsistent.push(run.id);
  }
  // The source's own typos are recorded, not hidden; they stay a small minority.
  assert.ok(inconsistent.length <= 3, `inconsistent rows: ${inconsistent}`);
});

test("metadata in args never reuses a name tally reads as a dtype (its grad_accum is the accumulation buffer's dtype)", () => {
  const dtypeArgs = ['weights', 'gradients', 'master_weights', 'optimizer_state', 'grad_accum', 'recipe', 'optimizer'];
  for (const run of runs)
    for (const field of dtypeArgs)
      if (Object.hasOwn(run.args, field))
        assert.equal(typeof run.args[field], 'string', `${run.id}: args.${field} is read by tally as a string`);
});

// The FP8 recipes step_time reads (engine/src/step/step.cpp, scaling_of); a run with another recipe lists it missing.
const readRecipes = new Set([
  'bf16',
  'fp8-delayed',
  'fp8-current-scaling',
  'fp8-current-tensorwise',
  'fp8-rowwise',
  'mxfp8',
]);

test('a run is expressible today exactly when it lists nothing missing, unread FP8 recipes are listed, cp is not', () => {
  for (const run of runs) {
    assert.equal(typeof run.expressible_today, 'boolean', run.id);
    const missing = run.missing ?? [];
    assert.equal(run.expressible_today, missing.length === 0, `${run.id}: ${missing}`);
    // step_time models context parallelism (engine/src/step/step_cp.cpp): cp is never what a run is missing.
    assert.ok(!missing.some((entry) => entry.startsWith('cp:')), `${run.id}: cp listed as missing`);
    if (isFp8(run))
      assert.equal(
        missing.some((entry) => entry.startsWith('precision:')),
        !readRecipes.has(run.args.precision),
        `${run.id}: precision listed exactly when step_time cannot read ${run.args.precision}`,
      );
  }
});
