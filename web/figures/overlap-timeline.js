// Figure "overlap-timeline" (web/figures/index.js): a diagram drawn from the data below and the engine's numbers.
import { W, rect, svg, text } from './svg.js';

/**
 * One GPU's step as two lanes, compute above and communication below, laid out by the engine (`overlap`,
 * engine/src/comm/overlap.cpp) for DDP buckets, FSDP prefetch and a tensor-parallel collective matmul, each without
 * and with overlap on one time axis per pair. Grey on the compute lane is waiting: the exposed communication.
 */
export default function overlapTimeline(
  engine,
  { layers = 4, forward_seconds = 2.8e-3, layer_bytes = 404766720 } = {},
) {
  const common = { layers, forward_seconds, hardware: 'h100-sxm' };
  const pairs = [
    [
      'DDP, 16 GPUs on 2 nodes',
      { ...common, scheme: 'ddp', layer_bytes, bucket_bytes: layer_bytes / 2, ranks_per_node: 8, nodes: 2 },
      ['reduce after backward', 'buckets during backward'],
    ],
    [
      'FSDP, 8 GPUs',
      { ...common, scheme: 'fsdp', layer_bytes, ranks_per_node: 8 },
      ['no prefetch', 'prefetch one layer ahead'],
    ],
    [
      'TP 8, activations',
      {
        ...common,
        scheme: 'tp',
        forward_seconds: forward_seconds / 8,
        layer_bytes: 67108864,
        chunks: 4,
        ranks_per_node: 8,
      },
      ['gather, then matmul', '4-chunk collective matmul'],
    ],
  ];
  const x0 = 4,
    laneH = 12,
    width = W - x0 - 4;
  const ms = (v) => (v * 1e3 >= 10 ? (v * 1e3).toFixed(0) : (v * 1e3).toFixed(1));
  let body = '',
    y = 4;
  for (const [title, args, names] of pairs) {
    const runs = [false, true].map((overlap) => engine.call('overlap', { ...args, overlap }));
    const unit = width / Math.max(...runs.map((r) => r.step_seconds));
    body += text(x0, y + 12, title, { cls: 'strong' });
    y += 18;
    runs.forEach((r, i) => {
      body += text(x0, y + 11, `${names[i]}: ${ms(r.step_seconds)} ms, ${ms(r.exposed_comm_seconds)} ms exposed`);
      y += 16;
      body += rect(x0, y, r.step_seconds * unit, laneH, 'idle');
      for (const op of r.ops) {
        const cls = op.lane === 'comm' ? 'box tone-1' : op.kind === 'forward' ? 'box tone-0' : 'box tone-2';
        body += rect(
          x0 + op.start * unit,
          op.lane === 'comm' ? y + laneH + 2 : y,
          (op.end - op.start) * unit,
          laneH,
          cls,
        );
      }
      y += 2 * laneH + 8;
    });
    y += 4;
  }
  body += rect(4, y, 12, 12, 'box tone-0') + text(22, y + 10, 'forward');
  body += rect(88, y, 12, 12, 'box tone-2') + text(106, y + 10, 'backward');
  body += rect(186, y, 12, 12, 'box tone-1') + text(204, y + 10, 'collective');
  body += rect(4, y + 18, 12, 12, 'idle') + text(22, y + 28, 'compute waits: exposed communication');
  return svg(
    y + 36,
    body,
    `Step timelines of ${layers} Llama 2 7B layers, compute lane above the communication lane, for DDP, FSDP and tensor parallelism, each without and with overlap: the engine's layout.`,
  );
}
