// The page's explanatory figures and curves, drawn as SVG at build time by scripts/build-site.mjs.
// Diagrams are drawn from small data tables in this file (shapes, schedules, which state each kind of
// parallelism splits); curves and every number in a label come from the wasm engine, never from a formula
// here. Colours are CSS classes and currentColor (web/style.css), so one SVG serves light and dark themes.
// A viewBox about 400 units wide keeps 12-unit text legible when a phone scales it to ~350 px.

const W = 400;

const esc = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const r1 = (v) => Math.round(v * 10) / 10;

function rect(x, y, w, h, cls = 'box', extra = '') {
  return `<rect x="${r1(x)}" y="${r1(y)}" width="${r1(w)}" height="${r1(h)}" class="${cls}"${extra}/>`;
}
function text(x, y, content, { anchor = 'start', cls = '', size } = {}) {
  return `<text x="${r1(x)}" y="${r1(y)}" text-anchor="${anchor}"${cls ? ` class="${cls}"` : ''}${size ? ` font-size="${size}"` : ''}>${esc(content)}</text>`;
}
function line(x1, y1, x2, y2, cls = 'stroke', extra = '') {
  return `<line x1="${r1(x1)}" y1="${r1(y1)}" x2="${r1(x2)}" y2="${r1(y2)}" class="${cls}"${extra}/>`;
}
function arrow(x1, y1, x2, y2, cls = 'stroke') {
  return line(x1, y1, x2, y2, cls, ' marker-end="url(#arrowhead)"');
}
const defs = '<defs><marker id="arrowhead" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="currentColor"/></marker></defs>';

function svg(height, body, label) {
  return `<svg class="fig-svg" viewBox="0 0 ${W} ${height}" role="img" aria-label="${esc(label)}" xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif" font-size="12" fill="currentColor">${defs}${body}</svg>`;
}

// ------------------------------------------------------------------------------------------ diagrams

/** A (2, 3) tensor, its transpose as a view, and the one storage both read (offsets from the strides). */
function strides() {
  const shape = [2, 3];
  const cell = 30;
  const grid = (x0, y0, rows, cols, stride, title) => {
    let out = text(x0, y0 - 8, title, { cls: 'label' });
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) {
        const offset = i * stride[0] + j * stride[1];
        out += rect(x0 + j * cell, y0 + i * cell, cell, cell, `box tone-${offset % 3}`);
        out += text(x0 + j * cell + cell / 2, y0 + i * cell + 19, offset, { anchor: 'middle' });
      }
    return out;
  };
  let body = grid(20, 40, shape[0], shape[1], [shape[1], 1], 'x: shape (2, 3), strides (3, 1)');
  body += grid(230, 40, shape[1], shape[0], [1, shape[1]], 'x.T: shape (3, 2), strides (1, 3)');
  const y = 190;
  body += text(20, y - 10, 'storage: one block of 6 elements, shared by both', { cls: 'label' });
  for (let k = 0; k < 6; k++) {
    body += rect(20 + k * cell * 1.6, y, cell * 1.6, cell, `box tone-${k % 3}`);
    body += text(20 + k * cell * 1.6 + cell * 0.8, y + 19, k, { anchor: 'middle' });
  }
  body += text(20, y + 52, 'element [i, j] lives at offset i·stride₀ + j·stride₁', { cls: 'muted' });
  return svg(250, body, 'A 2 by 3 tensor and its transpose are two views of the same six stored elements; the numbers are storage offsets computed from the strides.');
}

