// <tally-inference>: serving one model on one accelerator. KV cache and weights, the memory-bound decode
// rate, the compute-bound prefill rate, and latency against throughput as the batch grows, with the batch
// where a decode step turns compute-bound.
//
// Attributes set the starting state (the URL overrides them, see web/state.js):
//   model="llama-3-8b", hardware="h100-sxm", batch="8", context="4096", kv-dtype="bf16", weights-dtype="bf16",
//   kv-heads="8"
//   controls="model,..." (not state: the fields shown outside "More settings", kit/disclosure.js; default: all)
// Every number comes from the engine (inference, model); this module only lays them out. Grouped-query
// attention is set by handing the engine the preset's config with a different num_kv_heads. The table under
// the results is the engine's kv_layers: what one layer of each kind (full or windowed attention, K/V or an
// MLA latent) holds per token and how many tokens it keeps. What fits is the engine's verdict against the GPU's usable
// bytes: a batch (or model) that does not fit shows no rates, and the curve (the engine's sweep) ends at the most that fit.
import { TallyWidget, showError, formatNumber, formatBytes, escapeHtml, modelOption, presetSelect } from './base.js';
import { drawWidth, labelRoom, logAxis, logScale } from './kit/chart.js';
import { panelHtml } from './kit/shell.js';
import { disclosedControls, disclosureCss, tableControls } from './kit/disclosure.js';
import { trustedHtml } from './kit/trusted.js';

/**
 * The widget's fields (kit/store.js). The model goes to the engine as its config with kv_heads as num_kv_heads
 * (update()); a kv_heads left empty is the model's own.
 */
const FIELDS = [
  presetSelect('model', 'Model', 'models', 'llama-3-8b', { options: (w) => w.models.map(modelOption) }),
  presetSelect('hardware', 'GPU', 'hardware', 'h100-sxm', { arg: 'hardware' }),
  {
    name: 'batch',
    kind: 'number',
    label: 'Batch (sequences)',
    fallback: '8',
    arg: 'batch',
    engineDefault: (e) => e.batch,
    why: 'a few sequences at once, where decoding starts to share its weight reads',
  },
  { name: 'context', kind: 'number', label: 'Context (tokens)', fallback: '4096', arg: 'context' },
  {
    name: 'kv_dtype',
    kind: 'select',
    label: 'KV cache format',
    options: (w) =>
      w.kvDtypes.map((d) => ({ value: d.id, label: `${d.id}, ${d.bytes} ${d.bytes === 1 ? 'byte' : 'bytes'}` })),
    fallback: 'bf16',
    arg: 'kv_dtype',
  },
  {
    name: 'weights_dtype',
    kind: 'select',
    label: 'Weights format',
    // The same storage table as the KV cache: bf16 as trained, fp8, or block-scaled 4-bit (mxfp4 as gpt-oss ships
    // its experts, nvfp4), each with its scales' bytes.
    options: (w) =>
      w.kvDtypes.map((d) => ({
        value: d.id,
        label: `${d.id}, ${d.bytes} ${d.bytes === 1 ? 'byte' : 'bytes'} a weight`,
      })),
    fallback: 'bf16',
    arg: 'weights_dtype',
  },
  { name: 'kv_heads', kind: 'number', label: 'KV heads (GQA)', fallback: '', arg: 'num_kv_heads' },
];
/** The widget field an engine error belongs to: its own, kv_heads for the model's KV heads and anything else. */
function fieldOfArg(arg) {
  return (
    ({ 'model.num_kv_heads': 'kv_heads' }[arg] ?? FIELDS.find((f) => f.name === arg || f.arg === arg)?.name) ||
    'kv_heads'
  );
}
/** An exact whole number (values, layers, tokens, bytes) with thousands separators. Display only. */
const count = (n) => n.toLocaleString('en-US');
const RESULTS = [
  { out: 'kv', label: 'KV cache (whole batch)' },
  { out: 'weights', label: 'Weights' },
  { out: 'fits', label: 'Fits on one GPU?' },
  { out: 'decode', label: 'Decode, whole batch (tokens/s)' },
  { out: 'per_seq', label: 'Decode, per sequence (tokens/s)' },
  { out: 'prefill', label: 'Prefill at peak (tokens/s)' },
  { out: 'crossover', label: 'Compute-bound from batch' },
  { out: 'max_batch', label: 'Sequences that fit' },
];

