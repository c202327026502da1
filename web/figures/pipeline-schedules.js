// Figure "pipeline-schedules" (web/figures/index.js): a diagram drawn from the data below and the engine's numbers.
import { W, rect, svg, text } from './svg.js';

/**
 * GPipe, 1F1B, interleaved 1F1B, ZB-H1 and DualPipe on one time axis, as the engine simulates them
 * (engine/src/step/schedule.cpp): the same bubble for the first two, but GPipe holds every micro-batch's
 * activations; interleaving shortens the bubble v-fold at the price of more in flight and more sends; ZB-H1
 * fills the holes with split-off weight gradients (W); DualPipe runs two directions and overlaps pairs.
 */
export default function pipelineSchedules(engine, { stages = 4, microbatches = 8, chunks = 2 } = {}) {
  const runs = [
    ['GPipe', engine.call('pipeline_schedule', { schedule: 'gpipe', stages, microbatches })],
    ['1F1B', engine.call('pipeline_schedule', { schedule: '1f1b', stages, microbatches })],
    [
      `interleaved, ${chunks} chunks`,
      engine.call('pipeline_schedule', { schedule: 'interleaved', stages, microbatches, chunks }),
    ],
    ['ZB-H1', engine.call('pipeline_schedule', { schedule: 'zb-h1', stages, microbatches })],
    ['DualPipe', engine.call('pipeline_schedule', { schedule: 'dualpipe', stages, microbatches })],
  ];
  const x0 = 52,
    rowH = 18,
    longest = Math.max(...runs.map(([, r]) => r.makespan)),
    unit = (W - x0 - 4) / longest;
  const tone = (b) =>
    b.kind === 'W' ? 'box tone-3' : b.kind === 'B' ? 'box tone-2' : `box tone-${b.chunk === 0 ? 0 : 1}`;
  let body = '',
    y = 4;
  for (const [name, r] of runs) {
    const inFlight = Number.isInteger(r.peak_in_flight) ? r.peak_in_flight : r.peak_in_flight.toFixed(2);
    const copies = r.parameter_copies > 1 ? `, ${r.parameter_copies}× weights` : '';
    body += text(4, y + 12, `${name}: bubble ${(r.bubble_ratio * 100).toFixed(1)}%, ${inFlight} in flight${copies}`, {
      cls: 'strong',
    });
    y += 18;
    for (let s = 0; s < stages; s++) {
      body += text(4, y + s * rowH + 13, `GPU ${s + 1}`);
      body += rect(x0, y + s * rowH, r.makespan * unit, rowH - 2, 'idle');
    }
    const pairs = new Map();
    for (const b of r.blocks) {
      body += rect(x0 + b.start * unit, y + b.stage * rowH, (b.end - b.start) * unit, rowH - 2, tone(b));
      if (b.pair !== undefined) {
        const span = pairs.get(b.pair) ?? { stage: b.stage, start: b.start, end: b.end };
        pairs.set(b.pair, { stage: span.stage, start: Math.min(span.start, b.start), end: Math.max(span.end, b.end) });
      }
    }
    // DualPipe's overlapped forward-backward pairs: one outline around both blocks.
    for (const span of pairs.values())
      body += rect(x0 + span.start * unit, y + span.stage * rowH, (span.end - span.start) * unit, rowH - 2, 'pair');
    y += stages * rowH + 10;
  }
  // Two legend rows, three columns wide enough for the longest label at 13 units (CHAR each).
  body += rect(4, y, 12, 12, 'box tone-0') + text(22, y + 10, 'forward');
  body += rect(110, y, 12, 12, 'box tone-1') + text(128, y + 10, '2nd chunk or reverse');
  body += rect(4, y + 20, 12, 12, 'box tone-2') + text(22, y + 30, 'backward');
  body += rect(110, y + 20, 12, 12, 'box tone-3') + text(128, y + 30, 'W: weight gradient');
  body += rect(276, y + 20, 24, 12, 'pair') + text(306, y + 30, 'overlapped');
  return svg(
    y + 38,
    body,
    `GPipe, 1F1B, interleaved 1F1B, ZB-H1 and DualPipe on ${stages} GPUs with ${microbatches} micro-batches, on one time axis: the engine's simulation of each schedule.`,
  );
}
