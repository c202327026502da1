// The planner's speed against another build (a benchmark, never a test): `tally plan` of two CLIs on the same
// queries, interleaved round by round so that a busy minute falls on both, medians per query and their ratio.
// usage: node scripts/bench/bench-plan-pair.mjs OLD_TALLY NEW_TALLY [--rounds 9]
//   (build the other commit's CLI first, e.g. git worktree add /tmp/old COMMIT && cmake ... && ninja tally)
import { execFileSync } from 'node:child_process';
import os from 'node:os';

const argv = process.argv.slice(2);
const [oldCli, newCli] = argv;
const rounds = Number(argv.includes('--rounds') ? argv[argv.indexOf('--rounds') + 1] : 9);
if (!oldCli || !newCli || !Number.isInteger(rounds) || rounds < 1 || rounds > 100) {
  console.error('usage: node scripts/bench/bench-plan-pair.mjs OLD_TALLY NEW_TALLY [--rounds 1..100]');
  process.exit(2);
}
// Queries the planner answers on the page and in the CLI's examples: a dense model at scale, a small one, an MoE.
const QUERIES = [
  ['Llama 3 70B, 1,024 H100', ['--model', 'llama-3-70b', '--hardware', 'h100-sxm', '--gpus', '1024', '--seq', '8192']],
  ['Llama 3 8B, 64 H100', ['--model', 'llama-3-8b', '--hardware', 'h100-sxm', '--gpus', '64', '--seq', '8192']],
  ['Mixtral 8x7B, 64 H100', ['--model', 'mixtral-8x7b', '--hardware', 'h100-sxm', '--gpus', '64', '--seq', '4096']],
];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** Wall milliseconds of one `tally plan` run (process start included, the same for both builds). */
function time(cli, args) {
  const t0 = process.hrtime.bigint();
  execFileSync(cli, ['plan', ...args, '--json'], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
console.log(
  `load average at the start: ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}; ${rounds} rounds`,
);
console.log('query | old ms | new ms | new / old');
for (const [name, args] of QUERIES) {
  const old = [];
  const fresh = [];
  (time(oldCli, args), time(newCli, args)); // warm the page cache
  for (let i = 0; i < rounds; i++) {
    if (i % 2) (old.push(time(oldCli, args)), fresh.push(time(newCli, args)));
    else (fresh.push(time(newCli, args)), old.push(time(oldCli, args)));
  }
  const [o, n] = [median(old), median(fresh)];
  console.log(`${name} | ${o.toFixed(1)} | ${n.toFixed(1)} | ${(n / o).toFixed(2)}`);
}
console.log(
  `load average at the end: ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