/** The shapes of C = A·B and the dot product behind each output. */
function matmul(engine, { m = 2048, k = 4096, n = 4096 } = {}) {
  const flops = engine.call('matmul_roofline', { m, n, k, hardware: 'h100-sxm' }).flops;
  const body = [
    rect(20, 60, 90, 120, 'box tone-0'), text(65, 52, 'A  (m × k)', { anchor: 'middle' }),
    rect(20, 100, 90, 14, 'hl'), text(65, 196, 'row i: k numbers', { anchor: 'middle', cls: 'muted' }),
    rect(150, 20, 110, 90, 'box tone-1'), text(205, 14, 'B  (k × n)', { anchor: 'middle' }),
    rect(210, 20, 14, 90, 'hl'),
    rect(150, 130, 110, 120, 'box tone-2'), text(205, 268, 'C = A·B  (m × n)', { anchor: 'middle' }),
    rect(210, 170, 14, 14, 'hl-strong'),
    text(280, 150, 'C[i, j] = Σ A[i, t]·B[t, j]', { size: 11 }),
    text(280, 168, 'k multiplies + k adds', { cls: 'muted', size: 11 }),
    text(280, 196, 'm·n outputs × 2k', { size: 11 }),
    text(280, 214, '= 2mnk FLOPs', { size: 11, cls: 'strong' }),
    text(280, 236, `m=${m}, k=${k},`, { cls: 'muted', size: 10 }),
    text(280, 250, `n=${n}: ${(flops / 1e9).toLocaleString('en-US', { maximumFractionDigits: 1 })} GFLOP`, { cls: 'muted', size: 10 }),
    text(280, 264, '(the engine\'s count)', { cls: 'muted', size: 10 }),
  ].join('');
  return svg(280, body, 'Matrix A of shape m by k times B of shape k by n gives C of shape m by n; each output is a dot product of length k, so the product costs 2mnk FLOPs.');
}

/** Forward and backward graph of one linear layer Y = X·W, with each matmul's cost. */
function backward() {
  const node = (x, y, label, cls = 'box tone-0') => rect(x, y, 74, 28, cls, ' rx="5"') + text(x + 37, y + 19, label, { anchor: 'middle' });
  const op = (x, y, label, cost) => rect(x, y, 96, 34, 'box tone-2', ' rx="5"') + text(x + 48, y + 15, label, { anchor: 'middle', size: 11 }) +
    text(x + 48, y + 29, cost, { anchor: 'middle', size: 10, cls: 'muted' });
  const body = [
    text(10, 18, 'forward', { cls: 'label' }),
    node(10, 30, 'X (B×D)'), node(10, 70, 'W (D×K)', 'box tone-1'),
    op(140, 46, 'Y = X·W', '2BDK FLOPs'),
    arrow(84, 44, 138, 58), arrow(84, 84, 138, 70),
    node(280, 46, 'Y → loss'), arrow(236, 63, 278, 60),
    line(10, 124, 390, 124, 'rule'),
    text(10, 146, 'backward (chain rule, right to left)', { cls: 'label' }),
    node(300, 184, '∂L/∂Y', 'box tone-0'),
    op(150, 160, '∂L/∂W = Xᵀ·∂L/∂Y', '2BDK FLOPs'), op(150, 214, '∂L/∂X = ∂L/∂Y·Wᵀ', '2BDK FLOPs'),
    arrow(298, 194, 248, 178), arrow(298, 204, 248, 228),
    node(20, 160, 'update W', 'box tone-1'), node(20, 214, 'to layer below'),
    arrow(148, 177, 96, 174), arrow(148, 231, 96, 228),
    text(10, 276, 'forward 2BDK + backward 4BDK = 6 × tokens × parameters', { cls: 'strong', size: 11 }),
  ].join('');
  return svg(290, body, 'One linear layer: the forward pass is one matmul; the backward pass needs two matmuls of the same size, one for the weight gradient and one for the input gradient.');
}

// Which per-GPU state each method divides among its GPUs: "split", "whole" (every GPU keeps it all) or
// "partial" (split in part: TP splits activations inside blocks; PP's first stage holds p micro-batches).
const SPLITS = [
  ['DDP', ['whole', 'whole', 'whole', 'split']],
  ['ZeRO-1', ['whole', 'whole', 'split', 'split']],
  ['ZeRO-2', ['whole', 'split', 'split', 'split']],
  ['ZeRO-3', ['split', 'split', 'split', 'split']],
  ['TP', ['split', 'split', 'split', 'partial']],
  ['PP', ['split', 'split', 'split', 'partial']],
];
const COLUMNS = ['weights', 'gradients', 'optimizer + master', 'activations'];