const css = `
.chart { width: 100%; height: auto; display: block; margin-top: 10px; }
.chart[hidden] { display: none; }
.chart .axis { stroke: var(--muted); }
.chart .grid { stroke: var(--border); }
.chart path.lat { stroke: var(--accent); stroke-width: 2; fill: none; }
.chart circle.lat { fill: var(--accent); }
.chart circle.cmp { fill: var(--bg); stroke: var(--accent); stroke-width: 1.5; }
.chart .cross { stroke: var(--ok); stroke-dasharray: 5 3; stroke-width: 1.5; }
.chart text { fill: var(--fg); font-size: 11px; }
.chart text.muted { fill: var(--muted); }
.chart .you { fill: none; stroke: var(--fg); stroke-width: 1.5; }
.kv-wrap { margin-top: 12px; overflow-x: auto; }
.fit-note:empty { display: none; }
.fit-note { margin: 8px 0; padding: 6px 10px; border-left: 3px solid var(--warn); font-size: 14px; }
.kv-layers { border-collapse: collapse; width: 100%; font-size: 14px; }
.kv-layers caption { text-align: left; font-size: 13px; color: var(--muted); padding-bottom: 4px; }
.kv-layers th, .kv-layers td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--border); vertical-align: top; }
.kv-layers th { font-weight: 600; font-size: 13px; color: var(--muted); }
.kv-layers td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
@media (max-width: 480px) {
  .fields, .results { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .result .value { font-size: 17px; }
  .kv-layers { font-size: 13px; }
}
`;

class TallyInference extends TallyWidget {
  static fields = FIELDS;

  build() {
    // The selects stay empty and the engine error shows below.
    const presets = this.loadPresets();
    this.presets = presets;
    this.models = presets.models ?? [];
    this.hardware = presets.hardware ?? [];
    // The engine's dtype table: the storage types a KV cache can hold ("none" is for absent classes only).
    this.kvDtypes = (presets.dtypes ?? []).filter(
      (d) => d.roles?.includes('storage') && d.id !== 'none' && d.bytes > 0,
    );
    const start = this.declareState('inf');
    // Without a kv-heads attribute (or URL value) the model's own number of KV heads is the start.
    if (!this.defaults.kv_heads) this.defaults.kv_heads = this.modelKvHeads(this.defaults.model);
    if (!start.kv_heads) start.kv_heads = this.modelKvHeads(start.model);

    // Every field shows unless the page's `controls` fold some behind "More settings" (kit/disclosure.js).
    const controls = disclosedControls(
      this,
      tableControls(
        this,
        FIELDS.map((f) => f.name),
        start,
      ),
    );
    this.shadowRoot.innerHTML = trustedHtml(
      panelHtml({
        css: css + disclosureCss,
        label: 'Serving a model: memory, decode and prefill rates',
        fields: controls.shown,
        between: controls.more,
        afterNotice: '<p class="fit-note" data-out="fit_note" role="status"></p>',
        results: RESULTS,
        body: `<div class="kv-wrap">
          <table class="kv-layers" data-out="layers">
            <caption>What the KV cache holds, by kind of layer (one sequence)</caption>
            <thead><tr><th scope="col">Layers</th><th scope="col">Each keeps per token</th><th scope="col" class="num">Bytes a token, one layer</th><th scope="col" class="num">Tokens kept</th><th scope="col" class="num">Cache, these layers</th></tr></thead>
            <tbody></tbody>
          </table>
        </div>
        <p class="status" data-out="kv_note"></p>
        <svg class="chart" data-out="chart" viewBox="0 0 640 240" role="img"><title>Latency per token against throughput as the batch grows</title></svg>
        <p class="status" data-out="note"></p>`,
      }),
    );
    this.updateOnEdit();
    this.observeChartWidth();
    this.firstUpdate();
  }

  /** The preset's tally config (engine `model` method), cached per id. */
  modelConfig(id) {
    this.configs ??= new Map();
    if (!this.configs.has(id)) {
      try {
        this.configs.set(id, this.engine.call('model', { model: id }).model);
      } catch {
        this.configs.set(id, null);
      }
    }
    return this.configs.get(id);
  }

  /** The model's own number of KV heads as field text ('' for an unknown model). */
  modelKvHeads(id) {
    return String(this.modelConfig(id)?.num_kv_heads ?? '');
  }

