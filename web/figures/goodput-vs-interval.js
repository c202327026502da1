// Figure "goodput-vs-interval" (web/figures/index.js): an engine curve; web/curves.js redraws it from the widget beside it.
import { chart } from './line-chart.js';

/**
 * Goodput (useful share of the wall clock) against the checkpoint interval, Daly (2006)'s complete model from
 * the engine's checkpoint_interval: Llama 3's failure rate (419 unexpected interruptions in 54 days on 16,384
 * GPUs, Dubey et al. 2024), for a slow checkpoint (5 min, restart 10 min: Daly's own example) and a fast one.
 */
export default function goodputCurve(
  engine,
  {
    failures = { interruptions: 419, days: 54, observed_gpus: 16384 },
    cases = [
      { checkpoint_seconds: 300, restart_seconds: 600 },
      { checkpoint_seconds: 30, restart_seconds: 300 },
    ],
  } = {},
) {
  const minutes = [1, 2, 4, 8, 16, 32, 64, 128, 256]; // powers of 4 get the axis labels
  const at = (c, tau) => engine.call('checkpoint_interval', { ...failures, ...c, interval_seconds: tau * 60 });
  const name = (c) =>
    `write ${c.checkpoint_seconds / 60 >= 1 ? `${c.checkpoint_seconds / 60} min` : `${c.checkpoint_seconds} s`}, restart ${c.restart_seconds / 60} min`;
  const best = at(cases[0], 60);
  const optimum = best.optimum;
  return chart({
    label: `Goodput against the checkpoint interval at one failure every ${best.job_mtbf_hours.toFixed(1)} hours, for a slow and a fast checkpoint`,
    xLabel: 'minutes between checkpoints (log scale)',
    yLabel: 'goodput',
    xLog: true,
    xFormat: (v) => String(v),
    yFormat: (v) => `${Math.round(v * 100)}%`,
    series: cases.map((c) => ({ name: name(c), points: minutes.map((m) => [m, at(c, m).at_interval.efficiency]) })),
    marker: {
      x: optimum.interval_seconds / 60,
      y: optimum.efficiency,
      label: `Daly's optimum: ${Math.round(optimum.interval_seconds / 60)} min, ${Math.round(optimum.efficiency * 100)}%`,
    },
  });
}
