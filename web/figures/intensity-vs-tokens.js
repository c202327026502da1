// Figure "intensity-vs-tokens" (web/figures/index.js): an engine curve; web/curves.js redraws it from the widget beside it.
import { chart, kTokens } from './line-chart.js';

/** Arithmetic intensity of a d × d weight matmul against the tokens in the batch, with the hardware's ridge. */
export default function intensityCurve(engine, { hardware = 'h100-sxm', d = 8192 } = {}) {
  const tokens = [1, 4, 16, 64, 256, 1024, 4096, 16384];
  const at = (m) => engine.call('matmul_roofline', { m, k: d, n: d, hardware });
  const ridge = at(1).ridge_flops_per_byte;
  return chart({
    label: `Arithmetic intensity of a ${d} by ${d} bf16 weight matmul against the tokens in the batch, with the ${hardware} ridge point`,
    xLabel: 'tokens in the batch (m, log scale)',
    yLabel: 'FLOP per byte (log)',
    xLog: true,
    yLog: true,
    xFormat: kTokens,
    yFormat: (v) => String(v),
    series: [{ name: `${d}×${d} weight`, points: tokens.map((m) => [m, at(m).intensity]) }],
    hlines: [{ y: ridge, label: `${hardware} ridge ${Math.round(ridge)}` }],
  });
}