  /** Sets controls from state texts (setState, URL reverts); a new model without kv_heads brings its own. */
  applyState(values) {
    for (const [name, value] of Object.entries(values)) this.control(name).value = value;
    if ('model' in values && !('kv_heads' in values)) this.control('kv_heads').value = this.modelKvHeads(values.model);
  }

  /** A refused KV-head count (or model) goes back to the shown model's own KV heads, which the engine accepts. */
  revertField(field) {
    this.applyState({ [field]: this.defaults[field] });
    if (field === 'kv_heads') this.control('kv_heads').value = this.modelKvHeads(this.control('model').value);
  }

  control(name) {
    return this.shadowRoot.querySelector(`[name="${name}"]`);
  }

  values() {
    const values = super.values();
    // An empty KV-heads field means the model's own (shown as its placeholder), not an error.
    if (values.kv_heads.trim() === '') values.kv_heads = this.modelKvHeads(values.model);
    return values;
  }

  onEdit(name) {
    // A new model starts from its own number of KV heads.
    if (name === 'model') this.control('kv_heads').value = this.modelKvHeads(this.control('model').value);
  }

  update() {
    const root = this.beginUpdate();
    const v = this.values();
    this.control('kv_heads').placeholder = this.modelKvHeads(v.model);
    const out = (key, text) => this.showOut(key, text);
    const blank = () => {
      for (const { out: key } of RESULTS) out(key, '—');
      root.querySelector('[data-out="layers"] tbody').replaceChildren();
      out('kv_note', '');
      out('fit_note', '');
      root.querySelector('[data-out="chart"]').replaceChildren();
      out('note', '');
      this.result = null;
      this.chartArgs = null;
      this.showWarnings([]);
    };
    const { args, errors } = this.fieldArgs(v);
    if (this.showFieldErrors(errors)) return blank();
    const config = this.modelConfig(v.model);
    if (!config) {
      showError(root, 'model', `unknown model "${v.model}"`);
      this.lastError = { field: 'model', message: `unknown model "${v.model}"` };
      blank();
      return;
    }
    // The engine validates num_kv_heads (a divisor of the query heads) and names the field.
    const { num_kv_heads, ...rest } = args;
    this.inferenceArgs = { model: { ...config, num_kv_heads }, ...rest };
    const r = this.callEngine('inference', this.inferenceArgs, fieldOfArg);
    if (!r) return blank();
    this.result = r;
    this.showWarnings(r.warnings);
    this.noteEngineDefaults('inference', this.inferenceArgs, this.engineDefaultFields);
    out('kv', formatBytes(r.kv_cache_bytes));
    out('weights', formatBytes(r.weights_bytes));
    out('fits', r.fits ? `yes (${formatBytes(r.total_bytes)})` : `no: ${formatBytes(r.total_bytes)}`);
    out('max_batch', formatNumber(r.max_batch));
    this.drawLayers(r);
    const gpu = this.hardware.find((h) => h.id === v.hardware)?.name ?? v.hardware;
    // Nothing fits, or not this batch: no throughput is shown for a server that cannot run (the engine's verdict).
    if (r.max_batch === 0 || !r.fits) {
      const nothing = r.max_batch === 0;
      for (const key of ['decode', 'per_seq']) out(key, 'does not fit');
      out('prefill', nothing ? 'does not fit' : formatNumber(r.prefill_tokens_per_s));
      out('crossover', nothing ? '—' : this.crossoverText(r));
      out(
        'fit_note',
        nothing
          ? `Does not fit: the weights alone (${formatBytes(r.weights_bytes)}) exceed the usable ${formatBytes(r.usable_bytes)} of one ${gpu}, so no sequence fits and there is no throughput to show. Choose a smaller model or a GPU with more memory.`
          : `Does not fit: ${formatNumber(args.batch)} sequences of ${formatNumber(args.context)} tokens need ${formatBytes(r.total_bytes)} with the weights, over the usable ${formatBytes(r.usable_bytes)} of one ${gpu}; at most ${formatNumber(r.max_batch)} fit, and the chart ends there.`,
      );
    } else {
      out('decode', `${formatNumber(r.decode.tokens_per_s)} (${r.decode.bound}-bound)`);
      out('per_seq', formatNumber(r.decode.per_sequence_tokens_per_s));
      out('prefill', formatNumber(r.prefill_tokens_per_s));
      out('crossover', this.crossoverText(r));
      out('fit_note', '');
    }
    out(
      'note',
      r.max_batch === 0
        ? ''
        : r.crossover_batch_whole
          ? `Below a batch of ${formatNumber(r.crossover_batch_whole)} every step waits on memory, so adding sequences is nearly free; above it the step is compute-bound and each sequence slows down in proportion.`
          : r.crossover_reason
            ? `At this context ${r.crossover_reason}.`
            : '',
    );
    this.chartArgs = [r, args.batch];
    this.drawChart(r, args.batch);
  }

