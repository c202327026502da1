// Figure "validation-scatter" (web/figures/index.js): every expressible published run of a validation file,
// predicted MFU against the MFU its source published, from the engine's step_validation (drawn at build time only).
import { W, line, r1, svg, text, esc, CHAR } from './svg.js';

const HALVES = [
  { id: 'fit', name: 'fitting half', cls: 's0' },
  { id: 'heldout', name: 'held-out half', cls: 's1' },
  { id: 'all', name: 'runs', cls: 's0' },
];

/**
 * Each run of `runs` (a runs file's text, given by the build from the placeholder's runs_file) as one dot: x the
 * MFU its source published (its metric, whatever it is, is proportional to throughput, so the published MFU is
 * predicted_mfu / (1 + error)), y the MFU tally predicts. The diagonal is a perfect prediction; the dashed lines
 * are 20 % either way. Dots above the diagonal are runs tally thinks faster than they were.
 */
export default function validationScatter(engine, { runs }) {
  if (typeof runs !== 'string') throw new Error('validation-scatter needs the runs file (runs_file)');
  const report = engine.call('step_validation', { runs });
  const points = report.runs.map((row) => ({
    x: row.predicted_mfu / (1 + row.error),
    y: row.predicted_mfu,
    half: row.half,
    id: row.id,
    error: row.error,
  }));
  if (!points.length) throw new Error('validation-scatter: the runs file has no expressible run');
  const top = Math.ceil((Math.max(...points.flatMap((p) => [p.x, p.y])) * 1.05) / 0.1) * 0.1;
  const halves = HALVES.filter((h) => points.some((p) => p.half === h.id));
  // Legend row, then a square plot.
  const left = 58,
    right = 18,
    legendY = 14,
    plotTop = 30,
    size = W - left - right,
    bottom = plotTop + size,
    h = bottom + 40;
  const px = (v) => left + (v / top) * size;
  const py = (v) => bottom - (v / top) * size;
  let body = '';
  let lx = 4;
  for (const half of halves) {
    const count = points.filter((p) => p.half === half.id).length;
    const name = `${half.name} (${count})`;
    body += `<circle cx="${lx + 6}" cy="${legendY - 4}" r="3.2" class="dot ${half.cls}"/>`;
    body += text(lx + 14, legendY, name, { cls: `series-label ${half.cls}` });
    lx += 14 + name.length * CHAR + 16;
  }
  body += line(left, plotTop, left, bottom, 'axis') + line(left, bottom, left + size, bottom, 'axis');
  for (let v = 0; v <= top + 1e-9; v += 0.1) {
    const label = `${Math.round(v * 100)}%`;
    body += line(left, py(v), left + size, py(v), 'grid') + text(left - 4, py(v) + 4, label, { anchor: 'end' });
    if (v > 0) body += text(px(v), bottom + 17, label, { anchor: 'middle' }); // one 0% at the origin, the y axis's
  }
  // The diagonal and the 20 % lines, clipped to the plot.
  body += line(px(0), py(0), px(top), py(top), 'stroke');
  for (const k of [0.8, 1.2]) {
    const end = Math.min(top, top / k);
    body += line(px(0), py(0), px(end), py(end * k), 'limit', ' stroke-dasharray="4 3"');
  }
  body += text(px(top / 1.2) - 4, py(top) + 14, '+20 %', { anchor: 'end', cls: 'muted' });
  body += text(px(top) - 4, py(top * 0.8) + 16, '−20 %', { anchor: 'end', cls: 'muted' });
  for (const p of points) {
    const cls = halves.find((hh) => hh.id === p.half)?.cls ?? 's0';
    const signed = `${p.error >= 0 ? '+' : '−'}${Math.abs(p.error * 100).toFixed(1)} %`;
    body += `<circle cx="${r1(px(p.x))}" cy="${r1(py(p.y))}" r="2.6" class="dot ${cls}"><title>${esc(`${p.id}: ${signed}`)}</title></circle>`;
  }
  body += text(left + size / 2, h - 6, 'MFU the source published', { anchor: 'middle', cls: 'muted' });
  body += `<text transform="translate(12 ${r1((plotTop + bottom) / 2)}) rotate(-90)" text-anchor="middle" class="muted">MFU tally predicts</text>`;
  const median = Math.round(report.median_abs_error * 1000) / 10;
  return svg(h, body, `Predicted against published MFU for ${points.length} published runs; median error ${median} %`);
}
