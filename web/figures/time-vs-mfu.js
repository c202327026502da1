// Figure "time-vs-mfu" (web/figures/index.js): an engine curve; web/curves.js redraws it from the widget beside it.
import { chart, without } from './line-chart.js';

/** Days against MFU. `base`: training_cost arguments other than mfu; marker: { mfu }. */
export default function mfuCurve(
  engine,
  { base = { params: 70e9, tokens: 15e12, hardware: 'h100-sxm', gpus: 1024 }, marker = null } = {},
) {
  const mfus = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
  const args = without(base, ['mfu']);
  const days = (mfu) => engine.call('training_cost', { ...args, mfu }).seconds / 86400; // seconds shown in days
  const what = args.params ? `${args.params / 1e9}B parameters` : args.model;
  return chart({
    label: `Days to train ${what} on ${args.tokens / 1e12}T tokens with ${args.gpus} GPUs, against MFU`,
    xLabel: 'MFU',
    yLabel: 'days',
    series: [{ name: `${args.gpus} GPUs`, points: mfus.map((m) => [m, days(m)]) }],
    xFormat: (v) => `${Math.round(v * 100)}%`,
    yFormat: (v) => String(Math.round(v)),
    marker: marker && {
      x: marker.mfu,
      y: days(marker.mfu),
      label: `the calculator above: MFU ${Math.round(marker.mfu * 1000) / 10}%`,
    },
  });
}