  /** The crossover batch, or why there is none, and whether it lies beyond what fits. */
  crossoverText(r) {
    if (!r.crossover_batch_whole) return 'never at this context';
    const text = formatNumber(r.crossover_batch_whole);
    return r.crossover_batch_whole > r.max_batch ? `${text} (more than fit)` : text;
  }

  /** The engine's kv_layers as rows, and a sentence on what a latent or a window does to the cache. */
  drawLayers(r) {
    const root = this.shadowRoot;
    const slidingWindow = r.model.sliding_window;
    const rows = r.kv_layers.map((g) => {
      const kind =
        g.kind === 'windowed'
          ? `windowed (last ${count(slidingWindow)} tokens)`
          : g.kind === 'cross'
            ? 'cross-attention'
            : g.kind === 'linear_attention'
              ? `linear attention (${r.model.linear_kind === 'kda' ? 'Kimi Delta Attention' : 'gated DeltaNet'})`
              : g.kind === 'mamba'
                ? `Mamba-${r.model.mamba_version === 1 ? 1 : 2}`
                : 'full attention';
      const holds = g.recurrent
        ? `a fixed state of ${count(g.state_values)} values per sequence (conv window + recurrent state)`
        : g.latent
          ? `latent ${count(g.value_values)} + RoPE key ${count(g.key_values)} values (per-head K and V: ${count(g.mha_values)})`
          : `K ${count(g.key_values)} + V ${count(g.value_values)} values (without GQA: ${count(g.mha_values)})`;
      const tr = document.createElement('tr');
      tr.dataset.kind = g.kind;
      tr.innerHTML = trustedHtml(
        `<td>${escapeHtml(`${count(g.layers)} ${kind}`)}</td><td data-col="holds">${escapeHtml(holds)}</td><td class="num" data-col="bytes_per_layer_token">${escapeHtml(count(g.bytes_per_layer_token))} B</td><td class="num" data-col="tokens">${escapeHtml(count(g.tokens))}</td><td class="num" data-col="bytes_per_sequence">${escapeHtml(formatBytes(g.bytes_per_sequence))}</td>`,
      );
      return tr;
    });
    root.querySelector('[data-out="layers"] tbody').replaceChildren(...rows);
    const latent = r.kv_layers.find((g) => g.latent);
    const windowed = r.kv_layers.find((g) => g.kind === 'windowed');
    const full = r.kv_layers.find((g) => g.kind === 'full');
    const notes = [];
    if (latent)
      notes.push(
        `Latent attention: every head rebuilds its K and V from one shared latent, so a layer caches ${count(latent.value_values)} + ${count(latent.key_values)} values per token instead of ${count(latent.mha_values)}.`,
      );
    if (windowed && full && windowed.tokens < r.context)
      notes.push(
        `The ${count(windowed.layers)} windowed layers stopped growing at ${count(windowed.tokens)} tokens: each new token adds ${count(full.bytes_per_token)} B (the full layers) instead of ${count(r.kv_bytes_per_token)} B.`,
      );
    else if (windowed && windowed.tokens < r.context)
      notes.push(
        `Every layer is windowed: the cache stopped growing at ${count(windowed.tokens)} tokens, however long the context.`,
      );
    else if (windowed && full)
      notes.push(
        `Up to ${count(slidingWindow)} tokens the windowed layers grow like the others; past it they keep only the last ${count(slidingWindow)}.`,
      );
    const recurrent = r.kv_layers.filter((g) => g.recurrent);
    if (recurrent.length > 0)
      notes.push(
        `${count(recurrent.reduce((n, g) => n + g.layers, 0))} recurrent layers hold a state of ${formatBytes(recurrent.reduce((n, g) => n + g.bytes_per_sequence, 0))} per sequence whatever the context; only the attention layers grow with it.`,
      );
    root.querySelector('[data-out="kv_note"]').textContent = notes.join(' ');
  }

