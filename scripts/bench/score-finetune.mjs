#!/usr/bin/env node
// Scores tally's fine-tuning memory against measured peaks (content/validation/finetune-peaks.json): each row's
// source_args merged with its own args, priced by the native CLI (`tally call finetune`), predicted against the
// measured peak (a row's measured_gb in 1e9 bytes, or measured_gib in 2^30 bytes, as its source prints it). Prints one
// line per row and the median absolute error, overall and per source; --json prints the rows and the summary as JSON.
// Rerunnable; changes nothing.
//   node scripts/bench/score-finetune.mjs [--json] [--file PATH] [--cli PATH]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  if (at < 0) return fallback;
  const value = process.argv[at + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value`);
  return value;
}

/** Median of a non-empty list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A row's measured peak in GB (1e9 bytes): measured_gb as given, or measured_gib converted. */
export function measuredGb(run) {
  if (typeof run.measured_gb === 'number') return run.measured_gb;
  if (typeof run.measured_gib === 'number') return (run.measured_gib * 2 ** 30) / 1e9;
  throw new Error(`${run.name}: a row needs measured_gb or measured_gib`);
}

/** Every row of a peaks file scored: predicted and measured GB, signed relative error. */
export function scoreFinetune(file, cli) {
  const data = JSON.parse(readFileSync(file, 'utf8'));
  return data.runs.map((run) => {
    const args = { ...(data.source_args[run.source] ?? {}), ...run.args };
    const text = execFileSync(cli, ['call', 'finetune', JSON.stringify(args)], { encoding: 'utf8' });
    const envelope = JSON.parse(text);
    if (!envelope.ok) throw new Error(`${run.name}: ${envelope.error?.message ?? text}`);
    const predicted = envelope.result.per_gpu_bytes.total / 1e9;
    return {
      source: run.source,
      name: run.name,
      predicted_gb: predicted,
      measured_gb: measuredGb(run),
      error: predicted / measuredGb(run) - 1,
    };
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = option('--file', path.join(root, 'content/validation/finetune-peaks.json'));
  const cli = option('--cli', path.join(root, 'build/native/tally'));
  const rows = scoreFinetune(file, cli);
  const summarize = (list) => ({
    rows: list.length,
    median_abs_error: median(list.map((r) => Math.abs(r.error))),
    within_10pct: list.filter((r) => Math.abs(r.error) <= 0.1).length,
  });
  const summary = summarize(rows);
  summary.sources = Object.fromEntries(
    [...new Set(rows.map((r) => r.source))].map((s) => [s, summarize(rows.filter((r) => r.source === s))]),
  );
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ rows, summary }, null, 1));
  } else {
    for (const r of rows)
      console.log(
        `${r.name.padEnd(56)} predicted ${r.predicted_gb.toFixed(2).padStart(6)} GB  measured ` +
          `${r.measured_gb.toFixed(2).padStart(6)} GB  ${(r.error * 100).toFixed(1).padStart(6)} %`,
      );
    const line = (label, s) =>
      console.log(
        `${label}median |error| ${(s.median_abs_error * 100).toFixed(1)} %, ` +
          `${s.within_10pct} of ${s.rows} within 10 %`,
      );
    for (const [source, s] of Object.entries(summary.sources)) line(`${source}: `, s);
    line('all: ', summary);
  }
}
