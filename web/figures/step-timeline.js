// Figure "step-timeline" (web/figures/index.js): one training step of one GPU as the step model accounts for it.
import { CHAR, F, W, line, rect, svg, text } from './svg.js';

/** How each of step_time's breakdown ids is drawn: its lane's colour class (the ids are the engine's). */
const TONE = {
  matmul: 'box tone-0',
  memory_bound: 'box tone-2',
  fp8_cast: 'box tone-2',
  optimizer: 'box tone-2',
  grad_accum: 'box tone-2',
  moe_sync: 'box tone-3',
  overlap_contention: 'box tone-3',
  bubble: 'idle',
};
const COMM = 'box tone-1'; // every collective and send, exposed on the GPU lane or hidden on the network lane

const seconds = (v) => (v >= 10 ? v.toFixed(1) : v >= 0.1 ? v.toFixed(2) : v.toFixed(3));
const percent = (v) => (v < 0.0005 ? 'under 0.1 %' : `${(v * 100).toFixed(1)} %`);

/** Splits `words` into lines of at most `chars` characters. */
function wrap(words, chars) {
  const lines = [];
  for (const word of words.split(' ')) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + 1 + word.length <= chars) lines[last] += ` ${word}`;
    else lines.push(word);
  }
  return lines;
}

/**
 * The step as two lanes on one time axis: the GPU lane holds every exposed component of the engine's breakdown
 * end to end (a trace interleaves them layer by layer; the model adds them), the network lane the communication
 * hidden behind the compute, and under the axis the engine's error band for the step. `options` are step_time's
 * arguments for the run drawn (the page gives its running example).
 */
export default function stepTimeline(engine, options = {}) {
  const args = options;
  if (typeof args.model !== 'string') throw new Error('step-timeline needs the run it draws (options: step_time args)');
  const r = engine.call('step_time', args);
  // The GPU's own work first, then what it waits for (exposed communication, the bubble), each in the engine's order.
  const computing = (p) => TONE[p.id] !== undefined && TONE[p.id] !== 'idle';
  const shown = r.breakdown.filter((p) => p.exposed && p.seconds > 0);
  const exposed = [...shown.filter(computing), ...shown.filter((p) => !computing(p))];
  const hidden = r.breakdown.filter((p) => !p.exposed && p.seconds > 0);
  const span = Math.max(r.step_seconds, r.band?.step_seconds_high ?? 0);
  const x0 = 4,
    width = W - 8,
    unit = width / span,
    laneH = 16;
  let y = 4,
    body = '';
  body += text(x0, y + F, `GPU: ${seconds(r.step_seconds)} s per step, the busiest pipeline stage`, { cls: 'strong' });
  y += F + 6;
  let at = x0;
  for (const p of exposed) {
    body += rect(at, y, p.seconds * unit, laneH, TONE[p.id] ?? COMM);
    at += p.seconds * unit;
  }
  y += laneH + 4;
  // Hidden communication runs under the computing stretch, ending where it ends (the last backward's reduction).
  const computingEnd = x0 + exposed.filter(computing).reduce((s, p) => s + p.seconds, 0) * unit;
  body += text(x0, y + F, 'network: communication hidden behind compute');
  y += F + 4;
  let end = computingEnd;
  for (const p of hidden) {
    const w = Math.min(p.seconds * unit, end - x0);
    body += rect(end - w, y, w, laneH, COMM);
    end -= w;
  }
  y += laneH + 8;
  // The time axis, then the band: where 80 % of runs like this one landed against their published figure.
  body += line(x0, y, x0 + width, y);
  for (const t of [0, r.step_seconds]) {
    body += line(x0 + t * unit, y - 3, x0 + t * unit, y + 3);
  }
  body += text(x0, y + F + 3, '0 s');
  body += text(x0 + r.step_seconds * unit, y + F + 3, `${seconds(r.step_seconds)} s`, { anchor: 'end' });
  y += F + 10;
  if (r.band) {
    const lo = x0 + r.band.step_seconds_low * unit,
      hi = x0 + r.band.step_seconds_high * unit;
    body += line(lo, y, hi, y) + line(lo, y - 4, lo, y + 4) + line(hi, y - 4, hi, y + 4);
    y += 4;
    for (const row of wrap(
      `band: ${seconds(r.band.step_seconds_low)}–${seconds(r.band.step_seconds_high)} s, from the errors of ${r.band.runs} published runs (${r.band.key})`,
      Math.floor(width / CHAR),
    )) {
      body += text(x0, y + F, row);
      y += F + 3;
    }
    y += 6;
  }
  // The key: every component drawn, with the engine's seconds and its share of the step.
  for (const p of [...exposed, ...hidden]) {
    const label = `${seconds(p.seconds)} s${p.exposed ? ` (${percent(p.seconds / r.step_seconds)})` : ', hidden'}: ${p.name}`;
    body += rect(x0, y + 2, 12, 12, p.exposed ? (TONE[p.id] ?? COMM) : COMM);
    for (const row of wrap(label, Math.floor((width - 18) / CHAR))) {
      body += text(x0 + 18, y + F, row);
      y += F + 3;
    }
    y += 2;
  }
  return svg(
    y + 4,
    body,
    `One training step of ${args.model} on ${args.gpus} ${args.hardware} GPUs (TP ${r.layout.tp}, PP ${r.layout.pp}) as the step model accounts for it: ${seconds(r.step_seconds)} s, its exposed components end to end on the GPU lane and the hidden communication below. A model, not a trace.`,
  );
}
