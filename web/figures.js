// The page's explanatory figures and curves, drawn as SVG at build time by scripts/build/build-site.mjs; in the
// browser web/curves.js redraws the curves from the state of the widget beside each.
// Diagrams are drawn from small data tables in this file (shapes, schedules, which state each kind of
// parallelism splits); curves and every number in a label come from the wasm engine, never from a formula
// here. Colours are CSS classes and currentColor (web/style.css), so one SVG serves light and dark themes.
// The viewBox is 400 units wide and no text is under 13 units: a 375 px phone shows the figure ~350 px wide
// (scale 0.875), so the smallest text is 11.4 px, the page's minimum (tests/browser/layout-audit.mjs). Long
// labels are split over lines or moved under the drawing rather than shrunk.

const W = 400;
const F = 13; // the one text size, in viewBox units
const CHAR = 0.56 * F; // a generous average glyph width of system-ui at that size, for laying labels out

const esc = (text) =>
  String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
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
const defs =
  '<defs><marker id="arrowhead" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="currentColor"/></marker></defs>';

function svg(height, body, label) {
  return `<svg class="fig-svg" viewBox="0 0 ${W} ${height}" role="img" aria-label="${esc(label)}" xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif" font-size="${F}" fill="currentColor">${defs}${body}</svg>`;
}

// ------------------------------------------------------------------------------------------ diagrams

/** A (2, 3) tensor, its transpose as a view, and the one storage both read (offsets from the strides). */
function strides() {
  const shape = [2, 3];
  const cell = 30;
  const grid = (x0, y0, rows, cols, stride, name, shapeText, strideText) => {
    let out =
      text(x0, y0 - 26, `${name}: shape ${shapeText}`, { cls: 'heading' }) +
      text(x0, y0 - 9, `strides ${strideText}`, { cls: 'muted' });
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) {
        const offset = i * stride[0] + j * stride[1];
        out += rect(x0 + j * cell, y0 + i * cell, cell, cell, `box tone-${offset % 3}`);
        out += text(x0 + j * cell + cell / 2, y0 + i * cell + 20, offset, { anchor: 'middle' });
      }
    return out;
  };
  let body = grid(20, 52, shape[0], shape[1], [shape[1], 1], 'x', '(2, 3)', '(3, 1)');
  body += grid(220, 52, shape[1], shape[0], [1, shape[1]], 'x.T', '(3, 2)', '(1, 3)');
  const y = 186;
  body += text(20, y - 10, 'storage: 6 elements, shared by both', { cls: 'heading' });
  for (let k = 0; k < 6; k++) {
    body += rect(20 + k * cell * 1.6, y, cell * 1.6, cell, `box tone-${k % 3}`);
    body += text(20 + k * cell * 1.6 + cell * 0.8, y + 20, k, { anchor: 'middle' });
  }
  body += text(20, y + 54, '[i, j] lives at offset i·stride₀ + j·stride₁', { cls: 'muted' });
  return svg(
    252,
    body,
    'A 2 by 3 tensor and its transpose are two views of the same six stored elements; the numbers are storage offsets computed from the strides.',
  );
}

/** The shapes of C = A·B and the dot product behind each output. */
function matmul(engine, { m = 2048, k = 4096, n = 4096 } = {}) {
  const flops = engine.call('matmul_roofline', { m, n, k, hardware: 'h100-sxm' }).flops;
  const body = [
    rect(20, 60, 90, 120, 'box tone-0'),
    text(65, 50, 'A (m × k)', { anchor: 'middle' }),
    rect(20, 100, 90, 14, 'hl'),
    text(65, 198, 'row i: k numbers', { anchor: 'middle', cls: 'muted' }),
    rect(170, 24, 110, 90, 'box tone-1'),
    text(225, 16, 'B (k × n)', { anchor: 'middle' }),
    rect(230, 24, 14, 90, 'hl'),
    text(290, 74, 'column j', { cls: 'muted' }),
    rect(170, 130, 110, 120, 'box tone-2'),
    text(225, 270, 'C = A·B (m × n)', { anchor: 'middle' }),
    rect(230, 170, 14, 14, 'hl-strong'),
    text(290, 182, 'C[i, j]', { cls: 'muted' }),
    text(20, 300, 'C[i, j] = Σₜ A[i, t]·B[t, j]'),
    text(20, 320, 'k multiplies + k adds = 2k FLOPs', { cls: 'muted' }),
    text(20, 342, 'm·n outputs × 2k = 2mnk FLOPs', { cls: 'strong' }),
    text(
      20,
      364,
      `m = ${m}, k = ${k}, n = ${n}: ${(flops / 1e9).toLocaleString('en-US', { maximumFractionDigits: 1 })} GFLOP`,
      { cls: 'muted' },
    ),
  ].join('');
  return svg(
    376,
    body,
    'Matrix A of shape m by k times B of shape k by n gives C of shape m by n; each output is a dot product of length k, so the product costs 2mnk FLOPs.',
  );
}

