// <tally-compute>: training FLOPs (6ND and exact), days, GPU-hours and cost, with the Chinchilla point.
//
// Attributes set the starting state (the URL overrides them, see web/state.js):
//   model="llama-3-8b" | params="70e9", tokens="15e12", hardware="h100-sxm" | peak-tflops="989.5",
//   dtype="bf16", gpus="1024", mfu="0.5", price="2" (dollars per GPU-hour), seq="4096"
//   controls="model,tokens,..." (not state: the fields shown outside "More settings", kit/disclosure.js; default: all)
// Every number comes from the engine (training_cost, flops); this module only lays them out.
import {
  TallyWidget,
  showError,
  formatNumber,
  formatDollars,
  formatParams,
  escapeHtml,
  formulaHtml,
  symbolLegend,
  SECONDS_PER_DAY,
  SECONDS_PER_HOUR,
  modelOption,
} from './base.js';
import {
  drawWidth,
  exponentTicks,
  labelRoom,
  linearScale,
  logScale,
  powerLabel,
  powerOfTwoStride,
} from './kit/chart.js';
import { panelHtml } from './kit/shell.js';
import { disclosedControls, disclosureCss, tableControls } from './kit/disclosure.js';
import { trustedHtml } from './kit/trusted.js';

export { formatDollars };

const CUSTOM = 'custom';
/** Only if the engine has no hardware presets (the list normally comes from their dense peaks). */
const FALLBACK_DTYPES = ['bf16'];
const BASES = [
  { value: 'six_nd', label: '6ND' },
  { value: 'exact', label: 'exact matmul FLOPs (needs a model)' },
];
const presetModel = (v) => v.model !== CUSTOM;
const presetGpu = (v) => v.hardware !== CUSTOM;
/**
 * The widget's fields (kit/store.js). A preset model sends its id and seq, a custom one its parameter count; a
 * preset GPU sends its id and dtype, a custom one its peak. Every number field is read (its errors show) either way.
 * The defaults note names basis before seq (table order); the controls show seq beside the tokens (LAYOUT).
 */
const FIELDS = [
  {
    name: 'model',
    kind: 'select',
    label: 'Model',
    options: (w) => [...w.presets.models.map(modelOption), { value: CUSTOM, label: 'Custom parameter count' }],
    // A page that gives a parameter count starts from it.
    fallback: (w) => (w.hasAttribute('params') || !w.presets.models.length ? CUSTOM : w.presets.models[0].id),
    arg: 'model',
    sendWhen: presetModel,
    embed: presetModel,
  },
  {
    name: 'params',
    kind: 'number',
    label: 'Parameters N',
    fallback: '70e9',
    arg: 'params',
    sendWhen: (v) => !presetModel(v),
    embed: (v) => !presetModel(v),
  },
  { name: 'tokens', kind: 'number', label: 'Training tokens D', fallback: '15e12', arg: 'tokens' },
  {
    name: 'hardware',
    kind: 'select',
    label: 'GPU',
    options: (w) => [
      ...w.presets.hardware.map((h) => ({ value: h.id, label: h.name })),
      { value: CUSTOM, label: 'Custom peak FLOP/s' },
    ],
    fallback: (w) =>
      w.hasAttribute('peak-tflops') || !w.presets.hardware.length
        ? CUSTOM
        : (w.presets.hardware.find((h) => h.id === 'h100-sxm') ?? w.presets.hardware[0]).id,
    arg: 'hardware',
    sendWhen: presetGpu,
    embed: presetGpu,
  },
  {
    name: 'dtype',
    kind: 'select',
    label: 'Precision of the matmuls',
    options: (w) => w.dtypes.map((d) => ({ value: d, label: d })),
    fallback: (w) => (w.dtypes.includes('bf16') ? 'bf16' : w.dtypes[0]),
    arg: 'dtype',
    sendWhen: presetGpu,
  },
  {
    name: 'peak_tflops',
    attribute: 'peak-tflops',
    kind: 'number',
    label: 'Dense peak TFLOP/s per GPU',
    fallback: '989.5',
    arg: 'peak_flops_per_s',
    toArg: (tflops) => tflops * 1e12, // TFLOP/s -> FLOP/s (unit only)
    sendWhen: (v) => !presetGpu(v),
    embed: (v) => !presetGpu(v),
  },
  { name: 'gpus', kind: 'number', label: 'GPUs', fallback: '1024', arg: 'gpus' },
  { name: 'mfu', kind: 'number', label: 'MFU (0–1]', fallback: '0.5', percent: true, range: '(0, 1]', arg: 'mfu' },
  { name: 'price', kind: 'number', label: 'Price, $ per GPU-hour', fallback: '2', arg: 'dollars_per_gpu_hour' },
  {
    name: 'basis',
    kind: 'select',
    label: 'Time and cost from',
    options: BASES,
    fallback: 'six_nd',
    arg: 'flops_basis',
    engineDefault: (r) => r.flops_basis,
    why: 'the 6ND rule chapter 3 derives',
  },
  {
    name: 'seq',
    kind: 'number',
    label: 'Sequence length (for exact FLOPs)',
    fallback: '4096',
    arg: 'seq',
    sendWhen: presetModel,
    engineDefault: (r) => r.flops?.seq,
    why: "Llama 2's pretraining context; the engine's default is GPT-3's",
  },
];
const LAYOUT = [
  'model',
  'params',
  'tokens',
  'seq',
  'hardware',
  'dtype',
  'peak_tflops',
  'gpus',
  'mfu',
  'price',
  'basis',
];
/** The result cells, cleared on bad input. */
const RESULTS = [
  { out: 'flops', label: 'Training FLOPs (6ND)', labelOut: 'flops-label' },
  { out: 'exact', label: 'Exact matmul FLOPs' },
  { out: 'days', label: 'Days', labelOut: 'days-label' },
  { out: 'gpu_hours', label: 'GPU-hours' },
  { out: 'cost', label: 'Cost' },
  { out: 'chinchilla', label: 'Chinchilla-optimal tokens' },
];

