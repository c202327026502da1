// Two wasm builds of the engine side by side: gzip size, and the time of the calls a widget makes on each control
// change (step_time, memory_budget + flops, params, a small plan), interleaved round by round in one process so
// both see the same load. Prints medians per call and the ratio B / A.
//   node scripts/bench/bench-wasm-builds.mjs build/wasm build/wasm-os [rounds]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const [dirA, dirB, roundsArg] = process.argv.slice(2);
if (!dirA || !dirB) {
  console.error('usage: node scripts/bench/bench-wasm-builds.mjs DIR_A DIR_B [rounds]');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 15);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 1000) {
  console.error('rounds must be an integer from 1 to 1000');
  process.exit(2);
}

const require = createRequire(import.meta.url);
async function load(dir) {
  const wasm = readFileSync(path.resolve(dir, 'tally.wasm'));
  const module = await require(path.resolve(dir, 'tally.js'))({ wasmBinary: wasm });
  return { dir, module, gzip: gzipSync(wasm, { level: 9 }).length, raw: wasm.length };
}

const layout = {
  model: 'llama-3-70b',
  hardware: 'h100-sxm',
  gpus: 1024,
  tp: 8,
  pp: 4,
  seq: 8192,
  micro_batch: 1,
  global_batch: 1024,
  zero: 1,
  sequence_parallel: true,
  recompute: 'selective',
  flash_attention: true,
};
const calls = {
  step_time: [['step_time', layout]],
  'memory_budget + flops': [
    ['memory_budget', layout],
    ['flops', { model: 'llama-3-70b', seq: 8192 }],
  ],
  'params (deepseek-v3)': [['params', { model: 'deepseek-v3' }]],
  'plan (64 GPUs)': [
    ['plan', { model: 'llama-3-8b', hardware: 'h100-sxm', gpus: 64, seq: 8192, global_batch: 512, top: 4 }],
  ],
};

function timeOnce(module, list, repeat) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < repeat; ++i)
    for (const [method, args] of list) {
      const envelope = module.tally_call(method, JSON.stringify(args));
      if (!envelope.startsWith('{"ok":true') && !envelope.includes('"ok":true'))
        throw new Error(`${method}: ${envelope.slice(0, 200)}`);
    }
  return Number(process.hrtime.bigint() - start) / 1e6 / repeat;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const builds = [await load(dirA), await load(dirB)];
for (const b of builds)
  console.log(`${b.dir}: tally.wasm ${(b.raw / 1024).toFixed(1)} KiB, ${(b.gzip / 1024).toFixed(1)} KiB gzip -9`);
console.log(`gzip ratio B / A: ${(builds[1].gzip / builds[0].gzip).toFixed(3)}`);
console.log(`\n| call | A ms | B ms | B / A |\n|---|---:|---:|---:|`);
for (const [name, list] of Object.entries(calls)) {
  const repeat = name.startsWith('plan') ? 1 : 20;
  for (const b of builds) timeOnce(b.module, list, repeat); // warm-up: tier-up and first allocations
  const times = [[], []];
  for (let r = 0; r < rounds; ++r) {
    const order = r % 2 ? [1, 0] : [0, 1]; // alternate who goes first
    for (const i of order) times[i].push(timeOnce(builds[i].module, list, repeat));
  }
  const [a, b] = times.map(median);
  console.log(`| ${name} | ${a.toFixed(3)} | ${b.toFixed(3)} | ${(b / a).toFixed(2)} |`);
}