/** Forward and backward graph of one linear layer Y = X·W, with each matmul's cost. */
function backward() {
  const node = (x, y, w, label, cls = 'box tone-0') =>
    rect(x, y, w, 30, cls, ' rx="5"') + text(x + w / 2, y + 20, label, { anchor: 'middle' });
  const op = (x, y, w, label, cost) =>
    rect(x, y, w, 42, 'box tone-2', ' rx="5"') +
    text(x + w / 2, y + 18, label, { anchor: 'middle' }) +
    text(x + w / 2, y + 35, cost, { anchor: 'middle', cls: 'muted' });
  const body = [
    text(10, 18, 'forward', { cls: 'heading' }),
    node(10, 30, 84, 'X (B×D)'),
    node(10, 72, 84, 'W (D×K)', 'box tone-1'),
    op(140, 44, 110, 'Y = X·W', '2BDK FLOPs'),
    arrow(94, 45, 138, 60),
    arrow(94, 87, 138, 74),
    node(296, 50, 96, 'Y → loss'),
    arrow(250, 65, 294, 65),
    line(10, 126, 390, 126, 'rule'),
    text(10, 148, 'backward: chain rule, right to left', { cls: 'heading' }),
    node(310, 196, 82, '∂L/∂Y', 'box tone-0'),
    op(122, 162, 152, '∂L/∂W = Xᵀ·∂L/∂Y', '2BDK FLOPs'),
    op(122, 220, 152, '∂L/∂X = ∂L/∂Y·Wᵀ', '2BDK FLOPs'),
    arrow(308, 205, 276, 185),
    arrow(308, 218, 276, 240),
    node(10, 168, 90, 'update W', 'box tone-1'),
    node(10, 226, 90, 'layer below'),
    arrow(120, 183, 102, 183),
    arrow(120, 241, 102, 241),
    text(10, 290, 'forward 2BDK + backward 4BDK = 6BDK', { cls: 'strong' }),
    text(10, 310, '= 6 × tokens (B) × parameters (D·K)', { cls: 'strong' }),
  ].join('');
  return svg(
    320,
    body,
    'One linear layer: the forward pass is one matmul; the backward pass needs two matmuls of the same size, one for the weight gradient and one for the input gradient.',
  );
}

// Which per-GPU state each method divides among its GPUs: "split", "whole" (every GPU keeps it all) or
// "partial" (split in part: TP splits activations inside blocks; PP's first stage holds p micro-batches).
// Activations are one micro-batch's: data parallelism and ZeRO hand each GPU its own, kept whole.
export const SPLITS = [
  ['DDP', ['whole', 'whole', 'whole', 'whole']],
  ['ZeRO-1', ['whole', 'whole', 'split', 'whole']],
  ['ZeRO-2', ['whole', 'split', 'split', 'whole']],
  ['ZeRO-3', ['split', 'split', 'split', 'whole']],
  ['TP', ['split', 'split', 'split', 'partial']],
  ['PP', ['split', 'split', 'split', 'partial']],
];
const COLUMNS = ['weights', 'grads', 'optimizer', 'activations'];