const css = `
.results .value.small { font-size: 15px; }
.chart { width: 100%; height: auto; display: block; margin-top: 10px; }
.chart .you { fill: var(--accent); }
.chart .chin { fill: var(--ok); }
.chart line.you { stroke: var(--accent); stroke-width: 3; }
.chart line.chin { stroke: var(--ok); stroke-width: 2; stroke-dasharray: 5 3; }
.chart .band { fill: var(--border); }
details { margin-top: 8px; font-size: 14px; }
details summary { cursor: pointer; color: var(--accent); }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid var(--border); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { font-size: 12px; color: var(--muted); }
.formula { font-family: Georgia, 'Times New Roman', serif; }
@media (max-width: 480px) {
  .fields, .results { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .fields .field.wide { grid-column: 1 / -1; }
  .result .value { font-size: 17px; }
}
`;

class TallyCompute extends TallyWidget {
  static fields = FIELDS;

  build() {
    // Without presets the widget still works from raw numbers (params, peak TFLOP/s).
    const presets = this.loadPresets();
    this.presets = { ...presets, models: presets.models ?? [], hardware: presets.hardware ?? [] };
    // The precisions any preset GPU has a dense peak for, in the engine's order (the engine owns the list).
    const dtypes = [...new Set(this.presets.hardware.flatMap((h) => Object.keys(h.peak_flops ?? {})))];
    this.dtypes = dtypes.length ? dtypes : FALLBACK_DTYPES;
    const start = this.declareState('cmp');

    // As when the reader types one, a parameter count or peak the URL gives without a preset detaches its field.
    if (this.urlFields.has('params') && !this.urlFields.has('model')) start.model = CUSTOM;
    if (this.urlFields.has('peak_tflops') && !this.urlFields.has('hardware')) start.hardware = CUSTOM;

    // Every field shows unless the page's `controls` fold some behind "More settings" (kit/disclosure.js).
    const controls = disclosedControls(this, tableControls(this, LAYOUT, start));
    this.shadowRoot.innerHTML = trustedHtml(
      panelHtml({
        css: css + disclosureCss,
        label: 'Training compute, time and cost',
        fields: controls.shown,
        between: controls.more,
        results: RESULTS,
        body: `<p class="status" data-out="moe" hidden></p>
        <svg class="chart" data-out="chart" viewBox="0 0 640 112" role="img" aria-labelledby="cmp-chart-title"><title id="cmp-chart-title">Training tokens against the Chinchilla-optimal count</title></svg>
        <details data-out="components"><summary>Where the FLOPs go, per token (forward pass, all layers)</summary>
          <table><thead><tr><th scope="col">matmul</th><th scope="col" class="num">FLOPs per token</th><th scope="col">formula</th></tr></thead><tbody></tbody></table>
          <p class="status" data-out="symbols"></p>
          <p class="status" data-out="notes"></p>
        </details>`,
      }),
    );
    this.updateOnEdit();
    this.observeChartWidth();
    this.syncPresets(start);
    this.firstUpdate();
  }

