// wasm twin of step_bench.cpp: median time of one step_time call and one full plan in the wasm engine (node).
//   node engine/bench/step_bench.mjs [--samples 15]
import { loadEngine, PLANNER_EXAMPLE } from '../../tests/node/engine.mjs';

const samples = Number(process.argv[process.argv.indexOf('--samples') + 1]) || 15;
const engine = await loadEngine();
const step = JSON.stringify({
  ...PLANNER_EXAMPLE,
  tp: 4,
  pp: 4,
  sequence_parallel: true,
  zero: 1,
});
const plan = JSON.stringify({ model: 'llama-3-70b', hardware: 'h100-sxm', gpus: 1024, seq: 8192, global_batch: 1024 });

function median(method, args) {
  // Warm-up, not measured: V8 compiles wasm with its baseline tier first and optimises it in the background.
  const warm = performance.now();
  while (performance.now() - warm < 1000) engine.raw(method, args);
  const perCall = [];
  for (let s = 0; s < samples; s++) {
    let calls = 0;
    const start = performance.now();
    let elapsed = 0;
    do {
      engine.raw(method, args);
      calls++;
      elapsed = performance.now() - start;
    } while (elapsed < 50);
    perCall.push(elapsed / calls);
  }
  perCall.sort((a, b) => a - b);
  return perCall[Math.floor(perCall.length / 2)];
}

const evaluated = JSON.parse(engine.raw('plan', plan)).result.evaluated;
console.log(`step_time (llama-3-70b, 64 H100, t4 p4): ${(1000 * median('step_time', step)).toFixed(1)} us`);
console.log(`plan (llama-3-70b, 1024 H100, ${evaluated} layouts): ${median('plan', plan).toFixed(2)} ms`);
// A mixture of experts adds the expert-parallel degree to the search: thousands of layouts.
const moePlan = JSON.stringify({
  model: 'mixtral-8x7b',
  hardware: 'h100-sxm',
  gpus: 1024,
  seq: 4096,
  global_batch: 1024,
});
const moeEvaluated = JSON.parse(engine.raw('plan', moePlan)).result.evaluated;
console.log(`plan (mixtral-8x7b, 1024 H100, ${moeEvaluated} layouts): ${median('plan', moePlan).toFixed(2)} ms`);