function parallelism() {
  const gpus = 4;
  const x0 = 64,
    colW = 84,
    rowH = 34,
    y0 = 30;
  let body = COLUMNS.map((c, j) => text(x0 + j * colW + (colW - 12) / 2, 20, c, { anchor: 'middle' })).join('');
  SPLITS.forEach(([name, states], i) => {
    const y = y0 + i * rowH;
    body += text(4, y + 20, name, { cls: 'strong' });
    states.forEach((state, j) => {
      const x = x0 + j * colW,
        w = colW - 12;
      if (state === 'whole') {
        for (let g = 0; g < gpus; g++) body += rect(x, y + 4 + g * 6, w, 5, 'bar-whole');
      } else {
        const piece = w / gpus;
        for (let g = 0; g < gpus; g++)
          body += rect(
            x + g * piece,
            y + 4 + g * 6,
            piece * (state === 'partial' ? 2 : 1),
            5,
            `bar-split tone-${g % 3}`,
          );
      }
    });
  });
  const y = y0 + SPLITS.length * rowH + 12;
  body += rect(4, y - 8, 24, 5, 'bar-whole') + text(34, y, 'every GPU keeps all of it');
  body +=
    rect(4, y + 12, 6, 5, 'bar-split tone-0') +
    rect(10, y + 18, 6, 5, 'bar-split tone-1') +
    text(34, y + 22, 'each of 4 GPUs keeps a quarter');
  body += text(4, y + 46, 'optimizer: Adam states + fp32 master weights', { cls: 'muted' });
  body += text(4, y + 64, 'activations: one micro-batch on each GPU', { cls: 'muted' });
  return svg(
    y + 74,
    body,
    'Which training state each method splits across 4 GPUs: ZeRO stages 1, 2 and 3 split optimizer state, then gradients, then weights, and no stage splits a micro-batch’s activations; tensor and pipeline parallelism split all three and part of the activations.',
  );
}

/** The 1F1B pipeline schedule (Narayanan et al., 2021), as the engine simulates it (engine/src/schedule.cpp). */
function pipeline(engine, { stages = 4, microbatches = 8 } = {}) {
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
  body += text(4, y + 44, `${stages} stages, ${microbatches} micro-batches: idle ${(bubble * 100).toFixed(1)}%`, {
    cls: 'strong',
  });
  body += text(4, y + 64, '= (p − 1) / (m + p − 1)', { cls: 'strong' });
  return svg(
    y + 74,
    body,
    `The 1F1B pipeline schedule on ${stages} GPUs with ${microbatches} micro-batches; grey gaps at the start and end are the bubble.`,
  );
}

/** Bit layouts of the main formats, from the engine's format table (sign, exponent, mantissa bits). */
function bitLayouts(engine) {
  const { formats } = engine.call('float_formats', {});
  const wanted = ['fp32', 'bf16', 'fp16', 'e4m3', 'e5m2', 'e2m1'];
  const bitW = (W - 52 - 66) / 32,
    rowH = 30; // room on the right for the bias label
  let body = '';
  wanted.forEach((name, i) => {
    const f = formats.find((x) => x.name === name);
    if (!f) throw new Error(`float_formats has no ${name}`);
    const y = 8 + i * rowH;
    body += text(4, y + 15, name, { cls: 'strong' });
    const parts = [
      ['sign', f.sign_bits, 'tone-1'],
      ['exp', f.exponent_bits, 'tone-0'],
      ['man', f.mantissa_bits, 'tone-2'],
    ];
    let x = 52;
    for (const [label, bits, tone] of parts) {
      if (!bits) continue;
      for (let b = 0; b < bits; b++) body += rect(x + b * bitW, y, bitW, 20, `box ${tone}`);
      // A part is named only where its name fits inside it; the colours and the caption cover the rest.
      const name = `${label} ${bits}`;
      if (name.length * CHAR + 4 < bits * bitW) body += text(x + (bits * bitW) / 2, y + 15, name, { anchor: 'middle' });
      x += bits * bitW;
    }
    body += text(x + 4, y + 15, `bias ${f.bias}`, { cls: 'muted' });
  });
  return svg(
    8 + wanted.length * rowH + 4,
    body,
    'Bit layouts: fp32 1 sign, 8 exponent, 23 mantissa bits; bf16 1, 8, 7; fp16 1, 5, 10; fp8 E4M3 1, 4, 3; E5M2 1, 5, 2; fp4 E2M1 1, 2, 1.',
  );
}

// ------------------------------------------------------------------------------------------ curves

/**
 * A line chart of engine series. series: [{name, points: [[x, y]]}]; hlines: [{y, label}]; marker: {x, y,
 * label} (the state of the widget beside the chart). Series are named in a legend above the plot (wrapped
 * to the width), limits inside the plot above their line, so no label needs a right margin.
 */