  /**
   * Sets controls from state texts (setState, URL reverts). As when the reader types, a parameter count
   * or peak given without a preset detaches its field from the preset.
   */
  applyState(values) {
    for (const [name, value] of Object.entries(values)) this.control(name).value = value;
    if ('params' in values && !('model' in values)) this.control('model').value = CUSTOM;
    if ('peak_tflops' in values && !('hardware' in values)) this.control('hardware').value = CUSTOM;
    this.syncPresets();
  }

  /** A preset's own parameter count or peak replaces the one a link gives beside it. */
  urlOverrideReason(field, state) {
    if (field === 'params' && state.model !== CUSTOM)
      return `the model ${state.model} sets the parameter count (${state.params}); give ${this.key}.model=custom to use your own`;
    if (field === 'peak_tflops' && state.hardware !== CUSTOM)
      return `the GPU ${state.hardware} sets the ${state.dtype} peak (${state.peak_tflops} TFLOP/s); give ${this.key}.hardware=custom to use your own`;
    return super.urlOverrideReason(field, state);
  }

  control(name) {
    return this.shadowRoot.querySelector(`[name="${name}"]`);
  }

  /** Shows a chosen preset's parameter count and dense peak in the number fields (engine data). */
  syncPresets(values = this.values()) {
    const model = this.presets.models?.find((m) => m.id === values.model);
    // Compute uses the parameters a token visits: for a mixture of experts the active count, not the total.
    if (model) this.control('params').value = String(model.params_active ?? model.params_total);
    const hw = this.presets.hardware?.find((h) => h.id === values.hardware);
    if (hw && hw.peak_flops?.[values.dtype] !== undefined)
      this.control('peak_tflops').value = String(hw.peak_flops[values.dtype] / 1e12);
  }

  onEdit(name) {
    // Typing a raw number detaches the field from its preset.
    if (name === 'params') this.control('model').value = CUSTOM;
    if (name === 'peak_tflops') this.control('hardware').value = CUSTOM;
    if (name === 'model' || name === 'hardware' || name === 'dtype') this.syncPresets();
  }

  update() {
    const root = this.beginUpdate();
    const v = this.values();
    const { args, errors } = this.fieldArgs(v);
    const out = (key, text) => this.showOut(key, text);
    const blank = () => {
      for (const { out: key } of RESULTS) out(key, '—');
      root.querySelector('[data-out="chart"]').replaceChildren();
      this.result = null;
      this.chartArgs = null;
      this.showWarnings([]);
    };
    if (this.showFieldErrors(errors)) return blank();
    if (v.model === CUSTOM && v.basis === 'exact') {
      // The engine's "flops_basis exact needs a model" is for API callers; the reader gets the way out.
      const message = 'Exact FLOPs are counted layer by layer, so they need a model: choose one above, or use 6ND.';
      showError(root, 'basis', message);
      this.lastError = { field: 'basis', message };
      blank();
      return;
    }
    const cost = this.callEngine('training_cost', args);
    if (!cost) return blank();
    const flops = cost.flops ?? null; // with a model, training_cost answers the flops breakdown in the same call
    this.result = { args, cost, flops };
    this.noteEngineDefaults('training_cost', args, this.engineDefaultFields);
    this.showWarnings([...(cost.warnings ?? []), ...(flops?.warnings ?? [])]);
    // 6ND with N = the parameters a token visits (active for a mixture of experts): the engine's training_cost.six_nd.
    const moe = flops && flops.params_active !== flops.params_total;
    out('flops', formatNumber(cost.six_nd));
    out('flops-label', moe ? 'Training FLOPs (6ND, N = active)' : 'Training FLOPs (6ND)');
    const ratio = moe ? flops.ratio_exact_to_six_nd_active : flops?.ratio_exact_to_six_nd;
    out('exact', flops ? `${formatNumber(flops.model_flops)} (${formatNumber(ratio, 3)}× 6ND)` : 'choose a model');
    const note = root.querySelector('[data-out="moe"]');
    note.hidden = !moe;
    note.textContent = moe
      ? `Mixture of experts: compute (6ND, days, cost) uses the ${formatParams(flops.params_active)} active parameters each token visits; memory stores all ${formatParams(flops.params_total)}.`
      : '';
    root.querySelector('[data-out="exact"]').classList.toggle('small', true);
    out('days', formatNumber(cost.seconds / SECONDS_PER_DAY, 4));
    out('days-label', cost.flops_basis === 'exact' ? 'Days (exact FLOPs)' : 'Days (6ND)');
    out('gpu_hours', formatNumber(cost.gpu_seconds / SECONDS_PER_HOUR));
    out('cost', cost.cost_dollars !== undefined ? formatDollars(cost.cost_dollars) : '—');
    const chin = cost.chinchilla_tokens ?? flops?.chinchilla_tokens;
    out('chinchilla', chin !== undefined ? formatNumber(chin) : '—'); // the label says "tokens"
    // The engine reports the Chinchilla point only when it knows it; without it the card stays hidden.
    root.querySelector('[data-out="chinchilla"]').closest('.result').hidden = chin === undefined;
    this.chartArgs = [args.tokens, chin, cost.tokens_per_param];
    this.drawChart(...this.chartArgs);
    this.renderComponents(flops);
  }