function parallelism() {
  const gpus = 4;
  const x0 = 62, colW = 83, rowH = 34, y0 = 36;
  let body = COLUMNS.map((c, j) => text(x0 + j * colW + colW / 2 - 4, 24, c, { anchor: 'middle', size: 10.5 })).join('');
  SPLITS.forEach(([name, states], i) => {
    const y = y0 + i * rowH;
    body += text(4, y + 20, name, { cls: 'strong', size: 11 });
    states.forEach((state, j) => {
      const x = x0 + j * colW, w = colW - 12;
      if (state === 'whole') {
        for (let g = 0; g < gpus; g++) body += rect(x, y + 4 + g * 6, w, 5, 'bar-whole');
      } else {
        const piece = w / gpus;
        for (let g = 0; g < gpus; g++) body += rect(x + g * piece, y + 4 + g * 6, piece * (state === 'partial' ? 2 : 1), 5, `bar-split tone-${g % 3}`);
      }
    });
  });
  const y = y0 + SPLITS.length * rowH + 10;
  body += rect(4, y, 24, 5, 'bar-whole') + text(32, y + 6, 'every GPU keeps all of it', { size: 10.5 });
  body += rect(190, y, 6, 5, 'bar-split tone-0') + rect(196, y + 6, 6, 5, 'bar-split tone-1') + text(208, y + 9, 'each GPU keeps 1/4 (4 GPUs)', { size: 10.5 });
  return svg(y + 24, body, 'Which training state each method splits across 4 GPUs: ZeRO stages 1, 2 and 3 split optimizer state, then gradients, then weights; tensor and pipeline parallelism split all three and part of the activations.');
}

/**
 * The 1F1B pipeline schedule (Narayanan et al., 2021), simulated: each stage runs p − s − 1 warm-up
 * forwards, then alternates one forward and one backward; a forward waits for the previous stage, a
 * backward for the next. Backward takes twice a forward.
 */
export function oneFOneB(stages, microbatches) {
  const fTime = 1, bTime = 2;
  const order = [];
  for (let s = 0; s < stages; s++) {
    const warm = Math.min(stages - s - 1, microbatches);
    const ops = [];
    let f = 0, b = 0;
    for (; f < warm; f++) ops.push(['F', f]);
    while (b < microbatches) {
      if (f < microbatches) ops.push(['F', f++]);
      ops.push(['B', b++]);
    }
    order.push(ops);
  }
  const done = new Map(); // "F s i" -> end time
  const free = new Array(stages).fill(0);
  const next = new Array(stages).fill(0);
  const blocks = [];
  let progress = true;
  while (progress) {
    progress = false;
    for (let s = 0; s < stages; s++) {
      if (next[s] >= order[s].length) continue;
      const [kind, i] = order[s][next[s]];
      const dep = kind === 'F' ? (s === 0 ? 0 : done.get(`F ${s - 1} ${i}`)) : (s === stages - 1 ? done.get(`F ${s} ${i}`) : done.get(`B ${s + 1} ${i}`));
      if (dep === undefined) continue;
      const start = Math.max(dep, free[s]);
      const end = start + (kind === 'F' ? fTime : bTime);
      done.set(`${kind} ${s} ${i}`, end);
      free[s] = end;
      blocks.push({ stage: s, kind, micro: i, start, end });
      next[s]++;
      progress = true;
    }
  }
  const makespan = Math.max(...free);
  const busy = microbatches * (fTime + bTime);
  return { blocks, makespan, bubble: (makespan - busy) / makespan };
}