  /** Latency per token (y) against total tokens per second (x), one dot per batch of the engine's sweep. */
  drawChart(r, batch) {
    const svg = this.shadowRoot.querySelector('[data-out="chart"]');
    // The engine's sweep ends at the largest batch that fits; when nothing fits there is no curve to draw.
    svg.toggleAttribute('hidden', r.sweep.length === 0);
    if (r.sweep.length === 0) {
      svg.replaceChildren();
      return;
    }
    const points = r.sweep.map((s) => ({ x: s.tokens_per_s, y: s.step_seconds * 1e3, s })); // one token per step: ms per token
    // Drawn at its shown width (viewBox units = CSS px) down to 280 px, so its 11 px text stays 11 px at a 320 px screen.
    const W = drawWidth(this.shownWidth(svg), { min: 280 }),
      H = 240,
      left = 52,
      right = 16,
      top = 14,
      bottom = 42;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const xs = points.map((p) => Math.log10(p.x)),
      ys = points.map((p) => Math.log10(p.y));
    // At least three labelled ticks per axis (chart.js logAxis widens a narrow range), as many as fit without overlap.
    const xAxis = logAxis(Math.min(...xs) - 0.05, Math.max(...xs) + 0.05, {
      room: labelRoom(W - left - right, 56),
    });
    const yAxis = logAxis(Math.min(...ys) - 0.05, Math.max(...ys) + 0.1, { room: labelRoom(H - top - bottom, 18) });
    const px = logScale([xAxis.lo, xAxis.hi], [left, W - right]);
    const py = logScale([yAxis.lo, yAxis.hi], [H - bottom, top]);
    const last = points.at(-1).s.batch;
    let body = `<title>Latency per token against total throughput for batch 1 to ${last} (the most that fit), log scales</title>`;
    for (const t of yAxis.ticks)
      body += `<line class="grid" x1="${left}" x2="${W - right}" y1="${py(t).toFixed(1)}" y2="${py(t).toFixed(1)}"/><text class="ytick" x="${left - 6}" y="${(py(t) + 4).toFixed(1)}" text-anchor="end">${escapeHtml(formatNumber(t))}</text>`;
    for (const t of xAxis.ticks)
      body += `<text class="xtick" x="${px(t).toFixed(1)}" y="${H - bottom + 16}" text-anchor="middle">${escapeHtml(formatNumber(t))}</text>`;
    body += `<line class="axis" x1="${left}" x2="${left}" y1="${top}" y2="${H - bottom}"/><line class="axis" x1="${left}" x2="${W - right}" y1="${H - bottom}" y2="${H - bottom}"/>`;
    body += `<path class="lat" d="${points.map((p, i) => `${i ? 'L' : 'M'}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join('')}"/>`;
    for (const p of points) {
      body += `<circle class="${p.s.bound === 'memory' ? 'lat' : 'cmp'}" data-batch="${p.s.batch}" cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3.5"><title>batch ${p.s.batch}: ${escapeHtml(formatNumber(p.x))} tokens/s, ${escapeHtml(formatNumber(p.y))} ms per token (${p.s.bound}-bound)</title></circle>`;
      // Every fourth power of two is labelled, and the last point (the most that fit) always.
      if (Number.isInteger(Math.log2(p.s.batch) / 2) || p.s.batch === last)
        body += `<text class="muted" x="${(px(p.x) + 5).toFixed(1)}" y="${(py(p.y) - 6).toFixed(1)}" text-anchor="${p.s.batch === last ? 'end' : 'start'}">${p.s.batch === last ? `b=${last}, the most that fit` : `b=${p.s.batch}`}</text>`;
    }
    // The ring marks the reader's batch only where it fits: past the end of the curve there is no such server.
    if (batch <= last) {
      const here = r.decode;
      body += `<circle class="you" cx="${px(here.tokens_per_s).toFixed(1)}" cy="${py(here.step_seconds * 1e3).toFixed(1)}" r="7"><title>your batch ${batch}</title></circle>`;
    }
    body += `<text x="${(left + W - right) / 2}" y="${H - 8}" text-anchor="middle" class="muted">${W < 520 ? 'tokens/s, whole batch (log)' : 'throughput, tokens/s for the whole batch (log) · filled: memory-bound, open: compute-bound'}</text>`;
    body += `<text transform="translate(14 ${(top + H - bottom) / 2}) rotate(-90)" text-anchor="middle" class="muted">ms per token (log)</text>`;
    svg.innerHTML = trustedHtml(body);
  }
}

TallyInference.define('tally-inference');
