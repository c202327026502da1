// Figure "moe-drops" (web/figures/index.js): an engine curve; web/curves.js redraws it from the widget beside it.
import { chart } from './line-chart.js';

/** Expected share of token assignments dropped against the capacity factor, random routing, three mean loads. */
export default function moeDrops(engine) {
  const factors = [1, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3];
  // Mixtral, EP 8: a mean load of 2 × seq per expert (seq × 8 GPUs × top 2 / 8 experts).
  const loads = [64, 512, 4096];
  const dropped = (seq, cf) =>
    engine.call('moe_routing', { model: 'mixtral-8x7b', seq, ep: 8, capacity_factor: cf }).random_routing
      .expected_dropped_fraction;
  return chart({
    label:
      'Expected share of token assignments dropped against the capacity factor, for mean loads of 64, 512 and 4,096 tokens per expert',
    xLabel: 'capacity factor',
    yLabel: 'dropped',
    xFormat: (v) => v.toFixed(2),
    yFormat: (v) => `${Number((v * 100).toPrecision(2))}%`,
    series: loads.map((load) => ({
      name: `${load.toLocaleString('en-US')} per expert`,
      points: factors.map((cf) => [cf, dropped(load / 2, cf)]),
    })),
  });
}
