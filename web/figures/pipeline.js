// Figure "pipeline" (web/figures/index.js): a diagram drawn from the data below and the engine's numbers.
import { W, rect, svg, text } from './svg.js';

/** The 1F1B pipeline schedule (Narayanan et al., 2021), as the engine simulates it (engine/src/step/schedule.cpp). */
export default function pipeline(engine, { stages = 4, microbatches = 8 } = {}) {
  const {
    blocks,
    makespan,
    idle_fraction: bubble,
  } = engine.call('pipeline_schedule', { schedule: '1f1b', stages, microbatches });
  const x0 = 52,
    unit = (W - x0 - 4) / makespan,
    rowH = 28,
    y0 = 8;
  let body = '';
  for (let s = 0; s < stages; s++) {
    body += text(4, y0 + s * rowH + 18, `GPU ${s + 1}`);
    body += rect(x0, y0 + s * rowH, makespan * unit, rowH - 4, 'idle');
  }
  // Blocks carry the micro-batch number only (a forward is one glyph wide at 13 units); colour says F or B.
  for (const b of blocks) {
    body += rect(
      x0 + b.start * unit,
      y0 + b.stage * rowH,
      (b.end - b.start) * unit,
      rowH - 4,
      b.kind === 'F' ? 'box tone-0' : 'box tone-2',
    );
    body += text(x0 + ((b.start + b.end) / 2) * unit, y0 + b.stage * rowH + 17, b.micro + 1, { anchor: 'middle' });
  }
  const y = y0 + stages * rowH + 18;
  body += rect(4, y - 10, 12, 12, 'box tone-0') + text(22, y, 'forward');
  body += rect(110, y - 10, 12, 12, 'box tone-2') + text(128, y, 'backward (2× forward)');
  body += rect(4, y + 10, 12, 12, 'idle') + text(22, y + 20, 'idle: the bubble; numbers are micro-batches');
  body += text(
    4,
    y + 44,
    `${stages} stages, ${microbatches} micro-batches: idle ${(bubble * 100).toFixed(1)}% of the step`,
    {
      cls: 'strong',
    },
  );
  body += text(4, y + 64, '= (p − 1) / (m + p − 1)', { cls: 'strong' });
  return svg(
    y + 74,
    body,
    `The 1F1B pipeline schedule on ${stages} GPUs with ${microbatches} micro-batches; grey gaps at the start and end are the bubble.`,
  );
}