export function chart({
  label,
  xLabel,
  yLabel,
  xLog = false,
  yLog = false,
  series,
  hlines = [],
  marker = null,
  height = 250,
  xFormat = String,
  yFormat = String,
}) {
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).concat(hlines.map((h) => h.y));
  if (marker) {
    xs.push(marker.x);
    ys.push(marker.y);
  }
  for (const v of [...xs, ...ys])
    if (!Number.isFinite(v) || ((xLog || yLog) && v <= 0))
      throw new Error(`chart "${label}": value ${v} cannot be plotted`);
  // Legend rows: swatch + name, wrapped to the width.
  let legend = '',
    lx = 4,
    ly = 14;
  series.forEach((s, i) => {
    const w = 22 + s.name.length * CHAR + 14;
    if (lx > 4 && lx + w > W) {
      lx = 4;
      ly += 20;
    }
    legend +=
      line(lx, ly - 4, lx + 16, ly - 4, `series s${i}`) + text(lx + 22, ly, s.name, { cls: `series-label s${i}` });
    lx += w;
  });
  const tx = xLog ? Math.log10 : (v) => v,
    ty = yLog ? Math.log10 : (v) => v;
  const ticks = (lo, hi, log) => {
    if (log) {
      const out = [];
      for (let e = Math.ceil(lo - 1e-9); e <= hi + 1e-9; e++) out.push(10 ** e);
      return out;
    }
    const step = 10 ** Math.floor(Math.log10((hi - lo) / 3));
    const k = (hi - lo) / step > 8 ? step * 2 : step;
    const out = [];
    for (let v = Math.ceil(lo / k) * k; v <= hi + 1e-9; v += k) out.push(v);
    return out;
  };
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)].map(tx);
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)].map(ty);
  if (!yLog) y0 = Math.min(0, y0);
  const pad = (y1 - y0) * 0.06;
  y1 += pad;
  if (yLog) y0 -= pad;
  const yTicks = ticks(y0, y1, yLog);
  // Margins from the widest y label and half the last x label (centred on the right edge).
  const left = 30 + Math.max(...yTicks.map((v) => String(yFormat(v)).length)) * CHAR,
    top = ly + 14,
    bottom = 46;
  const right = Math.max(14, (String(xFormat(Math.max(...xs))).length * CHAR) / 2 + 4);
  const h = height + ly;
  const px = (v) => left + ((tx(v) - x0) / (x1 - x0)) * (W - left - right);
  const py = (v) => top + (1 - (ty(v) - y0) / (y1 - y0)) * (h - top - bottom);
  let body = legend + line(left, top, left, h - bottom, 'axis') + line(left, h - bottom, W - right, h - bottom, 'axis');
  for (const v of yTicks)
    body += line(left, py(v), W - right, py(v), 'grid') + text(left - 4, py(v) + 4, yFormat(v), { anchor: 'end' });
  let xt = xLog
    ? xs.filter((v, i, a) => a.indexOf(v) === i && Number.isInteger(Math.log2(v)) && Math.log2(v) % 2 === 0)
    : ticks(x0, x1, false);
  // Thin the ticks until their labels are a label's width apart.
  const room = (list) =>
    list.every(
      (v, i) =>
        !i ||
        px(v) - px(list[i - 1]) > ((String(xFormat(v)).length + String(xFormat(list[i - 1])).length) * CHAR) / 2 + 6,
    );
  while (xt.length > 2 && !room(xt)) xt = xt.filter((_, i) => i % 2 === 0);
  for (const v of xt) body += text(px(v), h - bottom + 21, xFormat(v), { anchor: 'middle' });
  body += text((left + W - right) / 2, h - 6, xLabel, { anchor: 'middle', cls: 'muted' });
  body += `<text transform="translate(14 ${r1((top + h - bottom) / 2)}) rotate(-90)" text-anchor="middle" class="muted">${esc(yLabel)}</text>`;
  for (const hl of hlines)
    body +=
      line(left, py(hl.y), W - right, py(hl.y), 'limit') + text(left + 6, py(hl.y) - 5, hl.label, { cls: 'muted' });
  series.forEach((s, i) => {
    const d = s.points.map((p, j) => `${j ? 'L' : 'M'}${r1(px(p[0]))},${r1(py(p[1]))}`).join('');
    body += `<path d="${d}" class="series s${i}" fill="none"/>`;
    for (const p of s.points) body += `<circle cx="${r1(px(p[0]))}" cy="${r1(py(p[1]))}" r="2.6" class="dot s${i}"/>`;
  });
  if (marker)
    body += `<circle cx="${r1(px(marker.x))}" cy="${r1(py(marker.y))}" r="6" class="marker"><title>${esc(marker.label)}</title></circle>`;
  return svg(h, body, label);
}

