// Figure "zero-vs-gpus" (web/figures/index.js): an engine curve; web/curves.js redraws it from the widget beside it.
import { chart, gb, modelName, without } from './line-chart.js';

/** Memory per GPU against data-parallel GPUs for ZeRO 0 to 3. `base`: memory_budget arguments other than gpus and zero; marker: { gpus, zero }. */
export default function zeroCurve(
  engine,
  {
    base = {
      model: 'llama-3-70b',
      hardware: 'h100-sxm',
      seq: 4096,
      micro_batch: 1,
      recompute: 'selective',
      flash_attention: true,
    },
    marker = null,
  } = {},
) {
  const counts = [8, 16, 32, 64, 128, 256, 512, 1024];
  const args = without(base, ['gpus', 'zero']);
  const at = (gpus, zero) => engine.call('memory_budget', { ...args, gpus, zero }).per_gpu_bytes.total;
  const capacity = args.hardware ? engine.call('memory_budget', { ...args, seq: 1024 }).capacity_bytes : 0;
  return chart({
    label: `Memory per GPU of ${modelName(args)} against the number of GPUs, for ZeRO stages 0 to 3`,
    xLabel: 'data-parallel GPUs (log scale)',
    yLabel: 'memory per GPU (GB, log)',
    xLog: true,
    yLog: true,
    xFormat: String,
    yFormat: gb,
    series: [0, 1, 2, 3].map((z) => ({ name: z ? `ZeRO-${z}` : 'no ZeRO', points: counts.map((g) => [g, at(g, z)]) })),
    hlines: capacity ? [{ y: capacity, label: 'one GPU' }] : [],
    marker: marker && {
      x: marker.gpus,
      y: at(marker.gpus, marker.zero),
      label: `the calculator above: ${marker.gpus} GPUs, ZeRO-${marker.zero}`,
    },
  });
}