function pipeline(engine, { stages = 4, microbatches = 8 } = {}) {
  const { blocks, makespan, bubble } = oneFOneB(stages, microbatches);
  const x0 = 52, unit = (W - x0 - 8) / makespan, rowH = 26, y0 = 10;
  let body = '';
  for (let s = 0; s < stages; s++) {
    body += text(4, y0 + s * rowH + 17, `GPU ${s + 1}`, { size: 11 });
    body += rect(x0, y0 + s * rowH, makespan * unit, rowH - 4, 'idle');
  }
  for (const b of blocks) {
    body += rect(x0 + b.start * unit, y0 + b.stage * rowH, (b.end - b.start) * unit, rowH - 4, b.kind === 'F' ? 'box tone-0' : 'box tone-2');
    body += text(x0 + (b.start + b.end) / 2 * unit, y0 + b.stage * rowH + 15, `${b.kind}${b.micro + 1}`, { anchor: 'middle', size: 9.5 });
  }
  const y = y0 + stages * rowH + 16;
  body += rect(x0, y - 9, 12, 10, 'box tone-0') + text(x0 + 16, y, 'forward', { size: 11 });
  body += rect(x0 + 80, y - 9, 12, 10, 'box tone-2') + text(x0 + 96, y, 'backward (2×)', { size: 11 });
  body += rect(x0 + 190, y - 9, 12, 10, 'idle') + text(x0 + 206, y, 'idle: the bubble', { size: 11 });
  body += text(4, y + 22, `${stages} stages, ${microbatches} micro-batches: idle share ${(bubble * 100).toFixed(1)}% = (p−1)/(m+p−1)`, { size: 11, cls: 'strong' });
  return svg(y + 32, body, `The 1F1B pipeline schedule on ${stages} GPUs with ${microbatches} micro-batches; grey gaps at the start and end are the bubble.`);
}

/** Bit layouts of the main formats, from the engine's format table (sign, exponent, mantissa bits). */
function bitLayouts(engine) {
  const { formats } = engine.call('float_formats', {});
  const wanted = ['fp32', 'bf16', 'fp16', 'e4m3', 'e5m2', 'e2m1'];
  const bitW = (W - 52 - 58) / 32, rowH = 30; // room on the right for the bias label
  let body = '';
  wanted.forEach((name, i) => {
    const f = formats.find((x) => x.name === name);
    if (!f) throw new Error(`float_formats has no ${name}`);
    const y = 8 + i * rowH;
    body += text(4, y + 15, name, { size: 11, cls: 'strong' });
    const parts = [['sign', f.sign_bits, 'tone-1'], ['exp', f.exponent_bits, 'tone-0'], ['man', f.mantissa_bits, 'tone-2']];
    let x = 52;
    for (const [label, bits, tone] of parts) {
      if (!bits) continue;
      for (let b = 0; b < bits; b++) body += rect(x + b * bitW, y, bitW, 20, `box ${tone}`);
      if (bits * bitW > 26) body += text(x + bits * bitW / 2, y + 14, `${label} ${bits}`, { anchor: 'middle', size: 10 });
      x += bits * bitW;
    }
    body += text(x + 4, y + 14, `bias ${f.bias}`, { size: 10, cls: 'muted' });
  });
  return svg(8 + wanted.length * rowH + 4, body, 'Bit layouts: fp32 1 sign, 8 exponent, 23 mantissa bits; bf16 1, 8, 7; fp16 1, 5, 10; fp8 E4M3 1, 4, 3; E5M2 1, 5, 2; fp4 E2M1 1, 2, 1.');
}

// ------------------------------------------------------------------------------------------ curves

/**
 * A line chart of engine series. series: [{name, points: [[x, y]], cls}]; hlines: [{y, label}].
 * Each series is labelled at its last point (no legend to look up).
 */