const gb = (v) => `${Number((v / 1e9).toPrecision(3))}`;
const kTokens = (v) => (v >= 1024 ? `${v / 1024}k` : String(v));

const without = (object, keys) => Object.fromEntries(Object.entries(object).filter(([k]) => !keys.includes(k)));
const modelName = (base) => base.model ?? 'the pasted model';

/**
 * Activations against sequence length, with and without FlashAttention. `base`: memory_budget arguments
 * other than seq and flash_attention (the widget's, or the chapter's setup); marker: { seq, flash }.
 */
function activationCurve(
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

/** Memory per GPU against data-parallel GPUs for ZeRO 0 to 3. `base`: memory_budget arguments other than gpus and zero; marker: { gpus, zero }. */
function zeroCurve(
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

/** Days against MFU. `base`: training_cost arguments other than mfu; marker: { mfu }. */
function mfuCurve(
  engine,
  { base = { params: 70e9, tokens: 15e12, hardware: 'h100-sxm', gpus: 1024 }, marker = null } = {},
) {
  const mfus = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
  const args = without(base, ['mfu']);
  const days = (mfu) => engine.call('training_cost', { ...args, mfu }).seconds / 86400; // seconds shown in days
  const what = args.params ? `${args.params / 1e9}B parameters` : args.model;
  return chart({
    label: `Days to train ${what} on ${args.tokens / 1e12}T tokens with ${args.gpus} GPUs, against MFU`,
    xLabel: 'MFU',
    yLabel: 'days',
    series: [{ name: `${args.gpus} GPUs`, points: mfus.map((m) => [m, days(m)]) }],
    xFormat: (v) => `${Math.round(v * 100)}%`,
    yFormat: (v) => String(Math.round(v)),
    marker: marker && {
      x: marker.mfu,
      y: days(marker.mfu),
      label: `the calculator above: MFU ${Math.round(marker.mfu * 1000) / 10}%`,
    },
  });
}

/** Arithmetic intensity of a d × d weight matmul against the tokens in the batch, with the hardware's ridge. */
function intensityCurve(engine, { hardware = 'h100-sxm', d = 8192 } = {}) {
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

/**
 * GPipe, 1F1B, interleaved 1F1B, ZB-H1 and DualPipe on one time axis, as the engine simulates them
 * (engine/src/schedule.cpp): the same bubble for the first two, but GPipe holds every micro-batch's
 * activations; interleaving shortens the bubble v-fold at the price of more in flight and more sends; ZB-H1
 * fills the holes with split-off weight gradients (W); DualPipe runs two directions and overlaps pairs.
 */
function pipelineSchedules(engine, { stages = 4, microbatches = 8, chunks = 2 } = {}) {
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

/**
 * One GPU's step as two lanes, compute above and communication below, laid out by the engine (`overlap`,
 * engine/src/overlap.cpp) for DDP buckets, FSDP prefetch and a tensor-parallel collective matmul, each without
 * and with overlap on one time axis per pair. Grey on the compute lane is waiting: the exposed communication.
 */
function overlapTimeline(engine, { layers = 4, forward_seconds = 2.8e-3, layer_bytes = 404766720 } = {}) {
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

/**
 * Long context: the attention matmuls' share of the forward FLOPs (causal mask) for two widths of model, and the
 * stored softmax output's share of the activations without FlashAttention, against the sequence length.
 */
function attentionVsSeq(engine) {
  const seqs = [1024, 4096, 16384, 65536, 131072];
  const flopShare = (model, seq) => {
    const { components } = engine.call('flops', { model, seq, attention_flops: 'causal' });
    return components
      .filter((c) => c.id === 'attn_scores' || c.id === 'attn_values')
      .reduce((sum, c) => sum + c.share, 0);
  };
  const scoreShare = (seq) => {
    const { activations } = engine.call('memory_budget', { model: 'llama-3-8b', seq, micro_batch: 1 });
    const scores = activations.terms.find((t) => t.id === 'softmax_output');
    return (scores.bytes * activations.layers) / activations.total_bytes;
  };
  return chart({
    label:
      "Attention's share of the forward FLOPs for Llama 3 8B and 405B, and the softmax output's share of Llama 3 8B's activations without FlashAttention, against sequence length",
    xLabel: 'sequence length (tokens, log scale)',
    yLabel: 'share',
    xLog: true,
    xFormat: kTokens,
    yFormat: (v) => `${Math.round(v * 100)}%`,
    series: [
      { name: 'FLOPs, Llama 3 8B', points: seqs.map((s) => [s, flopShare('llama-3-8b', s)]) },
      { name: 'FLOPs, Llama 3 405B', points: seqs.map((s) => [s, flopShare('llama-3-405b', s)]) },
      { name: 'memory, 8B, no FlashAttention', points: seqs.map((s) => [s, scoreShare(s)]) },
    ],
  });
}

/** Expected share of token assignments dropped against the capacity factor, random routing, three mean loads. */
function moeDrops(engine) {
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

/**
 * Goodput (useful share of the wall clock) against the checkpoint interval, Daly (2006)'s complete model from
 * the engine's checkpoint_interval: Llama 3's failure rate (419 unexpected interruptions in 54 days on 16,384
 * GPUs, Dubey et al. 2024), for a slow checkpoint (5 min, restart 10 min: Daly's own example) and a fast one.
 */
function goodputCurve(
  engine,
  {
    failures = { interruptions: 419, days: 54, observed_gpus: 16384 },
    cases = [
      { checkpoint_seconds: 300, restart_seconds: 600 },
      { checkpoint_seconds: 30, restart_seconds: 300 },
    ],
  } = {},
) {
  const minutes = [1, 2, 4, 8, 16, 32, 64, 128, 256]; // powers of 4 get the axis labels
  const at = (c, tau) => engine.call('checkpoint_interval', { ...failures, ...c, interval_seconds: tau * 60 });
  const name = (c) =>
    `write ${c.checkpoint_seconds / 60 >= 1 ? `${c.checkpoint_seconds / 60} min` : `${c.checkpoint_seconds} s`}, restart ${c.restart_seconds / 60} min`;
  const best = at(cases[0], 60);
  const optimum = best.optimum;
  return chart({
    label: `Goodput against the checkpoint interval at one failure every ${best.job_mtbf_hours.toFixed(1)} hours, for a slow and a fast checkpoint`,
    xLabel: 'minutes between checkpoints (log scale)',
    yLabel: 'goodput',
    xLog: true,
    xFormat: (v) => String(v),
    yFormat: (v) => `${Math.round(v * 100)}%`,
    series: cases.map((c) => ({ name: name(c), points: minutes.map((m) => [m, at(c, m).at_interval.efficiency]) })),
    marker: {
      x: optimum.interval_seconds / 60,
      y: optimum.efficiency,
      label: `Daly's optimum: ${Math.round(optimum.interval_seconds / 60)} min, ${Math.round(optimum.efficiency * 100)}%`,
    },
  });
}

const FIGURES = {
  strides,
  matmul,
  backward,
  parallelism,
  pipeline,
  'pipeline-schedules': pipelineSchedules,
  'overlap-timeline': overlapTimeline,
  'attention-vs-seq': attentionVsSeq,
  'moe-drops': moeDrops,
  'bit-layouts': bitLayouts,
  'activations-vs-seq': activationCurve,
  'zero-vs-gpus': zeroCurve,
  'time-vs-mfu': mfuCurve,
  'intensity-vs-tokens': intensityCurve,
  'goodput-vs-interval': goodputCurve,
};
export const FIGURE_NAMES = Object.keys(FIGURES);

/** The SVG of one named figure (engine: { call(method, args) }). Throws for an unknown name. */
export function renderFigure(name, engine, options = {}) {
  const draw = FIGURES[name];
  if (!draw) throw new Error(`unknown figure; known: ${FIGURE_NAMES.join(', ')}`);
  return draw(engine, options);
}