  drawChart(tokens, chin, ratio) {
    const svg = this.shadowRoot.querySelector('[data-out="chart"]');
    // Drawn in the chart's own pixel width (observeWidth) so text stays 12 px on a phone instead of shrinking.
    const W = drawWidth(this.shownWidth(svg), { min: 300 }),
      left = 16,
      right = 16,
      y = 40;
    svg.setAttribute('viewBox', `0 0 ${W} 112`);
    const values = [tokens, chin].filter((t) => t > 0);
    const lo = Math.floor(Math.log10(Math.min(...values))) - 1;
    const hi = Math.ceil(Math.log10(Math.max(...values))) + 1;
    const x = logScale([lo, hi], [left, W - right]);
    // Ticks sit by exponent (10^e underflows to 0 below 1e-323) and thin out so labels never overlap.
    const atExponent = linearScale([lo, hi], [left, W - right]);
    const ticks = exponentTicks(lo, hi, powerOfTwoStride(hi - lo, labelRoom(W - left - right, 40)));
    const label = (e) => powerLabel(10, e);
    const marker = (t, cls, text, above) => {
      const px = x(t);
      const anchor = px > W * 0.8 ? 'end' : px < W * 0.2 ? 'start' : 'middle';
      return `<line class="${cls}" x1="${px.toFixed(1)}" x2="${px.toFixed(1)}" y1="${y - 14}" y2="${y + 14}"/>
        <text class="${cls}" x="${px.toFixed(1)}" y="${above ? y - 20 : y + 30}" text-anchor="${anchor}">${escapeHtml(text)}</text>`;
    };
    svg.innerHTML =
      trustedHtml(`<title id="cmp-chart-title">Training tokens (${escapeHtml(formatNumber(tokens))}) against the Chinchilla-optimal count${chin ? ` (${escapeHtml(formatNumber(chin))})` : ''}, log scale</title>
      <rect class="band" x="${left}" y="${y - 2}" width="${W - left - right}" height="4" rx="2"/>
      ${ticks.map((e) => `<text x="${atExponent(e).toFixed(1)}" y="${y + 48}" text-anchor="middle">${label(e)}</text>`).join('')}
      ${chin ? marker(chin, 'chin', 'Chinchilla-optimal', false) : ''}
      ${marker(tokens, 'you', `your run${ratio ? `: ${formatNumber(ratio, 3)} tokens/param` : ''}`, true)}
      <text x="${left}" y="${y + 66}" text-anchor="start">training tokens D (log scale)</text>`);
  }

  renderComponents(flops) {
    const details = this.shadowRoot.querySelector('[data-out="components"]');
    details.hidden = !flops;
    if (!flops) return;
    // The table is per token, so it shows the engine's per-token formulas (the per-sequence ones have an extra s).
    const components = flops.components ?? [];
    details.querySelector('tbody').innerHTML = trustedHtml(
      components
        .map(
          (c) => `<tr><td>${escapeHtml(c.name ?? c.id)}</td>
      <td class="num">${escapeHtml(formatNumber(c.forward_per_token))}</td><td class="formula">${formulaHtml(c.formula_per_token ?? '')}</td></tr>`,
        )
        .join(''),
    );
    const m = flops.model ?? {};
    const legend = symbolLegend(
      components.map((c) => c.formula_per_token ?? ''),
      {
        s: ['sequence length', flops.seq],
        h: ['hidden size', m.hidden_size],
        a: ['attention heads', m.num_heads],
        d: ['head dimension', m.head_dim],
        n_kv: ['key-value heads', m.num_kv_heads],
        f: ['MLP width', m.ffn_hidden_size],
        L: ['layers', m.num_layers],
        V: ['vocabulary size', m.vocab_size],
        E: ['experts', m.num_experts],
        k: ['experts each token visits', m.experts_per_token],
        shared: ['shared experts', m.num_shared_experts],
      },
    );
    details.querySelector('[data-out="symbols"]').innerHTML = trustedHtml(legend.html);
    details.querySelector('[data-out="notes"]').textContent = (flops.notes ?? []).join(' ');
  }
}

TallyCompute.define('tally-compute');
