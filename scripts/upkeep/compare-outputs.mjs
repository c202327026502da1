// Compares what two builds of the CLI answer, call by call, to show a refactor changed no number.
// Cases: every seed of the API fuzz corpus (engine/fuzz/api_corpus: one per method, valid and invalid),
// then every model preset through the accounting methods and every hardware preset through roofline,
// inference and step time. Each envelope must be byte-identical.
//
//   node scripts/upkeep/compare-outputs.mjs OLD_TALLY NEW_TALLY     (exit 1 and the first differences when any)
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../..');

function call(cli, method, args) {
  try {
    return execFileSync(cli, ['call', method, JSON.stringify(args)], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    return `exit ${e.status}: ${e.stdout}${e.stderr}`;
  }
}

const MEASURED = new Set(['methods', 'probe_peak', 'probe_bandwidth', 'gemm_bench', 'gemm_run']);

export function cases(cli) {
  const out = [];
  const corpus = join(root, 'engine/fuzz/api_corpus');
  for (const name of readdirSync(corpus).sort()) {
    const [method, ...rest] = readFileSync(join(corpus, name), 'utf8').split('\n');
    let args;
    try {
      args = JSON.parse(rest.join('\n'));
    } catch {
      continue; // malformed-JSON seeds test the parser, not a number
    }
    // methods lists the methods (a new one is not a changed number); the probes and GEMM timings measure this
    // machine, so two runs differ by noise.
    if (method && !MEASURED.has(method)) out.push([method, args]);
  }
  const presets = JSON.parse(call(cli, 'presets', {})).result;
  for (const { id: model } of presets.models) {
    out.push(['params', { model }]);
    out.push(['flops', { model, seq: 2048, tokens: 1e12 }]);
    out.push(['memory_budget', { model, seq: 2048, gpus: 8, hardware: 'h100-sxm' }]);
    out.push(['memory_budget', { model, seq: 4096, gpus: 64, tp: 8, zero: 3, recompute: 'full' }]);
    out.push(['kv_cache', { model, context: 8192, batch: 4 }]);
    out.push(['inference', { model, context: 4096, hardware: 'h100-sxm' }]);
    out.push(['training_cost', { model, tokens: 1e12, gpus: 1024, mfu: 0.4, hardware: 'h100-sxm' }]);
    out.push(['step_time', { model, gpus: 64, tp: 8, pp: 2, seq: 2048, global_batch: 512, hardware: 'h100-sxm' }]);
  }
  for (const { id: hardware } of presets.hardware) {
    out.push(['roofline', { hardware }]);
    out.push(['step_time', { model: 'llama-2-7b', gpus: 16, tp: 2, seq: 4096, global_batch: 256, hardware }]);
    out.push(['plan', { model: 'llama-2-70b', gpus: 64, seq: 4096, global_batch: 512, hardware }]);
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [oldCli, newCli] = process.argv.slice(2);
  if (!oldCli || !newCli) {
    console.error('usage: node scripts/upkeep/compare-outputs.mjs OLD_TALLY NEW_TALLY');
    process.exit(2);
  }
  const list = cases(oldCli);
  let differ = 0,
    errors = 0;
  for (const [method, args] of list) {
    const a = call(oldCli, method, args),
      b = call(newCli, method, args);
    if (a.startsWith('exit') || a.includes('"ok":false')) errors++;
    if (a !== b) {
      if (differ++ < 5)
        console.log(`DIFFERS ${method} ${JSON.stringify(args)}\n  old: ${a.slice(0, 300)}\n  new: ${b.slice(0, 300)}`);
    }
  }
  console.log(`${list.length} calls (${errors} refused by both or one), ${differ} differ`);
  process.exit(differ ? 1 : 0);
}
