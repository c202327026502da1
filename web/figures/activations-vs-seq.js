// Figure "activations-vs-seq" (web/figures/index.js): an engine curve; web/curves.js redraws it from the widget beside it.
import { chart, gb, kTokens, modelName, without } from './line-chart.js';

/**
 * Activations against sequence length, with and without FlashAttention. `base`: memory_budget arguments
 * other than seq and flash_attention (the widget's, or the chapter's setup); marker: { seq, flash }.
 */
export default function activationCurve(
  engine,
  { base = { model: 'llama-3-8b', hardware: 'h100-sxm', micro_batch: 1, recompute: 'none' }, marker = null } = {},
) {
  const seqs = [1024, 2048, 4096, 8192, 16384, 32768];
  const args = without(base, ['seq', 'flash_attention']);
  const at = (seq, flash) =>
    engine.call('memory_budget', { ...args, seq, flash_attention: flash }).activations.total_bytes;
  const capacity = args.hardware ? engine.call('memory_budget', { ...args, seq: 1024 }).capacity_bytes : 0;
  // Only lengths the engine accepts for this model (a preset refuses more than its trained context).
  const fits = (seq) => {
    try {
      at(seq, false);
      return true;
    } catch {
      return false;
    }
  };
  const shown = seqs.filter(fits);
  if (shown.length < 2) throw new Error(`${modelName(args)} accepts fewer than two of the plotted sequence lengths`);
  return chart({
    label: `Activation memory of ${modelName(args)} against sequence length, with and without FlashAttention`,
    xLabel: 'sequence length (tokens, log scale)',
    yLabel: 'activations (GB, log)',
    xLog: true,
    yLog: true,
    xFormat: kTokens,
    yFormat: gb,
    series: [
      { name: 'standard attention', points: shown.map((s) => [s, at(s, false)]) },
      { name: 'FlashAttention', points: shown.map((s) => [s, at(s, true)]) },
    ],
    hlines: capacity ? [{ y: capacity, label: 'one GPU' }] : [],
    marker: marker && {
      x: marker.seq,
      y: at(marker.seq, marker.flash),
      label: `the calculator above: ${marker.seq} tokens, ${marker.flash ? 'FlashAttention' : 'standard attention'}`,
    },
  });
}