export function chart({ label, xLabel, yLabel, xLog = false, yLog = false, series, hlines = [], height = 250, xFormat = String, yFormat = String }) {
  const left = 48, right = 92, top = 12, bottom = 40;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).concat(hlines.map((h) => h.y));
  for (const v of [...xs, ...ys]) if (!Number.isFinite(v) || ((xLog || yLog) && v <= 0)) throw new Error(`chart "${label}": value ${v} cannot be plotted`);
  const tx = xLog ? Math.log10 : (v) => v, ty = yLog ? Math.log10 : (v) => v;
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)].map(tx);
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)].map(ty);
  if (!yLog) y0 = Math.min(0, y0);
  const pad = (y1 - y0) * 0.06; y1 += pad; if (yLog) y0 -= pad;
  const px = (v) => left + (tx(v) - x0) / (x1 - x0) * (W - left - right);
  const py = (v) => top + (1 - (ty(v) - y0) / (y1 - y0)) * (height - top - bottom);
  let body = line(left, top, left, height - bottom, 'axis') + line(left, height - bottom, W - right, height - bottom, 'axis');
  const ticks = (lo, hi, log) => {
    if (log) { const out = []; for (let e = Math.ceil(lo - 1e-9); e <= hi + 1e-9; e++) out.push(10 ** e); return out; }
    const step = 10 ** Math.floor(Math.log10((hi - lo) / 3)); const k = (hi - lo) / step > 8 ? step * 2 : step;
    const out = []; for (let v = Math.ceil(lo / k) * k; v <= hi + 1e-9; v += k) out.push(v); return out;
  };
  for (const v of ticks(y0, y1, yLog)) body += line(left, py(v), W - right, py(v), 'grid') + text(left - 4, py(v) + 4, yFormat(v), { anchor: 'end', size: 10 });
  const xt = xLog ? xs.filter((v, i, a) => a.indexOf(v) === i && Number.isInteger(Math.log2(v)) && Math.log2(v) % 2 === 0) : ticks(x0, x1, false);
  for (const v of xt) body += text(px(v), height - bottom + 14, xFormat(v), { anchor: 'middle', size: 10 });
  body += text((left + W - right) / 2, height - 6, xLabel, { anchor: 'middle', cls: 'muted', size: 11 });
  body += `<text transform="translate(11 ${(top + height - bottom) / 2}) rotate(-90)" text-anchor="middle" class="muted" font-size="11">${esc(yLabel)}</text>`;
  for (const h of hlines) body += line(left, py(h.y), W - right, py(h.y), 'limit') + text(W - right + 4, py(h.y) + 4, h.label, { size: 10, cls: 'muted' });
  const used = [];
  series.forEach((s, i) => {
    const d = s.points.map((p, j) => `${j ? 'L' : 'M'}${r1(px(p[0]))},${r1(py(p[1]))}`).join('');
    body += `<path d="${d}" class="series s${i}" fill="none"/>`;
    for (const p of s.points) body += `<circle cx="${r1(px(p[0]))}" cy="${r1(py(p[1]))}" r="2.2" class="dot s${i}"/>`;
    const last = s.points[s.points.length - 1];
    let ly = py(last[1]) + 4;
    while (used.some((u) => Math.abs(u - ly) < 12)) ly += 12;
    used.push(ly);
    body += text(W - right + 4, ly, s.name, { size: 10.5, cls: `series-label s${i}` });
  });
  return svg(height, body, label);
}

const gb = (v) => `${Number((v / 1e9).toPrecision(3))}`;
const kTokens = (v) => (v >= 1024 ? `${v / 1024}k` : String(v));

function activationCurve(engine, { model = 'llama-3-8b', hardware = 'h100-sxm' } = {}) {
  const seqs = [1024, 2048, 4096, 8192, 16384, 32768];
  const at = (seq, flash) => engine.call('memory_budget', { model, hardware, seq, micro_batch: 1, recompute: 'none', flash_attention: flash }).activations.total_bytes;
  const capacity = engine.call('memory_budget', { model, hardware, seq: 1024 }).capacity_bytes;
  return chart({
    label: `Activation memory of ${model} against sequence length, with and without FlashAttention`,
    xLabel: 'sequence length (tokens, log scale)', yLabel: 'activations (GB, log)', xLog: true, yLog: true,
    xFormat: kTokens, yFormat: gb,
    series: [
      { name: 'standard attention', points: seqs.map((s) => [s, at(s, false)]) },
      { name: 'FlashAttention', points: seqs.map((s) => [s, at(s, true)]) },
    ],
    hlines: capacity ? [{ y: capacity, label: `one GPU` }] : [],
  });
}

function zeroCurve(engine, { model = 'llama-3-70b', hardware = 'h100-sxm', seq = 4096 } = {}) {
  const counts = [8, 16, 32, 64, 128, 256, 512, 1024];
  const at = (gpus, zero) => engine.call('memory_budget', { model, hardware, gpus, zero, seq, micro_batch: 1, recompute: 'selective', flash_attention: true }).per_gpu_bytes.total;
  const capacity = engine.call('memory_budget', { model, hardware, seq: 1024 }).capacity_bytes;
  return chart({
    label: `Memory per GPU of ${model} against the number of GPUs, for ZeRO stages 0 to 3`,
    xLabel: 'data-parallel GPUs (log scale)', yLabel: 'memory per GPU (GB, log)', xLog: true, yLog: true,
    xFormat: String, yFormat: gb,
    series: [0, 1, 2, 3].map((z) => ({ name: z ? `ZeRO-${z}` : 'no ZeRO', points: counts.map((g) => [g, at(g, z)]) })),
    hlines: capacity ? [{ y: capacity, label: 'one GPU' }] : [],
  });
}

function mfuCurve(engine, { params = 70e9, tokens = 15e12, hardware = 'h100-sxm', gpus = 1024 } = {}) {
  const mfus = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
  const days = (mfu) => engine.call('training_cost', { params, tokens, hardware, gpus, mfu }).days;
  return chart({
    label: `Days to train ${params / 1e9}B parameters on ${tokens / 1e12}T tokens with ${gpus} GPUs, against MFU`,
    xLabel: 'MFU', yLabel: 'days', series: [{ name: `${gpus} GPUs`, points: mfus.map((m) => [m, days(m)]) }],
    xFormat: (v) => `${Math.round(v * 100)}%`, yFormat: (v) => String(Math.round(v)),
  });
}

function intensityCurve(engine, { hardware = 'h100-sxm', d = 8192 } = {}) {
  const tokens = [1, 4, 16, 64, 256, 1024, 4096, 16384];
  const at = (m) => engine.call('matmul_roofline', { m, k: d, n: d, hardware });
  const ridge = at(1).ridge_flops_per_byte;
  return chart({
    label: `Arithmetic intensity of a ${d} by ${d} bf16 weight matmul against the tokens in the batch, with the ${hardware} ridge point`,
    xLabel: 'tokens in the batch (m, log scale)', yLabel: 'FLOP per byte (log)', xLog: true, yLog: true,
    xFormat: kTokens, yFormat: (v) => String(v),
    series: [{ name: `${d}×${d} weight`, points: tokens.map((m) => [m, at(m).intensity]) }],
    hlines: [{ y: ridge, label: `ridge ${Math.round(ridge)}` }],
  });
}

const FIGURES = {
  strides, matmul, backward, parallelism, pipeline, 'bit-layouts': bitLayouts,
  'activations-vs-seq': activationCurve, 'zero-vs-gpus': zeroCurve, 'time-vs-mfu': mfuCurve, 'intensity-vs-tokens': intensityCurve,
};
export const FIGURE_NAMES = Object.keys(FIGURES);

/** The SVG of one named figure (engine: { call(method, args) }). Throws for an unknown name. */
export function renderFigure(name, engine, options = {}) {
  const draw = FIGURES[name];
  if (!draw) throw new Error(`unknown figure; known: ${FIGURE_NAMES.join(', ')}`);
  return draw(engine, options);
}
